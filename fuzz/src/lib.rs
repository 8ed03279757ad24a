//! Fuzz targets for the celerity SDK. Each target is a plain
//! `fn run(data: &[u8])` in [`targets`] that panics when a property fails;
//! `fuzz_targets/*.rs` hand it to libFuzzer, and
//! `runtime/tests/fuzz_corpus.rs` includes the same files to replay the
//! committed corpus (and random inputs) in the SDK's own test suite.
//!
//! The protocol core's model from `runtime/tests/model/` is included by
//! path rather than depended on, so that the fuzzer, the property tests and
//! the replay check the same properties.

#[path = "../../runtime/tests/model/mod.rs"]
pub mod session_model;

pub mod targets;
