//! `#[celerity::main]` with no return value, and a handler bound by name
//! with the explicit registration API beside it, in a crate with strict
//! lints: the generated code must not trip them.

#![deny(missing_docs, unused, unsafe_code, unreachable_pub, nonstandard_style, rust_2018_idioms)]

use celerity::{App, HandlerKey, Registration, http_handler};

#[http_handler(name = "hello")]
async fn hello() -> &'static str {
    "hello"
}

async fn bye() -> &'static str {
    "bye"
}

#[celerity::main]
async fn main() {
    let app = App::new().register(Registration::http(HandlerKey::Tag("GET::/bye".into()), bye));
    let keys: Vec<HandlerKey> = app.registrations().iter().map(|r| r.key().clone()).collect();
    assert_eq!(keys, [HandlerKey::Name("hello".into()), HandlerKey::Tag("GET::/bye".into())]);
    assert_eq!(hello().await, "hello");
}
