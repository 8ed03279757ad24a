//! Compile-fail and compile-pass tests of the `celerity` attribute macros.
//!
//! `tests/ui.rs` runs trybuild over `ui/fail/*.rs` (each must fail to compile
//! with exactly the checked-in `.stderr`) and `ui/pass/*.rs` (each must build
//! and run successfully). The expected output is pinned to rustc 1.95: on
//! another compiler the test is ignored, since rustc's wording changes from
//! release to release.
//!
//! To regenerate the `.stderr` files after changing a message:
//! `TRYBUILD=overwrite cargo test -p celerity-ui-tests`, then read every diff.
