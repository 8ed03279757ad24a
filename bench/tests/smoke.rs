//! The benchmark harness at a tiny size, as CI runs it: every case of the
//! matrix against both handlers, interleaved, checking only that every event
//! was answered correctly, and that allocations and context switches were
//! counted. No timing is asserted. The resource cases run against the test
//! kit's Redis, Postgres and AWS API emulator, which the harness starts
//! (installing them where it must); the harness checks after each bucket
//! run that the object is stored whole.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use celerity_bench::harness::{self, Mode, Options, ResourceOp, Shape};
use celerity_bench::{CACHE_KEY, CACHE_VALUE, QUEUE_STREAM};
use celerity_testkit::servers;

#[test]
fn every_event_of_every_case_is_answered_correctly_by_both_handlers() {
    let options = Options::new(
        Mode::Smoke,
        PathBuf::from(env!("CARGO_BIN_EXE_bench-sdk-handler")),
        PathBuf::from(env!("CARGO_BIN_EXE_bench-raw-handler")),
    );
    let results = harness::run(&options, |line| eprintln!("{line}")).expect("the harness runs");

    assert_eq!(results.len(), harness::matrix(Mode::Smoke).len());
    for shape in [
        Shape::Consumer,
        Shape::WsSend { batch: 1 },
        Shape::WsSend { batch: 100 },
        Shape::Resource { op: ResourceOp::CacheGet },
        Shape::Resource { op: ResourceOp::QueueSend },
        Shape::Resource { op: ResourceOp::SqlSelect },
        Shape::Resource { op: ResourceOp::BucketPut },
        Shape::Resource { op: ResourceOp::DatastoreGet },
    ] {
        assert!(results.iter().any(|r| r.case.shape == shape), "{shape:?} not run");
    }
    assert!(results.iter().any(|r| r.case.memory), "the memory case was not run");
    for result in &results {
        for (label, samples) in [("A", &result.a), ("B", &result.b)] {
            assert_eq!(samples.len(), 1, "{} {label}: one run", result.case.name);
            for sample in samples {
                assert!(
                    sample.is_clean(),
                    "{} {label}: {} error(s), {}/{} answered, exit ok {}: {:?}",
                    result.case.name,
                    sample.errors,
                    sample.answered,
                    sample.dispatched,
                    sample.exit_ok,
                    sample.first_errors
                );
                assert_eq!(sample.dispatched, result.case.warmup + result.case.events, "{}", result.case.name);
                // Counted, not judged: decoding a `Dispatch` allocates in
                // either handler, so every measured phase has some.
                assert!(
                    sample.allocs_per_event.is_finite() && sample.allocs_per_event > 0.0,
                    "{} {label}: allocations not counted ({})",
                    result.case.name,
                    sample.allocs_per_event
                );
                assert!(sample.alloc_bytes_per_event.is_finite() && sample.alloc_bytes_per_event > 0.0);
                for switches in [sample.voluntary_cs_per_event, sample.involuntary_cs_per_event] {
                    assert!(switches.is_finite() && switches >= 0.0, "{} {label}: {switches}", result.case.name);
                }
                if let Shape::WsSend { .. } = result.case.shape {
                    assert_eq!(sample.ws_sends, sample.answered, "{} {label}", result.case.name);
                }
            }
        }
    }

    // The Redis side, as the harness left it (the same process's Redis):
    // the value every cache get answered with (each answer was checked
    // against it), and the stream of the last queue run, emptied before
    // it, with one entry per event of that run, as the SDK writes them.
    let redis = servers::redis();
    assert!(redis.command(&["GET", CACHE_KEY]).contains(CACHE_VALUE));
    let queue = results.iter().find(|r| r.case.shape == Shape::Resource { op: ResourceOp::QueueSend }).unwrap();
    let events = queue.case.warmup + queue.case.events;
    assert_eq!(redis.command(&["XLEN", QUEUE_STREAM]).trim(), format!(":{events}"));
    let last = redis.command(&["XREVRANGE", QUEUE_STREAM, "+", "-", "COUNT", "1"]);
    for field in ["body", "order", "timestamp", "message_type"] {
        assert!(last.contains(field), "{field} missing from the last entry: {last}");
    }

    // The Postgres side: every SELECT 1 of both runs was a transaction on
    // the database `celerity` (each answer was checked too). The counts
    // are the server's statistics, which a session writes when it is idle
    // or ends: the handlers have exited, their sessions end on their own.
    let postgres = servers::postgres();
    let sql = results.iter().find(|r| r.case.shape == Shape::Resource { op: ResourceOp::SqlSelect }).unwrap();
    let selects = 2 * (sql.case.warmup + sql.case.events);
    let committed = || {
        postgres
            .psql("SELECT xact_commit FROM pg_stat_database WHERE datname = 'celerity'")
            .parse::<u64>()
            .expect("a count of transactions")
    };
    let started = Instant::now();
    let mut seen = committed();
    while seen < selects && started.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(200));
        seen = committed();
    }
    assert!(seen >= selects, "{seen} transactions on the database `celerity` after {selects} SELECT 1s");
}
