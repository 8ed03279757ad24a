use celerity::http_handler;

#[http_handler("GET::/hello")]
async fn hello(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}
