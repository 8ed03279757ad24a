//! The HTTP API of `orders`, end to end over the handler protocol.

mod common;

use common::{PANICKED, Service, event, handler_error, http, json, text};
use serde_json::json;

fn get(path: &str, route: &str) -> event::HttpEvent {
    event::http("GET", path).route(route)
}

#[tokio::test]
async fn create_get_and_list_orders() {
    let service = Service::start().await;

    let body = json!({"customer": "Ada", "items": [{"sku": "latte", "quantity": 2}], "tags": ["gift", "express"]});
    let result = service.call(event::http("POST", "/orders").json_text(body.to_string())).await;
    let response = http(&result);
    assert_eq!(response.status, 201, "{}", text(&response.body));
    assert_eq!(response.headers["location"].values, ["/orders/ord-1"]);
    assert_eq!(response.headers["content-type"].values, ["application/json"]);
    let created = json(&response.body);
    assert_eq!(created["id"], "ord-1");
    assert_eq!(created["status"], "pending");
    assert_eq!(created["totalCents"], 700);
    assert_eq!(
        created["items"][0],
        json!({"sku": "latte", "quantity": 2, "unitPriceCents": 350, "lineTotalCents": 700})
    );

    let second = service.create_order("Grace", &[("espresso", 1)], &["gift"]).await;
    let third = service.create_order("Alan", &[("croissant", 3)], &[]).await;
    assert_eq!((second.as_str(), third.as_str()), ("ord-2", "ord-3"));

    let result = service.get_order("ord-1").await;
    let response = http(&result);
    assert_eq!(response.status, 200);
    assert_eq!(json(&response.body), created);

    // Every order.
    let result = service.call(get("/orders", "/orders")).await;
    let ids: Vec<_> = json(&http(&result).body).as_array().unwrap().iter().map(|o| o["id"].clone()).collect();
    assert_eq!(ids, [json!("ord-1"), json!("ord-2"), json!("ord-3")]);

    // A repeated query parameter: orders carrying both tags.
    let result = service.call(get("/orders", "/orders").query("tag", "gift").query("tag", "express")).await;
    let listed = json(&http(&result).body);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["id"], "ord-1");

    // One tag, and a status.
    let result = service.call(get("/orders", "/orders").query("tag", "gift").query("status", "pending")).await;
    let ids: Vec<_> = json(&http(&result).body).as_array().unwrap().iter().map(|o| o["id"].clone()).collect();
    assert_eq!(ids, [json!("ord-1"), json!("ord-2")]);
    let result = service.call(get("/orders", "/orders").query("status", "paid")).await;
    assert_eq!(json(&http(&result).body), json!([]));

    service.finish().await;
}

#[tokio::test]
async fn invalid_orders_answer_400_naming_each_field() {
    let service = Service::start().await;
    let post = |body: serde_json::Value| event::http("POST", "/orders").json_text(body.to_string());

    // Rules the handler checks: every problem at once, each naming its field.
    let result = service
        .call(post(json!({"customer": " ", "items": [{"sku": "latte", "quantity": 1}, {"sku": "tea", "quantity": 0}]})))
        .await;
    let response = http(&result);
    assert_eq!(response.status, 400);
    assert_eq!(response.headers["content-type"].values, ["application/json"]);
    let body = json(&response.body);
    assert_eq!(body["message"], "the order is not valid");
    let details = body["details"].as_array().unwrap();
    let paths: Vec<_> = details.iter().map(|d| d["path"].clone()).collect();
    assert_eq!(paths, [json!(["customer"]), json!(["items", 1, "sku"]), json!(["items", 1, "quantity"])], "{body}");
    assert!(details.iter().all(|d| d["code"] == "invalid" && d["message"].is_string()), "{body}");
    assert!(details[1]["message"].as_str().unwrap().contains("\"tea\""), "{body}");

    let result = service.call(post(json!({"customer": "Ada", "items": []}))).await;
    let body = json(&http(&result).body);
    assert_eq!(http(&result).status, 400);
    assert_eq!(
        body["details"],
        json!([{"code": "invalid", "path": ["items"], "message": "an order has at least one item"}])
    );

    // Bodies that do not fit the type are refused by the SDK, naming the field.
    let result = service.call(post(json!({"customer": "Ada", "items": [{"sku": "latte", "quantity": -1}]}))).await;
    assert_eq!(http(&result).status, 400);
    let body = json(&http(&result).body);
    assert_eq!(body["details"][0]["path"], json!(["items", 0, "quantity"]), "{body}");
    assert_eq!(body["details"][0]["code"], "invalid_type", "{body}");

    let result = service.call(post(json!({"customer": "Ada", "items": [], "coupon": "X"}))).await;
    assert_eq!(http(&result).status, 400);
    assert_eq!(json(&http(&result).body)["details"][0]["code"], "invalid");

    let result = service.call(event::http("POST", "/orders").json_text("{\"customer\": ")).await;
    assert_eq!(http(&result).status, 400);
    assert_eq!(json(&http(&result).body)["details"][0]["code"], "malformed");

    // A query value that is not a status.
    let result = service.call(get("/orders", "/orders").query("status", "lost")).await;
    assert_eq!(http(&result).status, 400);
    let body = json(&http(&result).body);
    assert_eq!(body["details"][0]["path"], json!(["status"]), "{body}");

    // Nothing was created.
    let result = service.call(get("/orders", "/orders")).await;
    assert_eq!(json(&http(&result).body), json!([]));
    service.finish().await;
}

