//! Property test of the protocol core: random interleavings of dispatches
//! (known and unknown tags, duplicate and empty ids, beyond the credit
//! window and per-tag caps), completions (ok, error, panic, late), cancels
//! (for held, finished and unknown ids), time passing deadlines and graces,
//! withholds, resumes and resizes (before and after the handshake), the
//! runtime's `Drain`, shutdown signals (once or twice), the application's
//! stop, and the stream ending.
//!
//! The model (`tests/model/mod.rs`, shared with the fuzz target `session`
//! and the corpus replay) reads every frame the session sends, exactly as
//! the runtime does, and after every step the test checks:
//! - every dispatch is answered exactly once, and no `Result` is sent for an
//!   id that is not awaiting one;
//! - credit is conserved: the runtime's window (free places plus places
//!   held) always equals the session's window less the places it owes, and
//!   the runtime withholds exactly when the session believes it does; so
//!   the sum of grants equals the results sent less the deliberate withholds;
//! - a zero grant is sent only for a withhold asked for or a shrink;
//! - a handler's cancellation fires before it is dropped, and nothing is
//!   held past its deadline or cancellation plus the grace, or past a drain
//!   deadline;
//! - a `Cancel` for an id not held produces no action at all;
//! - every WebSocket send ends exactly once, and nonsense frames only warn;
//! - nothing is sent after `Close` or `Exit`, and a closed session does
//!   nothing more;
//! - when all work is done and the timers have passed, the tables that track
//!   events are empty.

mod model;

use celerity::proto::v1::{RuntimeMessage, runtime_message};
use model::{Early, Harness, IdChoice, Kind, Op, Scenario};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = Op> {
    let id = prop_oneof![
        6 => Just(IdChoice::Fresh),
        2 => any::<usize>().prop_map(IdChoice::Reuse),
        1 => Just(IdChoice::Empty),
        1 => Just(IdChoice::TooLong),
    ];
    // Relative to now; the last is a negative `deadline_unix_ms`, long past.
    let deadline = prop_oneof![2 => Just(None), 3 => (-100i64..800).prop_map(Some), 1 => Just(Some(-(1 << 42)))];
    let kind = prop_oneof![
        6 => Just(Kind::Ok),
        5 => Just(Kind::Error),
        4 => Just(Kind::Panic),
        1 => Just(Kind::Huge),
        1 => Just(Kind::Undecodable)
    ];
    prop_oneof![
        12 => (0..3usize, id, deadline, prop::bool::weighted(0.25))
            .prop_map(|(tag, id, deadline, forced)| Op::Dispatch { tag, id, deadline, forced }),
        10 => (any::<usize>(), kind).prop_map(|(pick, kind)| Op::Complete { pick, kind }),
        3 => (prop::option::weighted(0.8, any::<usize>()), 0..4i32).prop_map(|(pick, reason)| Op::Cancel { pick, reason }),
        6 => (0i64..1_500).prop_map(Op::Advance),
        2 => Just(Op::Withhold),
        2 => Just(Op::Resume),
        2 => (0u32..7).prop_map(Op::Resize),
        1 => (0i64..2_000).prop_map(Op::Drain),
        2 => Just(Op::Signal),
        1 => Just(Op::Stop),
        1 => any::<bool>().prop_map(|error| Op::StreamEnd { error }),
        2 => (0usize..4, prop_oneof![9 => 0usize..100, 1 => Just(model::FRAME_LIMIT)], 0u64..=model::MAX_WS_TIMEOUT_MS)
            .prop_map(|(messages, bytes, timeout_ms)| Op::WsSend { messages, bytes, timeout_ms }),
        2 => prop::option::weighted(0.8, any::<usize>()).prop_map(|pick| Op::WsAck { pick }),
        1 => raw().prop_map(|frame| Op::Raw(Box::new(frame))),
    ]
}

/// Frames that make no sense after the handshake.
fn raw() -> impl Strategy<Value = RuntimeMessage> {
    prop_oneof![
        Just(RuntimeMessage { frame: None }),
        Just(RuntimeMessage { frame: Some(runtime_message::Frame::Config(Default::default())) }),
        Just(RuntimeMessage { frame: Some(runtime_message::Frame::ReadyAck(Default::default())) }),
        Just(RuntimeMessage { frame: Some(runtime_message::Frame::Dispatch(Default::default())) }),
    ]
}

fn early() -> impl Strategy<Value = Early> {
    prop_oneof![Just(Early::Withhold), Just(Early::Resume), (0u32..7).prop_map(Early::Resize)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_session_keeps_every_rule(
        initial in 1u32..5,
        grace in prop_oneof![Just(0u64), 1u64..300],
        early in prop::collection::vec(early(), 0..3),
        between in prop::collection::vec(early(), 0..2),
        signal_before_ack in prop::bool::weighted(0.1),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        Scenario { initial, grace, early, between, signal_before_ack, ops }.run();
    }

    /// The same model driven by arbitrary bytes, as the fuzz target reads
    /// them: raw frames of any shape included.
    #[test]
    fn the_session_keeps_every_rule_on_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..2_000)) {
        Scenario::from_bytes(&data).run();
    }
}

/// A long busy run without drains or signals, to reach deep windows, many
/// resizes and long-lived timers.
#[test]
fn a_long_busy_run_keeps_the_timer_heap_bounded() {
    let mut harness = Harness::new(8, 100, &[], &[], false);
    for round in 0..2_000u64 {
        // Long deadlines that never come due during the run.
        harness.step(&Op::Dispatch { tag: 0, id: IdChoice::Fresh, deadline: Some(600_000), forced: false });
        let pick = harness.started.len() - 1;
        harness.step(&Op::Complete { pick, kind: Kind::Ok });
        if round % 100 == 0 {
            harness.step(&Op::Resize(1 + (round / 100 % 8) as u32));
        }
        harness.step(&Op::Advance(1));
    }
    assert!(harness.session.timer_entries() <= 70, "{} stale timers kept", harness.session.timer_entries());
    harness.finish();
}
