use celerity::http::Path;
use celerity::http_handler;

#[http_handler("GET::/files/{name}.txt")]
async fn get_file(Path(name): Path<String>) -> String {
    name
}

fn main() {}
