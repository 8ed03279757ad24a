//! The dev runtime answers callers as the Celerity runtime does, one test
//! per answer (`shared/contract/README.md`, "How the runtime behaves"):
//! `HEAD` on a `GET` route, and on a route a tower service serves (the
//! length the service gave); an unknown route, and a path with a trailing
//! `/` (another path: 404, the handler not called); a method the route does
//! not serve (405, `allow` in the blueprint's order, `HEAD` after `GET`,
//! bare commas); a body over 2 MiB; a request past its deadline; a handler
//! error (500, its text, no media type); the invoke endpoint's 404 for a
//! name no handler has; the request id on every response; and the
//! capabilities frame that opens every WebSocket connection. (An async
//! custom invocation answered 200 is in `orders_e2e.rs`, with a real custom
//! handler.)
//!
//! Most run `celerity-dev run <hello binary>`: `GET /hello` answers
//! `hello from celerity-rs`, or the text of `HELLO_GREETING_FILE`, which a
//! FIFO holds until the test writes to it; `POST /greetings/{name}` takes a
//! JSON body. The others run `orders` (a handler that panics on request,
//! with `ORDERS_CHAOS=1`) or `axum-router` (an axum `Router` as handlers),
//! each with its blueprint.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::{Dev, PATIENCE, Response, dev_command, example_binary, http, mkfifo, read, release, send_raw};

fn hello(args: &[&str]) -> Dev {
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.args(args).env_remove("HELLO_GREETING_FILE");
    Dev::spawn(command)
}

/// `orders` with its blueprint, its queue in a Redis database of its own;
/// `ORDERS_CHAOS=1` in `env` makes `GET /orders/chaos:panic` panic.
fn orders(env: &[(&str, &str)]) -> Dev {
    let mut command = dev_command(&example_binary("orders", "CELERITY_DEV_E2E_ORDERS"));
    command
        .arg("--blueprint")
        .arg(common::root().join("examples/orders/app.blueprint.yaml"))
        .env_remove("ORDERS_AUDIT_LOG")
        .env_remove("ORDERS_CHAOS")
        .env_remove("CELERITY_EXPOSE_PANICS")
        .env("CELERITY_REDIS_ENDPOINT", common::session_redis())
        .envs(env.iter().copied());
    Dev::spawn(command)
}

/// `axum-router` with its blueprint: `GET` and `POST /notes`, `GET /notes/{id}`.
fn axum_router() -> Dev {
    let mut command = dev_command(&example_binary("axum-router", "CELERITY_DEV_E2E_AXUM_ROUTER"));
    command.arg("--blueprint").arg(common::root().join("examples/axum-router/app.blueprint.yaml"));
    Dev::spawn(command)
}

fn header(response: &Response, name: &str) -> String {
    response.header(name).unwrap_or_else(|| panic!("no {name} header:\n{}", response.head))
}

#[test]
fn head_on_a_get_route_is_answered_by_the_get_handler_without_the_body() {
    let mut dev = hello(&[]);
    let got = http(dev.port, "GET", "/hello", "");
    assert_eq!((got.status, got.body.as_str()), (200, "hello from celerity-rs"), "{}", got.head);

    let head = read(send_raw(dev.port, "HEAD", "/hello", &[], b""));
    assert_eq!(head.status, 200, "{}\n{}", head.head, dev.text());
    assert_eq!(head.body, "", "no body");
    // The GET handler answered it: its length and type, without its bytes.
    assert_eq!(header(&head, "content-length"), got.body.len().to_string());
    assert_eq!(head.header("content-type"), got.header("content-type"));
    dev.wait_for_nth("GET::/hello -> 200", 2, PATIENCE);
}

