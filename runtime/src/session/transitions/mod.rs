//! The session's transitions, one file per kind of input: what each input
//! does to the state, and the actions it asks for. [`super::Session::handle`]
//! routes every input to one of them.

mod cancel;
mod completion;
mod dispatch;
mod drain;
mod handshake;
mod stream_end;
mod timers;
mod undecodable;
mod ws_send;
