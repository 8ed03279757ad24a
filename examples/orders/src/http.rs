//! The HTTP API: create, read, list, change and cancel orders.
//!
//! Each handler is an `async fn` whose arguments are extracted from the
//! request before it runs (`Path`, `Query`, `Json`, `State`, `Context`) and
//! whose return value becomes the response. What each one shows:
//!
//! - `create_order`: a JSON body, validation errors as a `400` whose
//!   `details` name each field, a `201` with a `location` header, an
//!   unhandled error (the audit log is unavailable) answered as a
//!   `HandlerError`, which the runtime turns into a `500`, and a message
//!   sent to the blueprint's queue (see [`crate::events`]);
//! - `get_order`: a path parameter and a `404`;
//! - `list_orders`: typed query parameters, one of them multi-valued, as a
//!   filter the datastore applies;
//! - `update_order`: a partial JSON body, a `409` (for a change the status
//!   does not allow, or one that lost a race with another: the datastore
//!   writes an order back only at the revision it was read at), and an
//!   update pushed to WebSocket subscribers;
//! - `cancel_order`: `DELETE` as a cancellation;
//! - `customer_orders`: a path parameter that arrives percent-encoded
//!   (`/customers/Ada%20Lovelace/orders`) and is decoded by the SDK.

use celerity::http::{ErrorDetail, HeaderMap, HeaderValue, HttpError, Json, Path, Query, StatusCode};
use celerity::resources::datastore::{Condition, attribute};
use celerity::{Context, State, http_handler};
use serde::Deserialize;

use crate::chaos;
use crate::events::Announcements;
use crate::live::{Subscriptions, notify_subscribers};
use crate::model::{Catalog, NewOrder, Order, Problem, Status, validate_order};
use crate::store::{AuditLog, ChangeError, Store};

/// `POST /orders` with `{"customer", "items": [{"sku", "quantity"}], "tags"}`.
///
/// A body that is not JSON, or does not fit [`NewOrder`], never reaches this
/// function: the SDK answers `400` naming the field. The rules JSON cannot
/// express (at least one item, known products, quantities of at least 1)
/// are checked here and answered the same way, every problem at once.
///
/// The function returns `celerity::Result`: an [`HttpError`] converted with
/// `?` or `.into()` is still answered as the HTTP response it describes,
/// while any other error (here, an audit log that cannot be written) is
/// unhandled and answered as a `HandlerError`.
///
/// The placed order is announced on the blueprint's queue, whose consumer
/// confirms it. The order is placed whether or not the announcement can be
/// sent (answering an error would have the client place it twice), so a
/// failed send is logged, and the order stays unconfirmed.
#[http_handler("POST::/orders")]
async fn create_order(
    store: Store,
    catalog: State<Catalog>,
    audit: State<AuditLog>,
    announcements: Announcements,
    Json(new): Json<NewOrder>,
) -> celerity::Result<(StatusCode, HeaderMap, Json<Order>)> {
    let problems = validate_order(&new, &catalog);
    if !problems.is_empty() {
        return Err(invalid("the order is not valid", problems).into());
    }
    let order = store.create(new, &catalog, &audit).await.map_err(http_error)?;
    if let Err(error) = announcements.placed(&order).await {
        tracing::error!(order = %order.id, %error, "the order was placed, and could not be announced on the queue");
    }
    let mut headers = HeaderMap::new();
    let location = HeaderValue::from_str(&format!("/orders/{}", order.id)).map_err(celerity::Error::msg)?;
    headers.insert("location", location);
    Ok((StatusCode::CREATED, headers, Json(order)))
}

/// `GET /orders/{id}`: the order, or `404`.
#[http_handler("GET::/orders/{id}")]
async fn get_order(Path(id): Path<String>, store: Store) -> celerity::Result<Json<Order>> {
    chaos::strike("get_order", &id);
    Ok(store.get(&id).await?.map(Json).ok_or_else(|| not_found(&id))?)
}

/// The query of `GET /orders`.
#[derive(Debug, Deserialize)]
struct ListQuery {
    /// `?status=paid`: only orders with this status. A status that is not
    /// one is answered `400` by the SDK, naming `status`.
    status: Option<Status>,
    /// `?tag=gift&tag=express`: only orders carrying every one of these tags.
    #[serde(default)]
    tag: Vec<String>,
}

