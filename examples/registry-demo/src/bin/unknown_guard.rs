//! A handler names a guard the application never registered: the binary
//! must refuse to start, and to print its manifest, naming the handler, the
//! guard and the guards there are.

use celerity::guard::{GuardRequest, Verdict};
use celerity::http_handler;

#[http_handler("GET::/reports", guard = "jwt")]
async fn reports() -> &'static str {
    "[]"
}

#[celerity::main]
async fn main() -> celerity::App {
    celerity::App::new().guard("api-key", |_request: GuardRequest| async { Ok::<_, celerity::Error>(Verdict::allow()) })
}
