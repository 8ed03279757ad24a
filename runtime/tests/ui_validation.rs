//! What a user sees when `Valid<E>` is given a value without rules.

#[rustversion::attr(not(stable(1.95)), ignore = "the expected compiler output is pinned to rustc 1.95")]
#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/validation/*.rs");
}
