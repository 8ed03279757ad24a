//! The API Gateway Management API's `PostToConnection`: one message to one
//! WebSocket connection, signed with SigV4 (service `execute-api`) from the
//! function's own credentials, which Lambda puts in its environment
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`).
//!
//! The endpoint is the WebSocket API's own, `https://{domain}/{stage}`, or
//! `AWS_ENDPOINT_URL_APIGATEWAYMANAGEMENTAPI` when set (the AWS SDKs' name
//! for this service's endpoint), which may be plain HTTP.

use std::fmt;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::excerpt::excerpt_bytes;

/// The variable that overrides the Management API's endpoint.
pub(crate) const ENDPOINT_VARIABLE: &str = "AWS_ENDPOINT_URL_APIGATEWAYMANAGEMENTAPI";

/// What a connection id is escaped with in the request path: all but the
/// unreserved characters.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// What is needed to sign: credentials and region.
#[derive(Clone)]
struct Signer {
    credentials: Credentials,
    region: String,
}

/// A client of the Management API.
pub(crate) struct ManagementApi {
    http: Client<HttpConnector, Full<Bytes>>,
    /// `Err`: why HTTPS is unavailable (no CA certificates could be loaded).
    https: Result<Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>, String>,
    /// `Err`: which variable is missing.
    signer: Result<Signer, String>,
    /// The endpoint set in the environment, over the event's.
    pub(crate) endpoint_override: Option<String>,
}

impl fmt::Debug for ManagementApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagementApi").field("endpoint_override", &self.endpoint_override).finish_non_exhaustive()
    }
}

impl ManagementApi {
    /// A client configured from `lookup` (a variable name to its value).
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| lookup(name).filter(|value| !value.is_empty());
        let signer = match (set("AWS_ACCESS_KEY_ID"), set("AWS_SECRET_ACCESS_KEY")) {
            (Some(key), Some(secret)) => match set("AWS_REGION").or_else(|| set("AWS_DEFAULT_REGION")) {
                Some(region) => Ok(Signer {
                    credentials: Credentials::new(key, secret, set("AWS_SESSION_TOKEN"), None, "environment"),
                    region,
                }),
                None => Err("AWS_REGION is not set".to_string()),
            },
            _ => Err("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set".to_string()),
        };
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map(|builder| Client::builder(TokioExecutor::new()).build(builder.https_or_http().enable_http1().build()))
            .map_err(|error| format!("no CA certificates could be loaded for HTTPS: {error}"));
        ManagementApi {
            http: Client::builder(TokioExecutor::new()).build_http(),
            https,
            signer,
            endpoint_override: set(ENDPOINT_VARIABLE).map(|endpoint| endpoint.trim_end_matches('/').to_string()),
        }
    }

    /// Posts `data` to `connection_id` at the Management API at `endpoint`.
    /// The error says what went wrong, as a `WsSendFailure` carries it.
    pub(crate) async fn post_to_connection(
        &self,
        endpoint: &str,
        connection_id: &str,
        data: Bytes,
    ) -> Result<(), String> {
        let signer = self.signer.as_ref().map_err(|missing| format!("cannot sign PostToConnection: {missing}"))?;
        let uri = format!(
            "{}/@connections/{}",
            endpoint.trim_end_matches('/'),
            utf8_percent_encode(connection_id, PATH_SEGMENT)
        );
        let parsed: http::Uri =
            uri.parse().map_err(|error| format!("the endpoint {endpoint:?} is not a URL: {error}"))?;
        let host = parsed.authority().map(|authority| authority.to_string()).unwrap_or_default();
        let mut request = http::Request::post(&uri)
            .header(http::header::HOST, &host)
            .header(http::header::CONTENT_TYPE, "application/octet-stream")
            .body(Full::new(data.clone()))
            .map_err(|error| format!("the request could not be built: {error}"))?;
        let identity = signer.credentials.clone().into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&signer.region)
            .name("execute-api")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|error| format!("cannot sign PostToConnection: {error}"))?
            .into();
        let headers = [("host", host.as_str()), ("content-type", "application/octet-stream")];
        let signable = SignableRequest::new("POST", uri.as_str(), headers.into_iter(), SignableBody::Bytes(&data))
            .map_err(|error| format!("cannot sign PostToConnection: {error}"))?;
        let (instructions, _) =
            sign(signable, &params).map_err(|error| format!("cannot sign PostToConnection: {error}"))?.into_parts();
        instructions.apply_to_request_http1x(&mut request);

        let response = if parsed.scheme_str() == Some("http") {
            self.http.request(request).await
        } else {
            self.https.as_ref().map_err(Clone::clone)?.request(request).await
        }
        .map_err(|error| format!("PostToConnection could not reach {endpoint}: {error}"))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body = response.into_body().collect().await.map(|body| body.to_bytes()).unwrap_or_default();
        Err(refusal(status, &body))
    }
}

/// What a post the API answered with `status` (not a success) failed with:
/// the API's own words, cut as every echo is.
fn refusal(status: http::StatusCode, body: &[u8]) -> String {
    match status.as_u16() {
        410 => "gone: the connection is closed".to_string(),
        403 => format!("forbidden: the function may not post to this API ({})", excerpt_bytes(body)),
        _ => format!("PostToConnection answered {status}: {}", excerpt_bytes(body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_post_says_what_the_api_answered_cut_to_an_excerpt() {
        let status = |code| http::StatusCode::from_u16(code).unwrap();
        assert_eq!(refusal(status(410), b"{}"), "gone: the connection is closed");
        assert_eq!(
            refusal(status(403), br#"{"message":"Forbidden"}"#),
            r#"forbidden: the function may not post to this API ({"message":"Forbidden"})"#
        );
        let long = format!("{{\"message\":\"{}\"}}", "x".repeat(5_000));
        let message = refusal(status(429), long.as_bytes());
        assert!(message.starts_with(r#"PostToConnection answered 429 Too Many Requests: {"message":"xx"#), "{message}");
        assert!(message.ends_with(&format!("... ({} bytes)", long.len())), "{message}");
        assert!(message.len() < 400, "{message}");
    }

    #[tokio::test]
    async fn without_credentials_a_post_fails_saying_so() {
        let api = ManagementApi::from_lookup(|_| None);
        let error = api.post_to_connection("http://127.0.0.1:9", "c-1", Bytes::new()).await.unwrap_err();
        assert!(error.contains("AWS_ACCESS_KEY_ID"), "{error}");
        let api = ManagementApi::from_lookup(|name| match name {
            "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" => Some("x".into()),
            ENDPOINT_VARIABLE => Some("http://127.0.0.1:1/".into()),
            _ => None,
        });
        assert_eq!(api.endpoint_override.as_deref(), Some("http://127.0.0.1:1"));
        let error = api.post_to_connection("http://127.0.0.1:9", "c-1", Bytes::new()).await.unwrap_err();
        assert!(error.contains("AWS_REGION"), "{error}");
    }
}
