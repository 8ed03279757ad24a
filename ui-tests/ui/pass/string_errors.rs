//! Errors from text: a handler returning `Result<_, String>`, and `?` and
//! `.into()` on text in one returning `celerity::Result`.

use celerity::consumer::RawRecord;
use celerity::{consumer, http_handler};

fn parse(id: &str) -> Result<u64, String> {
    id.parse().map_err(|_| format!("{id:?} is not an order id"))
}

#[http_handler("GET::/orders/{id}")]
async fn get_order(celerity::http::Path(id): celerity::http::Path<String>) -> celerity::Result<String> {
    let id = parse(&id)?;
    if id == 0 {
        return Err("order has id 0".into());
    }
    Ok(format!("order {id}"))
}

#[http_handler("DELETE::/orders/{id}")]
async fn delete_order() -> Result<(), String> {
    Err("orders are never deleted".to_string())
}

#[consumer("source::orders-queue::processOrders")]
async fn process(record: RawRecord) -> Result<(), String> {
    if record.body().is_empty() { Err(format!("record {} is empty", record.message_id())) } else { Ok(()) }
}

#[celerity::main]
async fn main() {}
