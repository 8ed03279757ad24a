//! Between the SDK's HTTP types and the `http` crate's, for tower services:
//! a [`Request`] becomes an `http::Request<Body>` and back, and whatever
//! response a service gives becomes the wire's, its body collected up to a
//! limit.

use bytes::Bytes;
use celerity_proto::v1 as pb;
use http::{HeaderName, HeaderValue, StatusCode, Uri};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

use super::{Body, Headers, HttpError, Params, Request, SourceIp, headers_to_wire};
use crate::context::Context;
use crate::error::Error;
use crate::text::Text;

/// What an `http::Request` made from a [`Request`] carries in its
/// extensions: what the `http` types have no place for, so that the SDK
/// request can be rebuilt once a service is done with it. The event's
/// [`Context`] is there too, for services that read it.
#[derive(Clone)]
pub(crate) struct Carried {
    route: Text,
    path_params: Params,
    source_ip: SourceIp,
    request_id: Text,
    /// The query as the runtime sent it, with the URI it was written into:
    /// a service that leaves the URI alone leaves the query as it came.
    query: Params,
    uri: Uri,
}

/// Bytes a path keeps encoded in a URI: those `Uri` refuses, and `?` and
/// `#`, which would end the path.
const NOT_IN_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'#')
    .add(b'?')
    .add(b'^')
    .add(b'|');

/// The URI of `path` and `query`: the raw path as it came, and the query
/// written back in form encoding from the decoded parameters the runtime
/// sends (parameters in name order, each name's values in order).
pub(crate) fn uri(path: &str, query: &Params) -> Uri {
    let mut text = String::with_capacity(path.len() + 1);
    text.push_str(if path.is_empty() { "/" } else { path });
    if !query.is_empty() {
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (name, values) in query.iter() {
            for value in values {
                serializer.append_pair(name, value);
            }
        }
        text.push('?');
        text.push_str(&serializer.finish());
    }
    Uri::try_from(text.as_str()).unwrap_or_else(|_| {
        // A raw path with bytes a URI cannot hold: kept, encoded.
        let path = utf8_percent_encode(text.split('?').next().unwrap_or("/"), NOT_IN_PATH).to_string();
        let query = text.split_once('?').map(|(_, query)| query);
        let text = match query {
            Some(query) => format!("{path}?{query}"),
            None => path,
        };
        Uri::try_from(text).unwrap_or_else(|_| Uri::from_static("/"))
    })
}

/// `request` as an `http::Request`, for a tower service; `cx` goes in its
/// extensions.
pub(crate) fn into_http(request: Request, cx: &Context) -> http::Request<Body> {
    let uri = uri(&request.path, &request.query);
    let carried = Carried {
        route: request.route,
        path_params: request.path_params,
        source_ip: request.source_ip,
        request_id: request.request_id,
        query: request.query,
        uri: uri.clone(),
    };
    let mut headers = request.headers;
    let headers = headers.take_map();
    let mut http = http::Request::new(Body::new(request.body));
    *http.method_mut() = request.method;
    *http.uri_mut() = uri;
    *http.headers_mut() = headers;
    http.extensions_mut().insert(carried);
    http.extensions_mut().insert(cx.clone());
    http
}

/// The SDK request a service handed on, its body read up to `limit` bytes:
/// method, URI, headers and body as the service left them, the rest as the
/// runtime sent it.
pub(crate) async fn from_http<B>(request: http::Request<B>, limit: usize) -> Result<Request, HttpError>
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (mut parts, body) = request.into_parts();
    let body = collect(body, limit).await.map_err(|error| match error {
        Collect::TooLarge => HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than the {limit} bytes it may have"),
        ),
        Collect::Failed(error) => HttpError::bad_request(format!("the request body could not be read: {error}")),
    })?;
    let carried = parts.extensions.remove::<Carried>();
    let path = parts.uri.path().to_string();
    let query = match carried.as_ref() {
        Some(carried) if carried.uri == parts.uri => carried.query.clone(),
        _ => parts.uri.query().map(parse_query).unwrap_or_default(),
    };
    let (route, path_params, source_ip, request_id) = match carried {
        Some(carried) => (carried.route, carried.path_params, carried.source_ip, carried.request_id),
        None => (Text::from(path.clone()), Params::new(), SourceIp::default(), Text::default()),
    };
    Ok(Request {
        method: parts.method,
        path: Text::from(path),
        route,
        path_params,
        query,
        headers: Headers::from_map(parts.headers),
        source_ip,
        request_id,
        body,
    })
}

/// A query string's parameters, decoded by form rules, in name order as
/// the runtime gives them.
fn parse_query(query: &str) -> Params {
    let mut params = Params::new();
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        params.push(name.into_owned(), value.into_owned());
    }
    Params::from_wire_sorted(params.iter().map(|(name, values)| (name.to_string(), values.to_vec())))
}

