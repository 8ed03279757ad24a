//! `#[celerity::main(worker_threads = N)]`: a multi-threaded runtime with
//! that many workers, in a crate with strict lints.

#![deny(missing_docs, unused, unsafe_code, unreachable_pub, nonstandard_style, rust_2018_idioms)]

// Only to check the runtime: applications need no tokio dependency.
use celerity::__private::tokio::runtime::{Handle, RuntimeFlavor};

#[celerity::main(flavor = "multi_thread", worker_threads = 3)]
async fn main() -> celerity::Result<()> {
    assert_eq!(Handle::current().runtime_flavor(), RuntimeFlavor::MultiThread);
    assert_eq!(Handle::current().metrics().num_workers(), 3);
    Ok(())
}
