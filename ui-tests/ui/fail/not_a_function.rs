use celerity::http_handler;

#[http_handler("GET::/orders")]
struct Orders {
    count: u32,
}

fn main() {
    let _ = Orders { count: 0 }.count;
}