/// A wire response as an `http::Response`, for the services around the
/// handler. A header the `http` types cannot hold is left out.
pub(crate) fn response_into_http(response: pb::HttpResponse) -> http::Response<Body> {
    let mut http = http::Response::new(Body::new(response.body));
    *http.status_mut() = u16::try_from(response.status)
        .ok()
        .and_then(|status| StatusCode::from_u16(status).ok())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = http.headers_mut();
    for (name, values) in response.headers {
        let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else { continue };
        for value in values.values {
            if let Ok(value) = HeaderValue::try_from(value) {
                headers.append(name.clone(), value);
            }
        }
    }
    http
}

/// Whatever response a service gave, on the wire: every header value kept,
/// the body read up to `limit` bytes. A body past the limit is an error, not
/// a response cut short.
pub(crate) async fn response_from_http<B>(response: http::Response<B>, limit: usize) -> Result<pb::HttpResponse, Error>
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = response.into_parts();
    let body = collect(body, limit).await.map_err(|error| match error {
        Collect::TooLarge => Error::typed(
            "ResponseTooLarge",
            format!(
                "the response body is larger than the {limit} bytes a message to the runtime can carry; it was not sent"
            ),
        ),
        Collect::Failed(error) => Error::typed("ResponseBodyFailed", format!("the response body failed: {error}")),
    })?;
    Ok(pb::HttpResponse { status: u32::from(parts.status.as_u16()), headers: headers_to_wire(parts.headers), body })
}

/// Why a body could not be read.
enum Collect {
    TooLarge,
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

async fn collect<B>(body: B, limit: usize) -> Result<Bytes, Collect>
where
    B: http_body::Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(Collect::TooLarge),
        Err(error) => Err(Collect::Failed(error)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use http::Method;

    use super::*;

    fn cx() -> Context {
        Context::detached("POST::/orders/{id}")
    }

    #[test]
    fn the_uri_is_the_raw_path_and_the_query_written_back() {
        let mut query = Params::new();
        query.push("q", "a b&c");
        query.push("tag", "x");
        query.push("tag", "y");
        assert_eq!(uri("/files/a%2Fb", &query), "/files/a%2Fb?q=a+b%26c&tag=x&tag=y");
        assert_eq!(uri("/", &Params::new()), "/");
        assert_eq!(uri("", &Params::new()), "/");
        assert_eq!(uri("/a b", &Params::new()), "/a%20b");
    }

    #[tokio::test]
    async fn a_request_comes_back_as_it_went_unless_a_service_changed_it() {
        let request = Request::new(Method::POST, "/orders/7")
            .with_route("/orders/{id}")
            .with_path_param("id", "7")
            .with_query("page", "2")
            .with_header("x-a", "1")
            .with_request_id("req-1")
            .with_body("hello");
        let http = into_http(request, &cx());
        assert_eq!(http.uri(), "/orders/7?page=2");
        assert!(http.extensions().get::<Context>().is_some());
        let back = from_http(http, 1024).await.unwrap();
        assert_eq!(back.route(), "/orders/{id}");
        assert_eq!(back.path_params().get("id"), Some("7"));
        assert_eq!(back.query().get("page"), Some("2"));
        assert_eq!(back.headers()["x-a"], "1");
        assert_eq!((back.request_id(), back.body().as_ref()), ("req-1", b"hello".as_ref()));

        let mut http = into_http(Request::new(Method::GET, "/a").with_query("x", "1"), &cx());
        *http.uri_mut() = Uri::from_static("/b?y=2&y=3");
        let back = from_http(http, 1024).await.unwrap();
        assert_eq!((back.path(), back.query().get_all("y")), ("/b", ["2".to_string(), "3".to_string()].as_slice()));
        assert!(!back.query().contains("x"));
    }

    #[tokio::test]
    async fn bodies_past_the_limit_are_refused_not_cut() {
        let http = into_http(Request::new(Method::POST, "/").with_body(vec![b'x'; 11]), &cx());
        assert_eq!(from_http(http, 10).await.unwrap_err().status(), 413);

        let response = http::Response::new(Body::from(vec![b'x'; 11]));
        let error = response_from_http(response, 10).await.unwrap_err();
        assert!(error.message().contains("larger than the 10 bytes"), "{error}");
    }

    #[tokio::test]
    async fn a_response_keeps_every_header_value() {
        let wire = pb::HttpResponse {
            status: 201,
            headers: HashMap::from([(
                "set-cookie".to_string(),
                pb::Values { values: vec!["a=1".into(), "b=2".into()] },
            )]),
            body: Bytes::from_static(b"made"),
        };
        let http = response_into_http(wire.clone());
        assert_eq!(http.headers().get_all("set-cookie").iter().count(), 2);
        assert_eq!(response_from_http(http, 1024).await.unwrap(), wire);
    }
}
