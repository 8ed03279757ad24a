//! The typed views of an outcome, and what `expect_*` says when the shape
//! is not the one expected.

use std::collections::HashMap;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, result::Outcome as WireOutcome};
use http::{HeaderMap, HeaderValue, StatusCode};

use crate::App;
use crate::testing::{Outcome, TestRequest};

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let panic = std::panic::catch_unwind(f).unwrap_err();
    panic.downcast_ref::<String>().cloned().unwrap_or_else(|| panic.downcast_ref::<&str>().unwrap().to_string())
}

fn error(kind: &str, message: &str) -> Outcome {
    Outcome::from_wire(WireOutcome::Error(pb::HandlerError {
        message: message.into(),
        r#type: kind.into(),
        stack: String::new(),
    }))
}

#[tokio::test]
async fn an_http_outcome_keeps_every_header_value_and_the_wire() {
    async fn cookies() -> (StatusCode, HeaderMap, &'static str) {
        let mut headers = HeaderMap::new();
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        headers.append("set-cookie", HeaderValue::from_static("b=2"));
        (StatusCode::CREATED, headers, "made")
    }
    let app = App::new().without_compiled_handlers().http("POST::/cookies", cookies).into_test();
    let outcome = app.call("POST::/cookies", TestRequest::post("/cookies")).await;
    let wire = outcome.clone().into_wire();
    let response = outcome.expect_http();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.header_all("set-cookie"), ["a=1", "b=2"]);
    assert_eq!(response.header("SET-COOKIE"), Some("a=1"));
    assert_eq!(response.headers().get_all("set-cookie").iter().count(), 2);
    assert_eq!((response.text(), response.body().as_ref()), ("made", &b"made"[..]));
    let WireOutcome::Http(http) = &wire else { panic!("not HTTP") };
    assert_eq!(response.wire(), http);
    assert_eq!(response.into_wire().headers["set-cookie"].values, ["a=1", "b=2"]);
}

#[test]
fn the_wire_round_trips_for_every_shape() {
    let outcomes = [
        WireOutcome::Http(pb::HttpResponse {
            status: 200,
            headers: HashMap::from([("bad name".to_string(), pb::Values { values: vec!["x".into()] })]),
            body: Bytes::from_static(b"ok"),
        }),
        WireOutcome::Websocket(pb::Ack { success: true, error_message: String::new() }),
        WireOutcome::Consumer(pb::BatchResult { success: false, failures: vec![] }),
        WireOutcome::Schedule(pb::Ack { success: false, error_message: "x".into() }),
        WireOutcome::Custom(pb::CustomInvokeResult { output: Bytes::from_static(b"1"), error_message: String::new() }),
        WireOutcome::Error(pb::HandlerError { message: "m".into(), r#type: "t".into(), stack: "s".into() }),
    ];
    for wire in outcomes {
        let outcome = Outcome::from(wire.clone());
        assert_eq!(WireOutcome::from(outcome), wire);
    }
}

#[test]
fn a_header_that_is_not_http_stays_on_the_wire_only() {
    let wire = pb::HttpResponse {
        status: 200,
        headers: HashMap::from([("bad name".to_string(), pb::Values { values: vec!["x".into()] })]),
        body: Bytes::new(),
    };
    let response = Outcome::from_wire(WireOutcome::Http(wire)).expect_http();
    assert!(response.headers().is_empty());
    assert!(response.wire().headers.contains_key("bad name"));
    assert_eq!(response.to_string(), "an HTTP response with status 200 and no body");
}

#[test]
fn a_long_body_is_echoed_cut_and_a_binary_one_by_its_length() {
    let response = |body: Vec<u8>| {
        let wire = pb::HttpResponse { status: 500, headers: HashMap::new(), body: body.into() };
        Outcome::from_wire(WireOutcome::Http(wire)).expect_http().to_string()
    };
    let kept = "a".repeat(crate::excerpt::QUOTED_BYTES);
    assert_eq!(response(vec![b'a'; 10_000]), format!("an HTTP response with status 500: {kept:?}... (10000 bytes)"));
    assert_eq!(response(vec![0xff, 0xfe]), "an HTTP response with status 500: 2 bytes of binary");
}

#[test]
fn expect_names_what_came_instead() {
    let message = panic_message(|| {
        error("panic", "boom").expect_http();
    });
    assert_eq!(
        message,
        r#"expected an HTTP response, but the handler answered with a HandlerError of type "panic": boom"#
    );

    let not_found = Outcome::from_wire(WireOutcome::Http(pb::HttpResponse {
        status: 404,
        headers: HashMap::new(),
        body: Bytes::from_static(b"no such order"),
    }));
    let message = panic_message(|| {
        not_found.expect_batch();
    });
    assert_eq!(
        message,
        r#"expected a batch result, but the handler answered with an HTTP response with status 404: "no such order""#
    );

    let ack = Outcome::from_wire(WireOutcome::Websocket(pb::Ack { success: false, error_message: "full".into() }));
    let message = panic_message(|| {
        ack.expect_error();
    });
    assert_eq!(message, r#"expected a HandlerError, but the handler answered with a WebSocket Ack (failed: "full")"#);

    let batch = Outcome::from_wire(WireOutcome::Consumer(pb::BatchResult {
        success: false,
        failures: vec![pb::RecordFailure { message_id: "m-1".into(), error_message: "bad".into() }],
    }));
    let message = panic_message(|| {
        batch.expect_custom();
    });
    assert!(message.ends_with(r#"a batch result with 1 failed record(s): "m-1" (bad)"#), "{message}");

    let custom = Outcome::from_wire(WireOutcome::Custom(pb::CustomInvokeResult {
        output: Bytes::new(),
        error_message: "nope".into(),
    }));
    let message = panic_message(|| {
        custom.expect_ack();
    });
    assert!(message.ends_with(r#"a custom result with error_message "nope""#), "{message}");
}

#[test]
fn json_and_text_panics_show_the_body() {
    let response = Outcome::from_wire(WireOutcome::Http(pb::HttpResponse {
        status: 200,
        headers: HashMap::new(),
        body: Bytes::from_static(b"<html>"),
    }))
    .expect_http();
    let message = panic_message(|| {
        let _: serde_json::Value = response.json();
    });
    assert!(message.starts_with("the response body is not JSON that fits serde_json::value::Value"), "{message}");
    assert!(message.ends_with(r#"the body: "<html>""#), "{message}");

    let binary = Outcome::from_wire(WireOutcome::Http(pb::HttpResponse {
        status: 1000,
        headers: HashMap::new(),
        body: Bytes::from_static(&[0xff]),
    }))
    .expect_http();
    assert_eq!(
        panic_message(|| {
            let _ = binary.text();
        }),
        "the response body is not UTF-8 (1 bytes)"
    );
    assert_eq!(
        panic_message(|| {
            let _ = binary.status();
        }),
        "the response's status 1000 is not an HTTP status"
    );
}

#[test]
fn handler_errors_say_what_they_are() {
    let panic = error("panic", "boom").expect_error();
    assert!(panic.is_panic() && !panic.is_cancelled() && !panic.is_deadline_exceeded());
    assert!(error("DeadlineExceeded", "").expect_error().is_deadline_exceeded());
    assert!(error("Cancelled", "").expect_error().is_cancelled());
    let error = error("Error", "m");
    assert!(error.is_error());
    assert_eq!(error.as_error().unwrap().message(), "m");
    assert_eq!(error.as_error().unwrap().stack(), "");
}
