//! A request with more header names than `celerity::http::MAX_HEADER_NAMES`,
//! over a real socket: answered 431, never a panic, whether or not its
//! handler reads the headers, and the process serves on.

use std::time::Duration;

use celerity::App;
use celerity::http::{HeaderMap, MAX_HEADER_NAMES};
use celerity::proto::v1::result::Outcome;
use celerity::{HandlerKey, Registration};
use celerity_testkit::{Connection, TestRuntime, event};
use serde_json::Value;

/// How many header names and values the handler saw.
async fn count(headers: HeaderMap) -> String {
    format!("{} names, {} values", headers.keys_len(), headers.len())
}

async fn ignore() -> &'static str {
    "served"
}

/// The status and body the runtime gets for `GET path` with `names`
/// distinct header names (`x-f-0` ...), each with `values_each` values.
async fn answer(conn: &Connection, path: &str, names: usize, values_each: usize) -> (u32, String) {
    let mut request = event::http("GET", path);
    for i in 0..names {
        for _ in 0..values_each {
            request = request.header(format!("x-f-{i}"), "v");
        }
    }
    match conn.call(request).await.expect("an answer").outcome {
        Some(Outcome::Http(response)) => (response.status, String::from_utf8_lossy(&response.body).into_owned()),
        other => panic!("not an HTTP answer for {names} names: {other:?}"),
    }
}

/// The 431 a request with `names` header names gets, its body parsed.
fn refusal(names: usize) -> (u32, Value) {
    let message = format!("the request has {names} header names; at most 24576 are accepted");
    (431, serde_json::json!({ "message": message }))
}

fn parsed((status, body): (u32, String)) -> (u32, Value) {
    (status, serde_json::from_str(&body).unwrap_or_else(|_| panic!("a JSON body: {body}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_limit_a_request_is_431_and_at_it_every_header_is_seen() {
    assert_eq!(MAX_HEADER_NAMES, 24_576);
    let runtime = TestRuntime::builder()
        .handler("count", "GET::/count")
        .handler("ignore", "GET::/ignore")
        .bind()
        .await
        .expect("the test runtime binds");
    let settings = runtime.app_settings(&[]);
    let app = App::new()
        .register(Registration::http(HandlerKey::Tag("GET::/count".into()), count))
        .register(Registration::http(HandlerKey::Tag("GET::/ignore".into()), ignore))
        .without_compiled_handlers()
        .settings(settings);
    let served = tokio::spawn(app.run());
    let conn = runtime.accept().await.expect("a handshake").accepted().expect("Ready accepted");

    assert_eq!(answer(&conn, "/count", 24_576, 1).await, (200, "24576 names, 24576 values".to_string()));
    // A full map still takes every further value of a name it holds.
    assert_eq!(answer(&conn, "/count", 24_576, 2).await, (200, "24576 names, 49152 values".to_string()));
    for names in [24_577, 32_768, 100_000] {
        assert_eq!(parsed(answer(&conn, "/count", names, 1).await), refusal(names), "{names} names");
        assert_eq!(
            parsed(answer(&conn, "/ignore", names, 1).await),
            refusal(names),
            "{names} names, headers never read"
        );
    }
    assert_eq!(answer(&conn, "/count", 3, 1).await, (200, "3 names, 3 values".to_string()), "it serves on");

    conn.assert_no_violations();
    conn.drain_in(Duration::from_secs(5)).expect("drain");
    let ended = tokio::time::timeout(Duration::from_secs(10), served).await.expect("the app stops");
    ended.expect("the app task").expect("the app ends without error");
}
