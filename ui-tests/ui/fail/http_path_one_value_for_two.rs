use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/orders/{order}/lines/{line}")]
async fn get_line(Path(line): Path<u32>) -> String {
    line.to_string()
}

fn main() {}
