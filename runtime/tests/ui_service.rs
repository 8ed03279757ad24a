//! What a user sees when `App::service` is given something that is not a
//! tower service of HTTP requests.

#[rustversion::attr(not(stable(1.95)), ignore = "the expected compiler output is pinned to rustc 1.95")]
#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/service/*.rs");
}
