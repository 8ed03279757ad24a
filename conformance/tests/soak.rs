//! Soak: many events through `protocol-app` over the test kit's runtime,
//! with random handler outcomes: success, error, panic, a deadline
//! overrun ignored and honoured, a cancellation honoured and ignored, a
//! withhold resumed from a background task, and WebSocket sends answered by
//! the runtime. The runtime keeps the window full the whole time.
//!
//! It asserts, for the real binary, by behaviour:
//! - each event is answered exactly once, with the outcome its kind calls
//!   for (the test kit also records a second answer, or an answer for an id
//!   never dispatched, as a violation);
//! - credit is conserved: at the end the runtime's window is the declared
//!   one and all of it is free;
//! - every table is empty at the end: all results are in, nothing is in
//!   flight, and a `Drain` ends the stream cleanly at once and the process
//!   exits 0;
//! - memory is flat: the handler's RSS at the end is within a bound of its
//!   RSS after warm-up.
//!
//! The short run (20,000 events, a few seconds) is part of the suite. The
//! full run, 1,000,000 events:
//!
//! ```text
//! cargo test -p celerity-conformance --release --test soak -- --ignored --nocapture
//! ```
//!
//! `SOAK_EVENTS=<n>` sets the count of either run, `SOAK_SEED=<n>` the
//! random seed (printed by every run).

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use celerity_testkit::proto::v1::{self as pb, cancel::Reason, handler_message, result::Outcome};
use celerity_testkit::{Error, event};
use common::{WAIT, get, handler_error, ok_body, rss_kib, sleep, start};

/// The credit window the soak runs with.
const WINDOW: i64 = 32;

/// What an event does, and so how it must be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Ok,
    Error,
    Panic,
    /// Runs past its deadline, ignoring it: answered `DeadlineExceeded`.
    DeadlineIgnored,
    /// Stops at its deadline: answers for itself.
    DeadlineHonoured,
    /// Cancelled, and stops: answers for itself.
    CancelHonoured,
    /// Cancelled, and runs on: answered `Cancelled` after the grace.
    CancelIgnored,
    /// Withholds credit, and resumes from a background task.
    Withhold,
    /// Sends to a WebSocket connection and answers with what became of it.
    WsSend,
}

const KINDS: [(Kind, u32); 9] = [
    (Kind::Ok, 40),
    (Kind::Error, 10),
    (Kind::Panic, 8),
    (Kind::DeadlineIgnored, 4),
    (Kind::DeadlineHonoured, 4),
    (Kind::CancelHonoured, 4),
    (Kind::CancelIgnored, 4),
    (Kind::Withhold, 2),
    (Kind::WsSend, 24),
];

/// xorshift64*: a seeded generator, so a failing run can be repeated.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn kind(&mut self) -> Kind {
        let total: u32 = KINDS.iter().map(|(_, w)| w).sum();
        let mut pick = (self.next() % u64::from(total)) as u32;
        for (kind, weight) in KINDS {
            if pick < weight {
                return kind;
            }
            pick -= weight;
        }
        unreachable!()
    }
}

fn event_for(kind: Kind, n: u64) -> event::HttpEvent {
    match kind {
        Kind::Ok => get("/fast"),
        Kind::Error => get("/error"),
        Kind::Panic => get("/panic"),
        Kind::DeadlineIgnored => sleep(10_000, false).deadline_in(Duration::from_millis(20)),
        Kind::DeadlineHonoured => sleep(10_000, true).deadline_in(Duration::from_millis(20)),
        Kind::CancelHonoured => sleep(60_000, true),
        Kind::CancelIgnored => sleep(60_000, false),
        Kind::Withhold => get("/withhold").query("resume_after_ms", "2"),
        Kind::WsSend => {
            let body = serde_json::json!({
                "messages": [{"connection": format!("c-{n}"), "text": format!("{{\"n\":{n}}}")}],
                "timeout_ms": 10_000,
            });
            event::http("POST", "/ws/send").header("content-type", "application/json").body(body.to_string())
        }
    }
}

