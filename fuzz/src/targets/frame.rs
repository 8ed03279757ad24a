//! The Celerity Binary Message Format decoder on arbitrary bytes: it never
//! panics, its two entry points agree, and whatever decodes re-encodes to
//! the same bytes.

pub fn run(data: &[u8]) {
    celerity::websocket::frame::decode_invariants(data);
}
