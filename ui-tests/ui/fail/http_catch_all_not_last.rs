use celerity::http_handler;

#[http_handler("GET::/files/{path+}/meta")]
async fn meta() -> &'static str {
    "{}"
}

fn main() {}
