//! Conformance tests of the celerity SDK's flow-control and lifecycle rules.
//!
//! The binary `protocol-app` serves handlers that exercise each rule (answer
//! at once, sleep with or without honouring cancellation, block their thread,
//! panic, fail, withhold and resume credit, resize the window, run under a
//! per-tag cap, answer with a large body, consume a batch, run behind a
//! layer that takes time or panics); the tests in `tests/` drive it through the testkit's runtime
//! over a real Unix socket. See `CONFORMANCE.md` at the workspace root.

/// Every tag `protocol-app` serves, with the blueprint handler name the
/// tests declare it under.
pub const HANDLERS: &[(&str, &str)] = &[
    ("fast", "GET::/fast"),
    ("sleep", "GET::/sleep"),
    ("block", "GET::/block"),
    ("panic", "GET::/panic"),
    ("error", "GET::/error"),
    ("deadline", "GET::/deadline"),
    ("withhold", "GET::/withhold"),
    ("resize", "GET::/resize"),
    ("capped", "GET::/capped"),
    ("shutdown", "GET::/shutdown"),
    ("wsSend", "POST::/ws/send"),
    ("wsFanout", "POST::/ws/fanout"),
    ("big", "GET::/big"),
    ("paint", "POST::/paint"),
    ("consume", "source::faults::consume"),
    ("layeredSleep", "GET::/layered/sleep"),
    ("layeredPanic", "GET::/layered/panic"),
];

/// The per-tag cap of `GET::/capped`.
pub const CAPPED_MAX: u32 = 1;
