//! The fuzz targets of `fuzz/`, run in the SDK's own test suite: every file
//! of the committed corpus (`fuzz/corpus/<target>/`, seeds and what the
//! fuzzer found from them) and every regression input
//! (`fuzz/regressions/<target>/`, each one a crash found and fixed) is
//! replayed through the very code the fuzzer runs, and each target also
//! gets a short run on random bytes. A failure prints the file or input.
//!
//! The targets are included by path, with the protocol core's model they
//! share, so nothing here can drift from what the fuzzer checks. To fuzz for
//! real, see `fuzz/README.md`.

#[path = "model/mod.rs"]
mod session_model;

#[allow(dead_code)]
#[path = "../../fuzz/src/targets/mod.rs"]
mod targets;

use std::path::{Path, PathBuf};

use proptest::prelude::*;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 6] = [
    ("session", targets::session::run),
    ("frame", targets::frame::run),
    ("dispatch", targets::dispatch::run),
    ("event", targets::event::run),
    ("tag", targets::tag::run),
    ("outbound", targets::outbound::run),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files under `fuzz/<kind>/<target>/`, sorted.
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

fn replay(kind: &str) -> usize {
    let mut replayed = 0;
    for (target, run) in TARGETS {
        for file in inputs(kind, target) {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| run(&data));
            if let Err(panic) = outcome {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{target}: {} fails: {message}", file.display());
            }
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn the_committed_corpus_replays_clean() {
    for (target, _) in TARGETS {
        assert!(!inputs("corpus", target).is_empty(), "no corpus committed for fuzz target {target}");
    }
    let replayed = replay("corpus");
    eprintln!("replayed {replayed} corpus inputs");
}

#[test]
fn every_crash_found_stays_fixed() {
    let replayed = replay("regressions");
    eprintln!("replayed {replayed} regression inputs");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn session_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..1_500)) {
        targets::session::run(&data);
    }

    #[test]
    fn frame_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
        targets::frame::run(&data);
    }

    #[test]
    fn dispatch_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
        targets::dispatch::run(&data);
    }

    #[test]
    fn tag_on_random_text(kind in any::<u8>(), text in "\\PC{0,40}") {
        let mut data = vec![kind];
        data.extend_from_slice(text.as_bytes());
        targets::tag::run(&data);
    }

    #[test]
    fn outbound_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..300)) {
        targets::outbound::run(&data);
    }
}