/// `GET /orders?status=...&tag=...&tag=...`: the orders that match, by id.
#[http_handler("GET::/orders")]
async fn list_orders(Query(query): Query<ListQuery>, store: Store) -> celerity::Result<Json<Vec<Order>>> {
    let status = query.status.map(|status| attribute("status").eq(status.to_string()));
    let tags = query.tag.into_iter().map(|tag| attribute("tags").contains(tag));
    let filter = status.into_iter().chain(tags).reduce(Condition::and);
    Ok(Json(store.list(filter).await?))
}

/// The body of `PATCH /orders/{id}`: whatever is to change.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OrderPatch {
    status: Option<Status>,
    tags: Option<Vec<String>>,
}

/// `PATCH /orders/{id}` with `{"status": "paid"}` and/or `{"tags": [...]}`.
/// A change the order's status does not allow is a `409`. Subscribers of
/// the order are sent the updated order.
#[http_handler("PATCH::/orders/{id}")]
async fn update_order(
    cx: Context,
    Path(id): Path<String>,
    store: Store,
    audit: State<AuditLog>,
    subscriptions: State<Subscriptions>,
    Json(patch): Json<OrderPatch>,
) -> celerity::Result<Json<Order>> {
    let mut order = store.get(&id).await?.ok_or_else(|| not_found(&id))?;
    let mut changed = false;
    if let Some(tags) = patch.tags {
        let outcome = store.set_tags(&id, tags, &audit).await.map_err(http_error)?;
        (order, changed) = (outcome.order, changed || outcome.changed);
    }
    if let Some(status) = patch.status {
        let outcome = store.set_status(&id, status, &audit, "PATCH /orders/{id}").await.map_err(http_error)?;
        (order, changed) = (outcome.order, changed || outcome.changed);
    }
    if changed {
        notify_subscribers(&cx, &subscriptions, &order).await;
    }
    Ok(Json(order))
}

/// `DELETE /orders/{id}`: cancels the order (a shipped one cannot be) and
/// answers with it; the nightly cleanup removes it later.
#[http_handler("DELETE::/orders/{id}")]
async fn cancel_order(
    cx: Context,
    Path(id): Path<String>,
    store: Store,
    audit: State<AuditLog>,
    subscriptions: State<Subscriptions>,
) -> celerity::Result<Json<Order>> {
    let outcome = store.set_status(&id, Status::Cancelled, &audit, "DELETE /orders/{id}").await.map_err(http_error)?;
    if outcome.changed {
        notify_subscribers(&cx, &subscriptions, &outcome.order).await;
    }
    Ok(Json(outcome.order))
}

/// `GET /customers/{customer}/orders`: one customer's orders. The runtime
/// sends path parameters percent-decoded, so `/customers/Ada%20Lovelace/orders`
/// arrives as `Ada Lovelace`.
#[http_handler("GET::/customers/{customer}/orders")]
async fn customer_orders(Path(customer): Path<String>, store: Store) -> celerity::Result<Json<Vec<Order>>> {
    Ok(Json(store.list(Some(attribute("customer").eq(customer))).await?))
}

fn not_found(id: &str) -> HttpError {
    HttpError::not_found(format!("no order {id:?}"))
}

/// A `400` listing every problem, each with the code `invalid` and the path
/// of its field.
fn invalid(message: &str, problems: Vec<Problem>) -> HttpError {
    problems.into_iter().fold(HttpError::bad_request(message), |error, problem| {
        error.with_detail(ErrorDetail::new("invalid", problem.path, problem.message))
    })
}

/// The HTTP answer to a change that failed: a `404` or a `409` on purpose;
/// an audit log that cannot be written, or a datastore that fails, stays an
/// unhandled error.
fn http_error(error: ChangeError) -> celerity::Error {
    match error {
        ChangeError::NotFound(id) => not_found(&id).into(),
        conflict @ (ChangeError::Conflict { .. } | ChangeError::Closed { .. } | ChangeError::Raced(_)) => {
            HttpError::conflict(conflict.to_string()).into()
        }
        ChangeError::Audit(error) => error.into(),
        ChangeError::Store(error) => (*error).into(),
    }
}
