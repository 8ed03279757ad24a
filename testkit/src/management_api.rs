//! A local stand-in for the API Gateway Management API endpoint of a
//! WebSocket API, recording the `PostToConnection` calls a Lambda function
//! makes to send to its connections.
//!
//! Each call must be `POST {stage}/@connections/{connectionId}` signed with
//! SigV4: an `Authorization` header of the form `AWS4-HMAC-SHA256
//! Credential={key}/{date}/{region}/execute-api/aws4_request,
//! SignedHeaders=..., Signature={64 hex digits}` and an `x-amz-date`. The
//! signature itself is not checked. A call that is not of that form is
//! answered 403 and is a [violation](ManagementApi::violations). A
//! connection marked [gone](ManagementApi::gone) is answered 410, as API
//! Gateway answers for a closed connection.

use std::collections::HashSet;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use percent_encoding::percent_decode_str;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One `PostToConnection` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostToConnection {
    /// The connection, decoded from the path.
    pub connection_id: String,
    /// The message.
    pub data: Bytes,
    /// The path as sent.
    pub path: String,
    /// The `Authorization` header.
    pub authorization: String,
}

#[derive(Default)]
struct Shared {
    gone: Mutex<HashSet<String>>,
    violations: Mutex<Vec<String>>,
}

/// The stand-in, on 127.0.0.1. Dropping it stops serving.
///
/// ```no_run
/// use std::time::Duration;
///
/// use celerity_testkit::{LambdaRuntimeApi, ManagementApi};
///
/// # async fn example() -> std::io::Result<()> {
/// let (lambda, management) = (LambdaRuntimeApi::start().await?, ManagementApi::start().await?);
/// let endpoint = ("AWS_ENDPOINT_URL_APIGATEWAYMANAGEMENTAPI", management.endpoint("live"));
/// // ... start the function with `lambda.env()` and `endpoint`, invoke it ...
/// management.gone("closed-connection");
/// if let Some(post) = management.next_post(Duration::from_secs(5)).await {
///     println!("{} <- {:?}", post.connection_id, post.data);
/// }
/// # Ok(())
/// # }
/// ```
pub struct ManagementApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    posts: tokio::sync::Mutex<mpsc::UnboundedReceiver<PostToConnection>>,
    task: tokio::task::JoinHandle<()>,
}

impl ManagementApi {
    /// Binds a free port on loopback and serves there.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let (recorded, posts) = mpsc::unbounded_channel();
        let served = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (shared, recorded) = (Arc::clone(&served), recorded.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let (shared, recorded) = (Arc::clone(&shared), recorded.clone());
                        async move { Ok::<_, Infallible>(post(&shared, &recorded, request).await) }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Ok(ManagementApi { addr, shared, posts: tokio::sync::Mutex::new(posts), task })
    }

    /// The endpoint of the stage `stage`, as `AWS_ENDPOINT_URL_APIGATEWAYMANAGEMENTAPI`
    /// holds it: `http://127.0.0.1:{port}/{stage}`.
    pub fn endpoint(&self, stage: &str) -> String {
        format!("http://{}/{stage}", self.addr)
    }

    /// Answers every later call for `connection_id` with 410 Gone.
    pub fn gone(&self, connection_id: impl Into<String>) {
        self.shared.gone.lock().unwrap_or_else(PoisonError::into_inner).insert(connection_id.into());
    }

    /// The next call accepted or refused as gone, waiting up to `wait`.
    pub async fn next_post(&self, wait: Duration) -> Option<PostToConnection> {
        tokio::time::timeout(wait, async { self.posts.lock().await.recv().await }).await.ok().flatten()
    }

    /// Calls that were not a signed `PostToConnection`.
    pub fn violations(&self) -> Vec<String> {
        self.shared.violations.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for ManagementApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn post(
    shared: &Shared,
    recorded: &mpsc::UnboundedSender<PostToConnection>,
    request: Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    let refuse = |why: String| {
        shared.violations.lock().unwrap_or_else(PoisonError::into_inner).push(format!("{path}: {why}"));
        status(StatusCode::FORBIDDEN, r#"{"message":"Forbidden"}"#)
    };
    if request.method() != Method::POST {
        return refuse(format!("{} instead of POST", request.method()));
    }
    let Some(connection) = path.rsplit_once("/@connections/").map(|(_, id)| id) else {
        return refuse("not a path to @connections/{connectionId}".to_string());
    };
    let connection_id = percent_decode_str(connection).decode_utf8_lossy().into_owned();
    let header =
        |name: &str| request.headers().get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let authorization = header("authorization").unwrap_or_default();
    if let Err(why) = check_authorization(&authorization) {
        return refuse(why);
    }
    if header("x-amz-date").is_none() {
        return refuse("no x-amz-date header".to_string());
    }
    let data = request.into_body().collect().await.map(|body| body.to_bytes()).unwrap_or_default();
    let _ = recorded.send(PostToConnection { connection_id: connection_id.clone(), data, path, authorization });
    if shared.gone.lock().unwrap_or_else(PoisonError::into_inner).contains(&connection_id) {
        return status(StatusCode::GONE, r#"{"message":"GoneException"}"#);
    }
    status(StatusCode::OK, "")
}

/// Whether `header` is a SigV4 `Authorization` for `execute-api`.
fn check_authorization(header: &str) -> Result<(), String> {
    let Some(fields) = header.strip_prefix("AWS4-HMAC-SHA256 ") else {
        return Err(format!("the Authorization header is not SigV4: {header:?}"));
    };
    let field = |name: &str| {
        fields.split(',').map(str::trim).find_map(|part| part.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
    };
    let credential: Vec<&str> = field("Credential").unwrap_or_default().split('/').collect();
    let scope_ok = matches!(credential.as_slice(),
        [key, date, region, "execute-api", "aws4_request"]
            if !key.is_empty() && date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) && !region.is_empty());
    if !scope_ok {
        return Err(format!("the credential scope is not KEY/DATE/REGION/execute-api/aws4_request: {header:?}"));
    }
    let signed = field("SignedHeaders").unwrap_or_default();
    if !signed.split(';').any(|name| name == "host") || !signed.split(';').any(|name| name == "x-amz-date") {
        return Err(format!("host and x-amz-date are not among the signed headers: {header:?}"));
    }
    let signature = field("Signature").unwrap_or_default();
    if signature.len() != 64 || !signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("the signature is not 64 hex digits: {header:?}"));
    }
    Ok(())
}

fn status(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sigv4_header_is_told_from_others() {
        let good = "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/execute-api/aws4_request, \
                    SignedHeaders=content-type;host;x-amz-date, \
                    Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
        assert_eq!(check_authorization(good), Ok(()));
        for bad in [
            "",
            "Bearer token",
            "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
            &good.replace("Signature=5d67", "Signature=zz67"),
            &good.replace("host;", ""),
        ] {
            assert!(check_authorization(bad).is_err(), "{bad}");
        }
    }
}
