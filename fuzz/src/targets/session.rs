//! The protocol core fed arbitrary scenarios: dispatches well-formed and
//! not (beyond the credit window and the caps, unknown tags, empty,
//! duplicate and over-long ids, any deadline), raw frames of any shape
//! decoded from the bytes, completions (ok, error, panic, too large for a
//! frame, late), cancels, the clock, withholds and resizes, drains, signals,
//! the stream ending, WebSocket sends and their acknowledgements. The
//! model's invariants are checked after every step.

use crate::session_model::Scenario;

pub fn run(data: &[u8]) {
    Scenario::from_bytes(data).run();
}