#[test]
fn head_on_a_route_a_tower_service_serves_has_the_length_the_service_gave() {
    let mut dev = axum_router();
    let created = http(dev.port, "POST", "/notes", r#"{"text":"buy milk"}"#);
    assert_eq!(created.status, 201, "{}\n{}", created.head, dev.text());
    for path in ["/notes/1", "/notes"] {
        let got = http(dev.port, "GET", path, "");
        assert_eq!(got.status, 200, "{path}: {}", got.head);
        // axum answers HEAD itself: the GET body's length, and no body.
        let head = read(send_raw(dev.port, "HEAD", path, &[], b""));
        assert_eq!((head.status, head.body.as_str()), (200, ""), "{path}: {}", head.head);
        assert_eq!(header(&head, "content-length"), got.body.len().to_string(), "{path}: {}", head.head);
    }
    dev.wait_for("GET::/notes/{id} -> 200", PATIENCE);
}

#[test]
fn an_unknown_route_is_404_with_an_empty_body() {
    let dev = hello(&[]);
    for (method, path) in [("GET", "/nope"), ("POST", "/hello/extra"), ("HEAD", "/greetings")] {
        let response = read(send_raw(dev.port, method, path, &[], b""));
        assert_eq!(response.status, 404, "{method} {path}: {}", response.head);
        assert_eq!(response.body, "", "{method} {path}");
    }
}

#[test]
fn a_path_ending_in_a_slash_is_another_path_404_without_the_handler() {
    let mut dev = axum_router();
    for method in ["GET", "POST", "HEAD"] {
        let response = read(send_raw(dev.port, method, "/notes/", &[], b""));
        assert_eq!((response.status, response.body.as_str()), (404, ""), "{method}: {}", response.head);
        dev.wait_for(&format!("{method} /notes/: no route (404)"), PATIENCE);
    }
    // Without the slash the handler is called: its line is the first.
    assert_eq!(http(dev.port, "GET", "/notes", "").status, 200);
    dev.wait_for("GET::/notes -> 200", PATIENCE);
    assert_eq!(dev.count("GET::/notes ->"), 1, "/notes/ reached the handler:\n{}", dev.text());
}

#[test]
fn a_method_the_route_does_not_serve_is_405_listing_its_methods_and_head() {
    let dev = hello(&[]);
    let response = http(dev.port, "DELETE", "/hello", "");
    assert_eq!(response.status, 405, "{}", response.head);
    assert_eq!(response.body, "");
    assert_eq!(header(&response, "allow"), "GET,HEAD");

    // A route without GET is not served for HEAD either.
    let response = read(send_raw(dev.port, "HEAD", "/greetings/ada", &[], b""));
    assert_eq!(response.status, 405, "{}", response.head);
    assert_eq!(header(&response, "allow"), "POST");
    let response = http(dev.port, "GET", "/greetings/ada", "");
    assert_eq!((response.status, response.body.as_str()), (405, ""));
}

#[test]
fn a_405_lists_the_methods_in_the_blueprints_order_with_head_after_get() {
    let dev = orders(&[]);
    // getOrder, updateOrder, cancelOrder, as the blueprint declares them.
    let response = http(dev.port, "PUT", "/orders/ord-1", "");
    assert_eq!((response.status, response.body.as_str()), (405, ""), "{}", response.head);
    assert_eq!(header(&response, "allow"), "GET,HEAD,PATCH,DELETE");
    // createOrder before listOrders.
    let response = http(dev.port, "DELETE", "/orders", "");
    assert_eq!((response.status, header(&response, "allow")), (405, "POST,GET,HEAD".to_owned()));
}

#[test]
fn a_body_over_2_mib_is_413_in_plain_text_and_never_dispatched() {
    let dev = hello(&[]);
    let json = [("content-type", "application/json")];
    // At the limit the request is dispatched: the SDK finds it is not JSON.
    let at_limit = vec![b'x'; 2 * 1024 * 1024];
    let response = read(send_raw(dev.port, "POST", "/greetings/ada", &json, &at_limit));
    assert_eq!(response.status, 400, "{}\n{}", response.head, response.body);

    let over = vec![b'x'; 2 * 1024 * 1024 + 1];
    let response = read(send_raw(dev.port, "POST", "/greetings/ada", &json, &over));
    assert_eq!(response.status, 413, "{}", response.head);
    assert!(header(&response, "content-type").starts_with("text/plain"), "{}", response.head);
    assert_eq!(response.body, "the request body is larger than the runtime accepts");
    assert_eq!(dev.count("POST::/greetings/{name} ->"), 1, "only the first was dispatched:\n{}", dev.text());

    // A client that waits for `100 Continue` before sending a body over the
    // limit is answered without sending it.
    let mut waits = TcpStream::connect(("127.0.0.1", dev.port)).unwrap();
    let head = format!(
        "POST /greetings/ada HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        over.len()
    );
    waits.write_all(head.as_bytes()).unwrap();
    let response = read(waits);
    assert_eq!((response.status, response.body.as_str()), (413, "the request body is larger than the runtime accepts"));
}

#[test]
fn a_request_past_its_deadline_is_504_handler_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("greeting");
    mkfifo(&fifo);
    let mut command = dev_command(&example_binary("hello", "CELERITY_DEV_E2E_HELLO"));
    command.args(["--timeout-ms", "500"]).env("HELLO_GREETING_FILE", &fifo);
    let mut dev = Dev::spawn(command);

    // The handler blocks reading the FIFO until the deadline passes.
    let response = http(dev.port, "GET", "/hello", "");
    assert_eq!(response.status, 504, "{}\n{}", response.head, dev.text());
    assert!(header(&response, "content-type").starts_with("text/plain"), "{}", response.head);
    assert_eq!(response.body, "handler timed out");
    dev.wait_for("GET::/hello -> 504 deadline passed", PATIENCE);
    release(&fifo, "late");
}