#[tokio::test]
async fn a_missing_order_is_404() {
    let service = Service::start().await;
    let result = service.get_order("ord-9").await;
    let response = http(&result);
    assert_eq!(response.status, 404);
    assert_eq!(json(&response.body), json!({"message": "no order \"ord-9\""}));

    let patch = event::http("PATCH", "/orders/ord-9")
        .route("/orders/{id}")
        .path_param("id", "ord-9")
        .json_text(r#"{"status": "paid"}"#);
    assert_eq!(http(&service.call(patch).await).status, 404);
    let delete = event::http("DELETE", "/orders/ord-9").route("/orders/{id}").path_param("id", "ord-9");
    assert_eq!(http(&service.call(delete).await).status, 404);
    service.finish().await;
}

#[tokio::test]
async fn orders_change_and_cancel_with_every_change_audited() {
    let dir = tempfile::tempdir().unwrap();
    let audit_log = dir.path().join("audit.log");
    let service = Service::start_with(&[("ORDERS_AUDIT_LOG", audit_log.to_str().unwrap())]).await;
    let id = service.create_order("Ada", &[("beans-1kg", 1)], &[]).await;
    let patch = |body: serde_json::Value| {
        event::http("PATCH", format!("/orders/{id}"))
            .route("/orders/{id}")
            .path_param("id", &id)
            .json_text(body.to_string())
    };

    let result = service.call(patch(json!({"status": "paid", "tags": ["wholesale"]}))).await;
    let response = http(&result);
    assert_eq!(response.status, 200, "{}", text(&response.body));
    let order = json(&response.body);
    assert_eq!(
        (order["status"].clone(), order["tags"].clone(), order["version"].clone()),
        (json!("paid"), json!(["wholesale"]), json!(3))
    );

    let result = service.call(patch(json!({"colour": "red"}))).await;
    assert_eq!(http(&result).status, 400);

    let delete = event::http("DELETE", format!("/orders/{id}")).route("/orders/{id}").path_param("id", &id);
    let result = service.call(delete).await;
    let order = json(&http(&result).body);
    assert_eq!(http(&result).status, 200);
    assert_eq!(order["status"], "cancelled");
    assert!(order["cancelledAtMs"].is_u64(), "{order}");

    // A cancelled order cannot be paid again.
    let result = service.call(patch(json!({"status": "paid"}))).await;
    let response = http(&result);
    assert_eq!(response.status, 409);
    assert_eq!(json(&response.body)["message"], format!("order \"{id}\" is cancelled and cannot become paid"));
    let result = service.call(patch(json!({"tags": ["late"]}))).await;
    let response = http(&result);
    assert_eq!(response.status, 409);
    assert_eq!(json(&response.body)["message"], format!("order \"{id}\" is cancelled and can no longer change"));

    let audited = std::fs::read_to_string(&audit_log).unwrap();
    let what: Vec<String> =
        audited.lines().map(|line| json(line.as_bytes())["what"].as_str().unwrap().to_string()).collect();
    assert_eq!(what, ["order.created", "order.retagged", "order.paid", "order.cancelled"], "{audited}");
    service.finish().await;
}

#[tokio::test]
async fn path_parameters_are_taken_as_the_runtime_decoded_them() {
    let service = Service::start().await;
    service.create_order("Ada Lovelace", &[("latte", 1)], &[]).await;
    service.create_order("a%20b", &[("latte", 1)], &[]).await;
    service.create_order("a b", &[("latte", 1)], &[]).await;
    let customer = |path: &str| {
        let service = &service;
        let path = path.to_string();
        async move {
            let result = service.call(get(&path, "/customers/{customer}/orders")).await;
            let listed = json(&http(&result).body);
            listed.as_array().unwrap().iter().map(|order| order["customer"].as_str().unwrap().to_string()).collect()
        }
    };
    let listed: Vec<String> = customer("/customers/Ada%20Lovelace/orders").await;
    assert_eq!(listed, ["Ada Lovelace"]);
    // The runtime decodes `%2520` once, to `%20`: decoding it again would
    // list the orders of `a b`.
    let listed: Vec<String> = customer("/customers/a%2520b/orders").await;
    assert_eq!(listed, ["a%20b"]);

    // `%FF` is an id like any other once decoded: no order has it.
    let result = service.call(get("/orders/%25FF", "/orders/{id}")).await;
    let response = http(&result);
    assert_eq!(response.status, 404, "{}", text(&response.body));
    assert_eq!(json(&response.body), json!({"message": "no order \"%FF\""}));
    service.finish().await;
}

#[tokio::test]
async fn a_handler_without_path_is_not_answered_400_for_a_parameter_holding_a_percent() {
    let service = Service::start().await;
    let result = service.call(get("/orders", "/orders").path_param("stray", "%FF")).await;
    assert_eq!(http(&result).status, 200);
    service.finish().await;
}

#[tokio::test]
async fn an_unhandled_error_is_a_handler_error_and_serving_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the log file should be: it cannot be appended to.
    let unavailable = dir.path().to_str().unwrap().to_string();
    let service = Service::start_with(&[("ORDERS_AUDIT_LOG", &unavailable)]).await;
    let body = json!({"customer": "Ada", "items": [{"sku": "latte", "quantity": 1}]});
    let result = service.call(event::http("POST", "/orders").json_text(body.to_string())).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "AuditUnavailable");
    // The runtime answers the caller with this text: it says what failed,
    // and the file's path is only in the process's log.
    assert_eq!(error.message, "the audit log is unavailable, so the change was not made");
    service.expect_log(&format!("path={unavailable}")).await;

    // Reads are not audited, and the process keeps serving.
    let result = service.call(get("/orders", "/orders")).await;
    assert_eq!(http(&result).status, 200);
    assert_eq!(json(&http(&result).body), json!([]));
    service.finish().await;
}

