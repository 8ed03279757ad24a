//! Layers around handlers, in-process through `celerity::testing`, which
//! serves them as production does: their order, answers of their own, and
//! panics and deadlines inside them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use celerity::App;
use celerity::consumer::Record;
use celerity::http::{Path, StatusCode};
use celerity::layer::{self, Answer, Event, EventLayer, Next, Payload};
use celerity::testing::{TestBatch, TestRequest, TestTrigger};
use celerity::{Context, HandlerKey, HandlerKind, Registration};

type Log = Arc<Mutex<Vec<String>>>;

/// A layer that notes `name` on the way in and on the way out.
fn noting(log: &Log, name: &'static str) -> impl EventLayer {
    let log = Arc::clone(log);
    layer::from_fn(move |event: Event, next: Next| {
        let log = Arc::clone(&log);
        async move {
            log.lock().unwrap().push(format!("{name} in"));
            let answer = next.run(event).await;
            log.lock().unwrap().push(format!("{name} out"));
            answer
        }
    })
}

async fn get_order(Path(id): Path<u32>, log: celerity::State<Log>) -> String {
    log.lock().unwrap().push("handler".to_string());
    format!("order {id}")
}

#[tokio::test]
async fn layers_run_app_wide_then_per_kind_then_per_handler_outermost_first() {
    let log: Log = Arc::default();
    let handler = Registration::http(HandlerKey::Tag("GET::/orders/{id}".into()), get_order)
        .layer(noting(&log, "handler 1"))
        .layer(noting(&log, "handler 2"));
    let app = App::new()
        .without_compiled_handlers()
        .state(Arc::clone(&log))
        .layer_for(HandlerKind::Http, noting(&log, "kind"))
        .layer(noting(&log, "app 1"))
        .layer_for(HandlerKind::Consumer, noting(&log, "consumers only"))
        .layer(noting(&log, "app 2"))
        .register(handler)
        .into_test();
    let response = app.call("GET::/orders/{id}", TestRequest::get("/orders/7")).await.expect_http();
    assert_eq!(response.text(), "order 7");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "app 1 in",
            "app 2 in",
            "kind in",
            "handler 1 in",
            "handler 2 in",
            "handler",
            "handler 2 out",
            "handler 1 out",
            "kind out",
            "app 2 out",
            "app 1 out"
        ]
    );
}

#[tokio::test]
async fn a_layer_answers_on_its_own_without_calling_the_handler() {
    let called = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&called);
    let limit = layer::from_fn(|event: Event, next: Next| async move {
        let over = event.request().is_some_and(|request| request.headers().contains_key("x-over-limit"));
        if over { Answer::http((StatusCode::TOO_MANY_REQUESTS, "slow down")) } else { next.run(event).await }
    });
    let app = App::new()
        .without_compiled_handlers()
        .layer(limit)
        .http("GET::/hello", move || {
            let seen = Arc::clone(&seen);
            async move {
                *seen.lock().unwrap() += 1;
                "hello"
            }
        })
        .into_test();
    let limited = app.call("GET::/hello", TestRequest::get("/hello").header("x-over-limit", "1")).await.expect_http();
    assert_eq!((limited.status(), limited.text()), (StatusCode::TOO_MANY_REQUESTS, "slow down"));
    let served = app.call("GET::/hello", TestRequest::get("/hello")).await.expect_http();
    assert_eq!(served.text(), "hello");
    assert_eq!(*called.lock().unwrap(), 1);
}

#[tokio::test]
async fn a_consumer_layer_fails_the_batch_whole() {
    let paused = layer::from_fn(|event: Event, next: Next| async move {
        match event.payload() {
            Payload::Consumer(batch) if batch.source_id() == "paused-queue" => {
                Answer::failure(event.kind(), "the queue is paused")
            }
            _ => next.run(event).await,
        }
    });
    async fn process(_record: Record<serde_json::Value>) {}
    let app = App::new()
        .without_compiled_handlers()
        .layer_for(HandlerKind::Consumer, paused)
        .consumer("source::paused-queue::process", process)
        .consumer("source::live-queue::process", process)
        .into_test();
    let batch = || TestBatch::new().record("m-1", "{}").record("m-2", "{}");
    let result = app.call("source::paused-queue::process", batch()).await.expect_batch();
    assert!(result.is_whole_batch_failure(), "{result:?}");
    let result = app.call("source::live-queue::process", batch()).await.expect_batch();
    assert!(result.is_success(), "{result:?}");
}

#[tokio::test]
async fn a_layer_sees_the_handlers_answer_and_may_change_the_event() {
    let tenant = layer::from_fn(|mut event: Event, next: Next| async move {
        if let Payload::Http(request) = event.payload_mut() {
            *request = request.clone().with_header("x-tenant", "acme");
        }
        let answer = next.run(event).await;
        assert_eq!(answer.http_status(), Some(StatusCode::OK));
        answer
    });
    async fn whoami(request: celerity::http::Request) -> String {
        request.headers()["x-tenant"].to_str().unwrap().to_string()
    }
    let app = App::new().without_compiled_handlers().layer(tenant).http("GET::/whoami", whoami).into_test();
    assert_eq!(app.call("GET::/whoami", TestRequest::get("/whoami")).await.expect_http().text(), "acme");
}

#[tokio::test]
async fn a_panic_in_a_layer_is_answered_as_a_handlers_panic() {
    let broken = layer::from_fn(|_event: Event, _next: Next| async move { panic!("the layer broke") });
    let app =
        App::new().without_compiled_handlers().layer(broken).http("GET::/hello", || async { "hello" }).into_test();
    let error = app.call("GET::/hello", TestRequest::get("/hello")).await.expect_error();
    assert!(error.is_panic(), "{error:?}");
    assert_eq!(error.message(), "the handler panicked");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_covers_the_layers_and_the_handler_together() {
    // The layer takes 600 ms and the handler 600 ms: each alone fits the
    // one-second deadline, both together do not.
    let slow = layer::from_fn(|event: Event, next: Next| async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        next.run(event).await
    });
    async fn work(cx: Context) -> celerity::Result<()> {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(600)) => Ok(()),
            reason = cx.cancelled() => Err(celerity::Error::msg(format!("stopped: {reason}"))),
        }
    }
    let app = App::new().without_compiled_handlers().layer(slow).schedule("source::nightly::work", work).into_test();
    let outcome = app.call("source::nightly::work", TestTrigger::new()).deadline_in(Duration::from_secs(1)).await;
    let ack = outcome.expect_ack();
    assert_eq!(ack.error_message(), Some("stopped: deadline exceeded"), "{ack:?}");
    // Without the layer, the same handler finishes in time.
    let app = App::new().without_compiled_handlers().schedule("source::nightly::work", work).into_test();
    let outcome = app.call("source::nightly::work", TestTrigger::new()).deadline_in(Duration::from_secs(1)).await;
    assert!(outcome.expect_ack().is_success());
}

#[tokio::test]
async fn tower_layers_of_any_request_type_work_on_every_kind() {
    // tower's own concurrency limit is generic over the request type.
    let app = App::new()
        .without_compiled_handlers()
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .schedule("source::nightly::work", || async {})
        .http("GET::/hello", || async { "hello" })
        .into_test();
    assert!(app.call("source::nightly::work", TestTrigger::new()).await.expect_ack().is_success());
    assert_eq!(app.call("GET::/hello", TestRequest::get("/hello")).await.expect_http().text(), "hello");
}
