//! A handle on the running application, for handlers and background tasks.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::command::Command;
use crate::session::Input;
use crate::websocket::{SendRecorder, WsSender};

/// Talks to the running application from anywhere: a handler (through
/// [`crate::Context::app`]) or a background task (from [`crate::App::handle`]
/// before `run`). Cloning is cheap.
///
/// Requests made before the stream is serving wait for it; requests made
/// after it has ended are dropped.
#[derive(Clone, Debug)]
pub struct AppHandle {
    commands: mpsc::UnboundedSender<Command>,
    /// Under `celerity::testing`, where WebSocket sends go instead of the
    /// stream.
    recorder: Option<Arc<dyn SendRecorder>>,
}

impl AppHandle {
    pub(crate) fn new(commands: mpsc::UnboundedSender<Command>) -> Self {
        AppHandle { commands, recorder: None }
    }

    /// A handle whose WebSocket senders record their sends in `recorder`.
    pub(crate) fn recording(commands: mpsc::UnboundedSender<Command>, recorder: Arc<dyn SendRecorder>) -> Self {
        AppHandle { commands, recorder: Some(recorder) }
    }

    /// Asks the runtime to stop dispatching to this process, when the
    /// application knows it is saturated for reasons the runtime cannot see.
    /// The next result carries a credit grant of zero; events in flight still
    /// finish and are answered. Undo with [`AppHandle::resume`].
    pub fn withhold(&self) {
        self.input(Input::Withhold);
    }

    /// Ends a [`AppHandle::withhold`]: a `CreditGrant` gives back the place it
    /// took and the runtime dispatches again.
    pub fn resume(&self) {
        self.input(Input::Resume);
    }

    /// Sets how many events may be in flight to this process at once (at
    /// least one). Growing sends a `CreditGrant` at once; shrinking withholds
    /// the grants of the next results until the window is the new size.
    /// While a [`AppHandle::withhold`] is in force the new size waits for
    /// [`AppHandle::resume`], so a resize never ends a deliberate withhold.
    /// Called before the handshake, it sets the credit declared in `Ready`.
    pub fn set_concurrency(&self, window: u32) {
        self.input(Input::Resize(window));
    }

    /// Asks the application to stop as on SIGTERM: tell the runtime it is
    /// draining, finish what it holds, and end `run` with `Ok`. Asking again
    /// changes nothing (unlike a second signal, which stops at once).
    pub fn shutdown(&self) {
        self.input(Input::Stop);
    }

    /// A sender of WebSocket messages, for background tasks.
    pub fn ws(&self) -> WsSender {
        self.ws_for(None)
    }

    /// A sender of WebSocket messages made for the event `event_id`.
    pub(crate) fn ws_for(&self, event_id: Option<Arc<str>>) -> WsSender {
        match &self.recorder {
            Some(recorder) => WsSender::recorded(self.commands.clone(), Arc::clone(recorder), event_id),
            None => WsSender::new(self.commands.clone()),
        }
    }

    /// The channel to the driver, which handler completions share with the
    /// application's requests: one channel keeps a handler's requests ahead
    /// of its own completion (a `withhold` then `return` withholds on that
    /// very result).
    pub(crate) fn commands(&self) -> mpsc::UnboundedSender<Command> {
        self.commands.clone()
    }

    fn input(&self, input: Input) {
        let _ = self.commands.send(Command::Input(input));
    }
}
