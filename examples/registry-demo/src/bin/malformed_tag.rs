//! A tag given to the explicit API that the attribute would refuse at
//! compile time: the binary must refuse to start, before it connects and
//! before it prints a manifest, with the attribute's own sentence.

use std::process::ExitCode;

async fn list_orders() -> &'static str {
    "[]"
}

fn main() -> ExitCode {
    celerity::run_main(|| async { celerity::App::new().http("get::orders", list_orders).run().await })
}
