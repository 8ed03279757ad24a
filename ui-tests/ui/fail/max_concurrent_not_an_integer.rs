use celerity::http_handler;

#[http_handler("GET::/a", max_concurrent = 2.5)]
async fn a() {}

#[http_handler("GET::/b", max_concurrent = "8")]
async fn b() {}

const LIMIT: u32 = 8;

#[http_handler("GET::/c", max_concurrent = LIMIT)]
async fn c() {}

fn main() {
    let _ = LIMIT;
}