/// Checks an answer against what its kind calls for.
fn check(kind: Kind, result: &pb::Result) {
    match kind {
        Kind::Ok => assert_eq!(ok_body(result), "ok"),
        Kind::Error => assert_eq!(handler_error(result).r#type, "InventoryError"),
        Kind::Panic => {
            let error = handler_error(result);
            assert_eq!(error.r#type, "panic");
            assert!(error.stack.is_empty(), "a stack went out without the opt-in");
        }
        Kind::DeadlineIgnored => assert_eq!(handler_error(result).r#type, "DeadlineExceeded"),
        // A handler that honours its cancellation answers for itself, unless
        // the machine is too loaded for it to run within the grace: then
        // the SDK answers for it, as for one that ignores it.
        Kind::DeadlineHonoured => match &result.outcome {
            Some(Outcome::Error(error)) => assert_eq!(error.r#type, "DeadlineExceeded"),
            _ => assert_eq!(ok_body(result), "stopped: deadline exceeded"),
        },
        Kind::CancelHonoured => match &result.outcome {
            Some(Outcome::Error(error)) => assert_eq!(error.r#type, "Cancelled"),
            _ => assert_eq!(ok_body(result), "stopped: caller gone"),
        },
        Kind::CancelIgnored => assert_eq!(handler_error(result).r#type, "Cancelled"),
        Kind::Withhold => assert_eq!(ok_body(result), "withheld"),
        Kind::WsSend => match &result.outcome {
            Some(Outcome::Http(response)) => {
                let answer: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
                assert_eq!(answer["result"], "ok", "{answer}");
            }
            other => panic!("expected the send's answer, got {other:?}"),
        },
    }
    // One place back, or zero: the withhold rides on whichever result goes
    // out next, this event's or another's.
    assert!(result.credit_grant <= 1, "{kind:?} granted {}", result.credit_grant);
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

async fn soak(default_events: u64) {
    let events = env_number("SOAK_EVENTS").unwrap_or(default_events);
    let seed = env_number("SOAK_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    }) | 1;
    eprintln!("soak: {events} events, SOAK_SEED={seed}");
    let mut rng = Rng(seed);
    let mut app = start(&[
        ("CELERITY_HANDLER_CONCURRENCY", &WINDOW.to_string()),
        ("CELERITY_CANCEL_GRACE_MS", "50"),
        ("RUST_LOG", "warn"),
    ])
    .await;
    let pid = app.process.id().unwrap();
    let conn = &app.conn;
    conn.expect_withhold(true);

    let started = Instant::now();
    let warm_up = (events / 10).max(1);
    let mut warm_rss = 0;
    let mut peak_rss = 0;
    let mut outstanding: HashMap<String, Kind> = HashMap::new();
    let mut counts: HashMap<Kind, u64> = HashMap::new();
    let (mut dispatched, mut answered, mut ws_sends, mut zero_grants) = (0u64, 0u64, 0u64, 0u64);
    while answered < events {
        // Keep the window full.
        while dispatched < events && conn.credit() > 0 && !conn.withheld() {
            let kind = rng.kind();
            let id = match conn.dispatch(event_for(kind, dispatched)) {
                Ok(id) => id,
                Err(Error::DispatchRefused(_)) => break,
                Err(error) => panic!("dispatch failed: {error}\n{}", app.process.output_text()),
            };
            if matches!(kind, Kind::CancelHonoured | Kind::CancelIgnored) {
                conn.cancel(&id, Reason::CallerGone).unwrap();
            }
            outstanding.insert(id, kind);
            dispatched += 1;
        }
        tokio::select! {
            result = conn.next_result_timeout(WAIT) => {
                let result = result.unwrap_or_else(|e| panic!("{e}\n{}", app.process.output_text()));
                let kind = outstanding.remove(&result.id).unwrap_or_else(|| panic!("a second answer for {}", result.id));
                check(kind, &result);
                zero_grants += u64::from(result.credit_grant == 0);
                *counts.entry(kind).or_default() += 1;
                answered += 1;
                if answered == warm_up {
                    warm_rss = rss_kib(pid);
                }
                if answered.is_multiple_of((events / 50).max(1)) {
                    peak_rss = peak_rss.max(rss_kib(pid));
                }
            }
            frame = conn.next_frame_timeout(WAIT) => {
                match frame.unwrap_or_else(|e| panic!("{e}\n{}", app.process.output_text())).frame {
                    Some(handler_message::Frame::WsSend(send)) => {
                        assert_eq!(send.messages.len(), 1);
                        ws_sends += 1;
                        conn.ws_ack_success(&send.correlation_id).unwrap();
                    }
                    // The resume after a withhold.
                    Some(handler_message::Frame::Credit(_)) => {}
                    other => panic!("unexpected frame {other:?}"),
                }
            }
        }
    }
    let end_rss = rss_kib(pid);
    let elapsed = started.elapsed();
    assert!(outstanding.is_empty());
    assert_eq!(dispatched, events);
    assert_eq!(ws_sends, counts.get(&Kind::WsSend).copied().unwrap_or(0), "one WsSend per send event");
    let withholds = counts.get(&Kind::Withhold).copied().unwrap_or(0);
    assert!(zero_grants <= withholds, "{zero_grants} zero grants for {withholds} withholds");
    // Credit conserved: the last resume may still be on its way.
    let credit = conn.wait_for_credit_state(WAIT, |c| c.available == WINDOW && !c.withheld).await.unwrap();
    assert_eq!(credit.in_flight, 0);
    assert_eq!(conn.window(), WINDOW);
    let mut kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k:?} {n}")).collect();
    kinds.sort();
    let drift = end_rss as i64 - warm_rss as i64;
    eprintln!(
        "soak: {events} events in {:.1} s ({:.0}/s); RSS {warm_rss} KiB after warm-up, {end_rss} KiB at the end \
         (drift {drift:+} KiB), {peak_rss} KiB peak; {}",
        elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64(),
        kinds.join(", ")
    );
    // Memory flat: allocator noise, not growth with the number of events.
    assert!(
        end_rss <= warm_rss + warm_rss / 2 + 16 * 1024,
        "the handler's memory grew from {warm_rss} KiB to {end_rss} KiB over {events} events"
    );
    conn.assert_no_violations();
    // Every table empty: a drain with nothing held ends at once, cleanly.
    let drained = Instant::now();
    app.drain_and_exit().await;
    assert!(drained.elapsed() < Duration::from_secs(5), "the drain waited on something: {:?}", drained.elapsed());
}

#[tokio::test]
async fn soak_short() {
    soak(20_000).await;
}

/// The full soak: `cargo test -p celerity-conformance --release --test soak
/// -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a million events: run on purpose (see the module docs)"]
async fn soak_full() {
    soak(1_000_000).await;
}
