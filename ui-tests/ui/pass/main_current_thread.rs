//! `#[celerity::main(flavor = "current_thread")]`: `main` and the handlers run
//! on a current-thread runtime, and serving works there (the test sets
//! `CELERITY_EXTRACT_MANIFEST`, so serving prints the manifest and exits).

#![deny(missing_docs, unused, unsafe_code, unreachable_pub, nonstandard_style, rust_2018_idioms)]

// Only to check the runtime: applications need no tokio dependency, and the
// macro's expansion reaches tokio through the same path.
use celerity::__private::tokio::runtime::{Handle, RuntimeFlavor};

#[celerity::http_handler("GET::/hello")]
async fn hello() -> &'static str {
    "hello"
}

#[celerity::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(Handle::current().runtime_flavor(), RuntimeFlavor::CurrentThread);
    assert_eq!(hello().await, "hello");
}
