//! Handlers of every kind, declared with the attribute macros: bound by tag
//! and by blueprint name, with shared state, and an HTTP handler for each
//! extractor whose failure path the tests exercise.

use std::sync::atomic::{AtomicU64, Ordering};

// Links the library, and with it the handler it declares.
use registry_demo as _;

use celerity::consumer::Record;
use celerity::http::{HttpError, Path, Query, StatusCode};
use celerity::{
    App, Context, Json, State, consumer, custom_handler, http_handler, schedule_handler, websocket_handler,
};
use serde::{Deserialize, Serialize};

/// Shared with every handler through `App::state`.
struct Store {
    name: &'static str,
}

/// Counts calls across handlers and events.
#[derive(Default)]
struct Hits {
    count: AtomicU64,
}

#[derive(Serialize)]
struct Order {
    id: u64,
    store: &'static str,
}

#[derive(Deserialize, Serialize)]
struct Item {
    qty: u32,
}

#[derive(Deserialize, Serialize)]
struct NewOrder {
    name: String,
    items: Vec<Item>,
}

#[derive(Deserialize)]
struct Chat {
    text: String,
}

#[derive(Deserialize)]
struct Search {
    page: u32,
    #[serde(default)]
    tag: Vec<String>,
}

/// Bound by blueprint name: its tag comes from the runtime.
#[http_handler(name = "getOrder", max_concurrent = 4)]
async fn get_order(Path(id): Path<u64>, store: State<Store>, hits: State<Hits>) -> Json<Order> {
    hits.count.fetch_add(1, Ordering::SeqCst);
    Json(Order { id, store: store.name })
}

/// How many times `getOrder` and this handler have run, across events.
#[http_handler("GET::/hits")]
async fn count_hits(hits: State<Hits>) -> String {
    (hits.count.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

#[http_handler("POST::/orders")]
async fn create_order(Json(order): Json<NewOrder>) -> (StatusCode, Json<NewOrder>) {
    (StatusCode::CREATED, Json(order))
}

#[http_handler("POST::/drafts")]
async fn create_draft(draft: Option<Json<NewOrder>>) -> String {
    match draft {
        Some(Json(order)) => format!("draft {}", order.name),
        None => "empty draft".to_string(),
    }
}

#[http_handler("GET::/items/{id}")]
async fn get_item(Path(id): Path<u64>) -> String {
    format!("item {id}")
}

#[http_handler("GET::/search")]
async fn search(Query(search): Query<Search>) -> String {
    format!("page {} tags {}", search.page, search.tag.join(","))
}

#[http_handler("POST::/notes")]
async fn add_note(note: String) -> Result<String, HttpError> {
    if note.is_empty() { Err(HttpError::bad_request("a note is not empty")) } else { Ok(note) }
}

#[http_handler("GET::/files/{path+}")]
async fn get_file(Path(path): Path<Vec<String>>, cx: Context) -> String {
    format!("{} via {}", path.join("/"), cx.tag())
}

#[websocket_handler("action::sendMessage")]
async fn send_message(Json(chat): Json<Chat>) -> celerity::Result<()> {
    if chat.text.is_empty() { Err(celerity::Error::msg("empty message")) } else { Ok(()) }
}

#[consumer("source::orders-queue::processOrders", concurrency = 4)]
async fn process_order(record: Record<NewOrder>, hits: State<Hits>) -> celerity::Result<()> {
    hits.count.fetch_add(1, Ordering::SeqCst);
    if record.value().items.is_empty() { Err(celerity::Error::msg("an order has items")) } else { Ok(()) }
}

#[schedule_handler(name = "nightlyCleanup")]
async fn cleanup(cx: Context) {
    let _ = cx.tag();
}

#[custom_handler("custom::echo")]
async fn echo(Json(order): Json<NewOrder>) -> Json<NewOrder> {
    Json(order)
}

#[celerity::main]
async fn main() -> celerity::Result<App> {
    Ok(App::new().state(Store { name: "main-street" }).state(Hits::default()))
}
