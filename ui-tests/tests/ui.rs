//! The UI tests: what a user sees when a handler or `main` is malformed.

#[rustversion::attr(not(stable(1.95)), ignore = "the expected compiler output is pinned to rustc 1.95")]
#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
