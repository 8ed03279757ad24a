//! An API Gateway request as the runtime's `HttpRequest`: from an HTTP API
//! (payload format 2.0) or a REST API (1.0).
//!
//! The route is the template of the handler's tag, so that path parameters
//! are named as the handler expects. Where API Gateway's own route is that
//! template, their values are taken as API Gateway decoded them, a
//! catch-all split into one value per segment; where it is another (a
//! `$default` or `{proxy+}` route in front of several handlers), they are
//! the tag's route matched against the path, as the runtime's router gives
//! them. Header names
//! are lower case; an HTTP API's `cookies` go back into a `cookie` header;
//! the query string is decoded by form rules, each name possibly repeated;
//! a base64 body is decoded.

use std::collections::HashMap;

use celerity_proto::v1::{HttpRequest, Values};
use percent_encoding::percent_decode_str;
use serde_json::Value;

use super::{Invocation, Payload, Refused, body_bytes};

/// A request from an HTTP API.
pub(super) fn from_v2(invocation: &Invocation<'_>) -> Result<HttpRequest, Refused> {
    let event = Payload::of(invocation.json, "an API Gateway HTTP API request")?;
    let mut headers = headers(&event, &["/headers"])?;
    let cookies = event.array("/cookies")?;
    if !cookies.is_empty() {
        let cookies: Vec<&str> = cookies.iter().filter_map(Value::as_str).collect();
        headers.insert("cookie".to_string(), Values { values: vec![cookies.join("; ")] });
    }
    let mut query = match event.text("/rawQueryString")?.filter(|query| !query.is_empty()) {
        Some(raw) => form_decoded(raw),
        None => HashMap::new(),
    };
    if query.is_empty() {
        for (name, value) in event.strings("/queryStringParameters")? {
            push(&mut query, name, value);
        }
    }
    let route = route(invocation.tag);
    let path = event.text("/rawPath")?.or(event.text("/requestContext/http/path")?).unwrap_or("/").to_string();
    let api_route = event.text("/routeKey")?.and_then(|key| route_template(key, true));
    let stage = event.text("/requestContext/stage")?;
    let path_params = path_parameters(&event)?;
    Ok(HttpRequest {
        method: method(&event, "/requestContext/http/method")?,
        path_params: params(invocation.tag, &route, api_route, path_params, &path, stage),
        path,
        route,
        query_params: query,
        headers,
        source_ip: event.text("/requestContext/http/sourceIp")?.unwrap_or_default().to_string(),
        request_id: request_id(&event, invocation)?,
        body: body_bytes(event.text("/body")?, event.flag("/isBase64Encoded")?)?,
    })
}

/// A request from a REST API.
pub(super) fn from_v1(invocation: &Invocation<'_>) -> Result<HttpRequest, Refused> {
    let event = Payload::of(invocation.json, "an API Gateway REST API request")?;
    let mut query = HashMap::new();
    let mut pairs = event.strings("/multiValueQueryStringParameters")?;
    if pairs.is_empty() {
        pairs = event.strings("/queryStringParameters")?;
    }
    for (name, value) in pairs {
        push(&mut query, name, value);
    }
    let route = route(invocation.tag);
    let path = event.text("/path")?.or(event.text("/requestContext/path")?).unwrap_or("/").to_string();
    let api_route = event.text("/resource")?.and_then(|resource| route_template(resource, false));
    let path_params = path_parameters(&event)?;
    Ok(HttpRequest {
        method: method(&event, "/httpMethod")?,
        path_params: params(invocation.tag, &route, api_route, path_params, &path, None),
        path,
        route,
        query_params: query,
        headers: headers(&event, &["/multiValueHeaders", "/headers"])?,
        source_ip: event.text("/requestContext/identity/sourceIp")?.unwrap_or_default().to_string(),
        request_id: request_id(&event, invocation)?,
        body: body_bytes(event.text("/body")?, event.flag("/isBase64Encoded")?)?,
    })
}

/// The request's method, in upper case: any token (whether it is served
/// is the answer's business), and a refusal for a missing or malformed one.
fn method(event: &Payload<'_>, pointer: &str) -> Result<String, Refused> {
    let Some(method) = event.text(pointer)? else { return Err(event.refused(pointer, "the method is missing")) };
    http::Method::from_bytes(method.as_bytes()).map_err(|error| event.refused(pointer, error))?;
    Ok(method.to_ascii_uppercase())
}

fn request_id(event: &Payload<'_>, invocation: &Invocation<'_>) -> Result<String, Refused> {
    Ok(event.text("/requestContext/requestId")?.unwrap_or(invocation.request_id).to_string())
}

fn path_parameters(event: &Payload<'_>) -> Result<HashMap<String, String>, Refused> {
    Ok(event
        .strings("/pathParameters")?
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect())
}

