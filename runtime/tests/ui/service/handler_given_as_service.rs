async fn hello() -> &'static str {
    "hello"
}

#[celerity::main]
async fn main() -> celerity::App {
    // A handler function goes on with `App::http`, not as a service.
    celerity::App::new().service(["GET::/hello"], hello)
}