#[tokio::test]
async fn a_panic_is_a_handler_error_and_serving_goes_on() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let result = service.get_order("chaos:panic").await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!((error.message.as_str(), error.stack.as_str()), (PANICKED, ""), "{error:?}");
    service.expect_log("chaos: get_order was asked to panic").await;

    let id = service.create_order("Ada", &[("latte", 1)], &[]).await;
    assert_eq!(http(&service.get_order(&id).await).status, 200);
    service.finish().await;
}

#[tokio::test]
async fn with_the_opt_in_a_panics_message_and_stack_go_to_the_runtime() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1"), ("CELERITY_EXPOSE_PANICS", "true")]).await;
    let result = service.get_order("chaos:panic").await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, "chaos: get_order was asked to panic");
    assert!(error.stack.contains("orders::chaos::strike"), "the stack names where it panicked:\n{}", error.stack);
    service.finish().await;
}

#[tokio::test]
async fn without_chaos_the_marker_is_an_ordinary_id() {
    let service = Service::start().await;
    assert_eq!(http(&service.get_order("chaos:panic").await).status, 404);
    service.finish().await;
}

#[tokio::test]
async fn a_custom_invocation_of_an_http_handler_is_refused_naming_both() {
    let service = Service::start().await;
    // What the runtime's local invoke endpoint sends for an HTTP handler.
    let result = service.call(event::custom("createOrder").tag("POST::/orders").input(r#"{"customer": "Ada"}"#)).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "WrongEventSource");
    assert!(error.message.contains("HTTP") && error.message.contains("a custom invocation"), "{error:?}");
    assert!(error.message.contains("POST::/orders") && error.message.contains("create_order"), "{error:?}");

    // The process keeps serving.
    service.create_order("Ada", &[("latte", 1)], &[]).await;
    service.finish().await;
}