/// The route template of an HTTP tag `{METHOD}::{route}`.
fn route(tag: &str) -> String {
    tag.split_once("::").map_or(tag, |(_, route)| route).to_string()
}

/// The route template of an API Gateway route key in the router's form
/// (`{proxy+}` is `{*proxy}`): an HTTP API's `GET /orders/{id}` or
/// `ANY /files/{path+}`, a REST API's resource `/orders/{id}`; `None` for
/// `$default` or none.
pub(crate) fn route_template(route_key: &str, http_api: bool) -> Option<String> {
    let template = if http_api { route_key.split_once(' ')?.1 } else { route_key };
    if !template.starts_with('/') {
        return None;
    }
    let normal = celerity_tags::parse_tag(celerity_tags::TagKind::Http, &format!("GET::{template}")).ok();
    let route = normal.and_then(|normal| normal.tag.split_once("::").map(|(_, route)| route.to_string()));
    Some(route.unwrap_or_else(|| template.to_string()))
}

/// The path parameters of a request for `tag`: API Gateway's, when its
/// route (`api_route`) is the tag's; else the tag's route matched against
/// the path (without the stage, if it leads the path).
fn params(
    tag: &str,
    route: &str,
    api_route: Option<String>,
    api_params: HashMap<String, String>,
    path: &str,
    stage: Option<&str>,
) -> HashMap<String, Values> {
    if api_route.as_deref() == Some(route) {
        return path_params(route, api_params);
    }
    let unstaged = stage.filter(|stage| *stage != "$default").and_then(|stage| path.strip_prefix(&format!("/{stage}")));
    let matched = celerity_tags::route::Route::from_tag(tag)
        .and_then(|tag_route| tag_route.matches(path).or_else(|| unstaged.and_then(|path| tag_route.matches(path))));
    match matched {
        Some(matched) => matched.into_iter().map(|(name, values)| (name, Values { values })).collect(),
        None => path_params(route, api_params),
    }
}

/// Path parameters by name; the catch-all of `route` (`{*name}`) as one
/// value per segment.
fn path_params(route: &str, params: HashMap<String, String>) -> HashMap<String, Values> {
    let catch_all = route.split('/').find_map(|segment| segment.strip_prefix("{*")?.strip_suffix('}'));
    params
        .into_iter()
        .map(|(name, value)| {
            let name = name.strip_suffix('+').map(str::to_string).unwrap_or(name);
            let values = if catch_all == Some(name.as_str()) {
                value.split('/').map(str::to_string).collect()
            } else {
                vec![value]
            };
            (name, Values { values })
        })
        .collect()
}

/// Headers by lower-case name, from the first of the maps at `pointers`
/// that has any (a REST API sends repeated values and single ones; the
/// repeated ones win). A name or value HTTP does not allow is refused.
fn headers(event: &Payload<'_>, pointers: &[&str]) -> Result<HashMap<String, Values>, Refused> {
    let mut headers: HashMap<String, Values> = HashMap::new();
    for pointer in pointers {
        let pairs = event.strings(pointer)?;
        if pairs.is_empty() {
            continue;
        }
        for (name, value) in pairs {
            let at = || format!("{pointer}/{name}");
            http::HeaderName::from_bytes(name.as_bytes()).map_err(|error| event.refused(&at(), error))?;
            http::HeaderValue::from_str(value).map_err(|error| event.refused(&at(), error))?;
            headers.entry(name.to_ascii_lowercase()).or_default().values.push(value.to_string());
        }
        break;
    }
    Ok(headers)
}

fn push(query: &mut HashMap<String, Values>, name: &str, value: &str) {
    query.entry(name.to_string()).or_default().values.push(value.to_string());
}