#[test]
fn a_handler_error_is_500_with_its_text_and_no_media_type() {
    let mut dev = orders(&[("ORDERS_CHAOS", "1")]);
    let response = http(dev.port, "GET", "/orders/chaos:panic", "");
    assert_eq!(response.status, 500, "{}\n{}", response.head, dev.text());
    assert_eq!(response.header("content-type"), None, "{}", response.head);
    assert_eq!(response.body, "panic: the handler panicked");
    dev.wait_for("GET::/orders/{id} -> 500 HandlerError panic", PATIENCE);
}

#[test]
fn invoking_a_name_no_handler_has_is_the_runtimes_404() {
    let dev = orders(&[]);
    let body = r#"{"handlerName":"x","invocationType":"requestResponse","payload":{}}"#;
    let response = http(dev.port, "POST", "/runtime/handlers/invoke", body);
    assert_eq!(response.status, 404, "{}", response.head);
    assert_eq!(header(&response, "content-type"), "application/json");
    assert_eq!(
        response.body,
        r#"{"message":"no handler named 'x', which should be either the blueprint's spec.handlerName or the resource the handler is declared as"}"#
    );
}

#[test]
fn every_response_carries_the_request_id_the_dispatch_carried() {
    let mut dev = hello(&[]);
    let served = http(dev.port, "GET", "/hello", "");
    let id = header(&served, "x-request-id");
    let line = dev.wait_for("GET::/hello -> 200", PATIENCE);
    assert!(line.contains(&format!("-> 200 [x-request-id: {id}]")), "the dispatch's request id: {line}");

    // A client's own id is the request's id.
    let mine = read(send_raw(dev.port, "GET", "/hello", &[("x-request-id", "client-7f3a")], b""));
    assert_eq!(header(&mine, "x-request-id"), "client-7f3a");
    dev.wait_for("[x-request-id: client-7f3a]", PATIENCE);

    // Answers the runtime gives without a handler carry one too, each its own.
    let mut ids = vec![id];
    for response in [
        http(dev.port, "GET", "/nope", ""),
        http(dev.port, "DELETE", "/hello", ""),
        read(send_raw(dev.port, "POST", "/greetings/ada", &[], &vec![b'x'; 2 * 1024 * 1024 + 1])),
        http(dev.port, "POST", "/runtime/handlers/invoke", r#"{"handlerName":"nope","invocationType":"async"}"#),
    ] {
        let id = header(&response, "x-request-id");
        assert!(!ids.contains(&id), "{id} twice");
        ids.push(id);
    }
}

#[test]
fn a_websocket_connection_opens_with_the_capabilities_frame() {
    let dev = hello(&[]);
    let port = dev.port;
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async move {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let (mut ws, _) = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{port}/ws"), stream).await.unwrap();
        let first = tokio::time::timeout(PATIENCE, ws.next()).await.expect("no frame").unwrap().unwrap();
        assert_eq!(first, Message::binary(vec![1u8, 5, 0, 0]));
        // Then the connection is served as usual.
        ws.send(Message::text(r#"{"ping":true}"#)).await.unwrap();
        let pong = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
        assert_eq!(pong, Message::text(r#"{"pong":true}"#));
        ws.close(None).await.unwrap();
    });
}
