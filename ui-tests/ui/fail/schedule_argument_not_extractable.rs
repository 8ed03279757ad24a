use celerity::http::Request;
use celerity::schedule_handler;

#[schedule_handler("source::nightly::cleanup")]
async fn cleanup(request: Request) {
    let _ = request;
}

fn main() {}
