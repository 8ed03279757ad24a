//! The UI tests: what a user sees when a handler or `main` is malformed.

#[rustversion::attr(not(stable(1.95)), ignore = "the expected compiler output is pinned to rustc 1.95")]
#[test]
fn ui() {
    // The pass cases are run as well as built; one whose `main` serves the
    // registry prints its manifest and exits instead of looking for a runtime.
    // SAFETY: this is the only test in this binary, and nothing else is
    // running to read the environment.
    unsafe { std::env::set_var("CELERITY_EXTRACT_MANIFEST", "1") };
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
