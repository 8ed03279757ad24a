//! One module per fuzz target, each with `pub fn run(data: &[u8])`.
//!
//! Included by path from `runtime/tests/fuzz_corpus.rs` too, so everything
//! here names its dependencies as that crate has them: `celerity`,
//! `serde_json`, `tokio`, and the crate-root modules `session_model` and
//! `tag`.

pub mod dispatch;
pub mod event;
pub mod frame;
pub mod outbound;
pub mod session;
pub mod tag;
