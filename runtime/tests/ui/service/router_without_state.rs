use std::sync::Arc;

use axum::extract::State;
use axum::{Router, routing::get};

async fn count(State(hits): State<Arc<u64>>) -> String {
    hits.to_string()
}

#[celerity::main]
async fn main() -> celerity::App {
    // The router still needs its state: `Router<Arc<u64>>` serves nothing.
    let router: Router<Arc<u64>> = Router::new().route("/hits", get(count));
    celerity::App::new().service(["GET::/hits"], router)
}
