//! HTTP handlers of every shape the macros accept, served by a `main` that
//! returns the `App` to serve (here: asked for its manifest, so it exits).

use celerity::http::{HeaderMap, HttpError, header, IntoResponse, Json, Method, Path, Query, Request, StatusCode};
use celerity::{App, Context, State, http_handler};
use serde::{Deserialize, Serialize};

struct Store {
    name: &'static str,
}

#[derive(Deserialize, Serialize)]
struct Order {
    id: u64,
}

#[derive(Deserialize)]
struct Page {
    page: Option<u32>,
}

#[http_handler("GET::/health")]
async fn health() {}

#[http_handler("GET::/orders/{id}", max_concurrent = 16)]
async fn get_order(Path(id): Path<u64>, store: State<Store>, cx: Context) -> Result<Json<Order>, HttpError> {
    let _ = (store.name, cx.tag());
    if id == 0 { Err(HttpError::not_found("no such order")) } else { Ok(Json(Order { id })) }
}

#[http_handler("GET::/orders")]
async fn list(Query(page): Query<Page>, headers: HeaderMap, method: Method) -> impl IntoResponse {
    let _ = (headers.len(), method);
    format!("page {}", page.page.unwrap_or(1))
}

#[http_handler(name = "createOrder")]
async fn create(Json(order): Json<Order>) -> (StatusCode, Json<Order>) {
    (StatusCode::CREATED, Json(order))
}

#[http_handler("PUT::/files/{path+}")]
async fn upload(Path(path): Path<Vec<String>>, request: Request) -> celerity::Result<String> {
    let text = std::str::from_utf8(request.body())?;
    Ok(format!("{} {text}", path.join("/")))
}

#[http_handler("POST::/raw")]
async fn raw(request: Request) -> Vec<u8> {
    request.into_body().to_vec()
}

#[http_handler("DELETE::/types/{id}")]
async fn r#type(Path(id): Path<String>, text: String) -> String {
    id + &text
}

#[http_handler("GET::/search")]
async fn search(page: Option<Query<Page>>) -> ([(header::HeaderName, &'static str); 1], String) {
    let page = page.and_then(|Query(page)| page.page).unwrap_or(1);
    ([(header::CACHE_CONTROL, "no-store")], format!("page {page}"))
}

#[http_handler("POST::/orders")]
async fn place(Json(order): Json<Order>) -> (StatusCode, [(&'static str, String); 1], Json<Order>) {
    (StatusCode::CREATED, [("location", format!("/orders/{}", order.id))], Json(order))
}

/// A handler stays an ordinary function: it can be called directly.
async fn direct() {
    let Json(order) = create(Json(Order { id: 7 })).await.1;
    assert_eq!(order.id, 7);
    health().await;
}

#[celerity::main]
async fn main() -> celerity::Result<App> {
    direct().await;
    let app = App::new().state(Store { name: "orders" });
    let handlers = app.registrations();
    assert_eq!(handlers.len(), 9);
    // SAFETY: nothing else reads the environment at this point.
    unsafe { std::env::set_var("CELERITY_EXTRACT_MANIFEST", "1") };
    Ok(app)
}
