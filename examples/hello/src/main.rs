//! The smallest Celerity handler application: two HTTP handlers.
//!
//! Under the Celerity runtime, its blueprint declares `GET::/hello` and
//! `POST::/greetings/{name}`. Each handler is an `async fn` with an attribute
//! naming its tag; `#[celerity::main]` serves every handler so declared.
//!
//! `hello --manifest` (or `CELERITY_EXTRACT_MANIFEST=1 hello`) prints the
//! handler manifest as JSON instead of connecting.

use celerity::http::{HeaderMap, HttpError, Json, Path, Query, StatusCode};
use celerity::http_handler;
use serde::{Deserialize, Serialize};

/// `GET /hello`: a plain-text greeting, read from the file named by
/// `HELLO_GREETING_FILE` when it is set. A file that cannot be read is an
/// unhandled error: the runtime answers the caller with a 500.
#[http_handler("GET::/hello")]
async fn hello() -> Result<String, celerity::Error> {
    match std::env::var_os("HELLO_GREETING_FILE") {
        Some(path) => Ok(std::fs::read_to_string(path)?.trim().to_string()),
        None => Ok("hello from celerity-rs".to_string()),
    }
}

#[derive(Deserialize)]
struct Style {
    /// `?shout=true` answers in capitals.
    shout: Option<bool>,
}

#[derive(Deserialize)]
struct GreetingRequest {
    greeting: String,
}

#[derive(Serialize)]
struct Greeting {
    message: String,
}

/// `POST /greetings/{name}` with `{"greeting": "..."}`: a JSON greeting, and
/// two cookies remembering who was greeted and how.
#[http_handler("POST::/greetings/{name}")]
async fn greet(
    Path(name): Path<String>,
    Query(style): Query<Style>,
    Json(body): Json<GreetingRequest>,
) -> Result<(StatusCode, HeaderMap, Json<Greeting>), HttpError> {
    if body.greeting.trim().is_empty() {
        return Err(HttpError::bad_request("greeting must not be empty"));
    }
    let mut message = format!("{}, {name}!", body.greeting);
    if style.shout.unwrap_or(false) {
        message = message.to_uppercase();
    }
    let mut headers = HeaderMap::new();
    for cookie in [format!("last-greeted={name}"), format!("greeting={}", body.greeting)] {
        let value = cookie.parse().map_err(|_| HttpError::bad_request("the greeting cannot be put in a cookie"))?;
        headers.append("set-cookie", value);
    }
    Ok((StatusCode::CREATED, headers, Json(Greeting { message })))
}

#[celerity::main]
async fn main() -> celerity::Result<()> {
    celerity::App::new().run().await
}