/// A query string decoded as a form: `+` is a space, then percent-decoding.
fn form_decoded(raw: &str) -> HashMap<String, Values> {
    let decoded = |text: &str| percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned();
    let mut query = HashMap::new();
    for pair in raw.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        push(&mut query, &decoded(name), &decoded(value));
    }
    query
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use serde_json::{Value, json};

    use super::*;

    fn invocation<'a>(json: &'a Value, raw: &'a Bytes, tag: &'a str) -> Invocation<'a> {
        Invocation { raw, json: Some(json), tag, request_id: "req-1" }
    }

    fn v2(payload: Value, tag: &str) -> Result<HttpRequest, Refused> {
        let raw = Bytes::new();
        from_v2(&invocation(&payload, &raw, tag))
    }

    fn values(map: &HashMap<String, Values>, name: &str) -> Vec<String> {
        map.get(name).map(|values| values.values.clone()).unwrap_or_default()
    }

    fn http_api(method: &str) -> Value {
        json!({
            "version": "2.0",
            "routeKey": "GET /files/{path+}",
            "rawPath": "/files/a%20b/c.txt",
            "rawQueryString": "tag=gift&tag=express+post&q=a%26b",
            "cookies": ["session=abc", "theme=dark"],
            "headers": {"Content-Type": "text/plain", "x-forwarded-for": "203.0.113.9"},
            "pathParameters": {"path": "a b/c.txt"},
            "requestContext": {
                "requestId": "api-req-7",
                "http": {"method": method, "path": "/files/a%20b/c.txt", "sourceIp": "203.0.113.9"}
            },
            "body": "aGVsbG8=",
            "isBase64Encoded": true
        })
    }

    #[test]
    fn an_http_api_request_carries_route_params_query_cookies_and_body() {
        let request = v2(http_api("get"), "GET::/files/{*path}").unwrap();
        assert_eq!(request.method, "GET");
        assert_eq!((request.path.as_str(), request.route.as_str()), ("/files/a%20b/c.txt", "/files/{*path}"));
        assert_eq!(values(&request.path_params, "path"), ["a b", "c.txt"]);
        assert_eq!(values(&request.query_params, "tag"), ["gift", "express post"]);
        assert_eq!(values(&request.query_params, "q"), ["a&b"]);
        assert_eq!(values(&request.headers, "content-type"), ["text/plain"]);
        assert_eq!(values(&request.headers, "cookie"), ["session=abc; theme=dark"]);
        assert_eq!((request.source_ip.as_str(), request.request_id.as_str()), ("203.0.113.9", "api-req-7"));
        assert_eq!(request.body, Bytes::from_static(b"hello"));
    }

    #[test]
    fn an_unknown_method_is_carried_and_a_malformed_one_refused() {
        // Whether a method is served is the answer's business: the request
        // is read as sent.
        assert_eq!(v2(http_api("BREW"), "GET::/files/{*path}").unwrap().method, "BREW");
        let refused = v2(http_api("GE T"), "GET::/files/{*path}").unwrap_err();
        assert!(refused.0.contains("not an API Gateway HTTP API request at requestContext.http.method"), "{refused}");
        let refused = v2(json!({"requestContext": {"http": {}}}), "GET::/").unwrap_err();
        assert!(refused.0.contains("method"), "{refused}");
        let mut bad_body = http_api("GET");
        bad_body["body"] = json!("%%%");
        assert!(v2(bad_body, "GET::/files/{*path}").unwrap_err().0.contains("isBase64Encoded"));
        let raw = Bytes::from_static(b"not json");
        let refused = from_v2(&Invocation { raw: &raw, json: None, tag: "GET::/", request_id: "r" }).unwrap_err();
        assert!(refused.0.contains("not JSON"), "{refused}");
    }

    #[test]
    fn behind_a_default_route_the_parameters_are_the_tags_route_matched_against_the_path() {
        let mut request = http_api("GET");
        request["routeKey"] = json!("$default");
        request["pathParameters"] = json!({});
        let matched = v2(request.clone(), "GET::/files/{*path}").unwrap();
        assert_eq!(values(&matched.path_params, "path"), ["a b", "c.txt"]);
        request["rawPath"] = json!("/prod/orders/a%2Fb");
        request["requestContext"]["stage"] = json!("prod");
        let staged = v2(request, "GET::/orders/{id}").unwrap();
        assert_eq!(values(&staged.path_params, "id"), ["a/b"]);
    }

    #[test]
    fn a_rest_api_request_takes_the_repeated_values() {
        let payload = json!({
            "resource": "/orders/{id}",
            "path": "/orders/42",
            "httpMethod": "PATCH",
            "headers": {"Accept": "application/json"},
            "multiValueHeaders": {"Accept": ["application/json", "text/plain"]},
            "queryStringParameters": {"tag": "b"},
            "multiValueQueryStringParameters": {"tag": ["a", "b"]},
            "pathParameters": {"id": "42"},
            "requestContext": {"requestId": "rest-1", "identity": {"sourceIp": "198.51.100.4"}, "httpMethod": "PATCH"},
            "body": "{\"status\": \"paid\"}",
            "isBase64Encoded": false
        });
        let raw = Bytes::new();
        let request = from_v1(&invocation(&payload, &raw, "PATCH::/orders/{id}")).unwrap();
        assert_eq!((request.method.as_str(), request.path.as_str()), ("PATCH", "/orders/42"));
        assert_eq!(values(&request.path_params, "id"), ["42"]);
        assert_eq!(values(&request.query_params, "tag"), ["a", "b"]);
        assert_eq!(values(&request.headers, "accept"), ["application/json", "text/plain"]);
        assert_eq!((request.source_ip.as_str(), request.request_id.as_str()), ("198.51.100.4", "rest-1"));
        assert_eq!(request.body, Bytes::from_static(br#"{"status": "paid"}"#));
    }
}
