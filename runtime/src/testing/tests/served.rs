//! What an `App` carries reaches the handlers it serves in process.

use std::time::Duration;

use crate::http::StatusCode;
use crate::layer::{self, Answer, Event, Next};
use crate::settings::Settings;
use crate::testing::{AppRequest, TestRequest};
use crate::{App, State};

async fn stubborn() -> &'static str {
    tokio::time::sleep(Duration::from_secs(60)).await;
    "too late"
}

async fn broken() -> &'static str {
    panic!("the ledger is locked")
}

#[tokio::test(start_paused = true)]
async fn the_apps_settings_are_the_calls() {
    let settings = Settings { cancel_grace: Duration::from_millis(20), expose_panics: true, ..Settings::defaults() };
    let app = App::new()
        .without_compiled_handlers()
        .http("GET::/stubborn", stubborn)
        .http("GET::/broken", broken)
        .settings(settings)
        .into_test();
    let started = tokio::time::Instant::now();
    let call = app.call("GET::/stubborn", TestRequest::get("/stubborn")).deadline_in(Duration::from_millis(10));
    assert!(call.await.expect_error().is_deadline_exceeded());
    assert_eq!(started.elapsed(), Duration::from_millis(30), "the deadline, then the application's grace");
    let error = app.call("GET::/broken", TestRequest::get("/broken")).await.expect_error();
    assert_eq!(error.message(), "the ledger is locked", "exposed, as the application's settings say");
}

#[tokio::test]
async fn layers_and_state_are_the_apps() {
    async fn hello(greeting: State<&'static str>) -> String {
        greeting.to_string()
    }
    let closed = layer::from_fn(|event: Event, next: Next| async move {
        if event.tag() == "GET::/closed" {
            return Answer::http((StatusCode::SERVICE_UNAVAILABLE, "closed"));
        }
        next.run(event).await
    });
    let app = App::new()
        .without_compiled_handlers()
        .state("hi")
        .layer(closed)
        .http("GET::/hello", hello)
        .http("GET::/closed", hello)
        .into_test();
    let response = app.call("GET::/hello", TestRequest::get("/hello")).await.expect_http();
    assert_eq!(response.text(), "hi");
    let response = app.call("GET::/closed", TestRequest::get("/closed")).await.expect_http();
    assert_eq!((response.status(), response.text()), (StatusCode::SERVICE_UNAVAILABLE, "closed"));
}

#[tokio::test]
async fn a_handle_taken_from_the_app_before_is_recorded() {
    let app = App::new().without_compiled_handlers();
    let background = app.handle();
    let app = app.into_test();
    background.withhold();
    background.set_concurrency(2);
    assert_eq!(app.app_requests(), [AppRequest::Withhold, AppRequest::SetConcurrency(2)]);
}
