use std::cell::Cell;

use celerity::{State, http_handler};

struct Counter {
    hits: Cell<u64>,
}

#[http_handler("GET::/hits")]
async fn hits(counter: State<Counter>) -> String {
    counter.hits.get().to_string()
}

fn main() {}
