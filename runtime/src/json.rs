//! JSON bodies for every kind of handler, and the error that names the field
//! a body got wrong.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::de::DeserializeOwned;

use crate::excerpt::excerpt;
use crate::http::{ErrorDetail, HttpError, PathSegment};

/// A JSON value, in or out of any kind of handler.
///
/// As an argument, it is the event's body deserialized into `T`:
///
/// - HTTP: the request body (a body that does not parse or does not fit
///   answers 400 naming the field);
/// - WebSocket: a text message (a binary message is refused);
/// - schedule: the trigger's input;
/// - custom: the invocation's input.
///
/// As a return value, `T` serialized: an HTTP response with
/// `content-type: application/json`, or a custom handler's output.
///
/// ```
/// use celerity::Json;
/// #[derive(serde::Deserialize, serde::Serialize)]
/// struct Order { id: u64 }
/// async fn echo(Json(order): Json<Order>) -> Json<Order> {
///     Json(order)
/// }
/// ```
///
/// It is the same type as `celerity::http::Json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    /// The value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Json<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// A JSON body that did not decode: a sentence naming what and where, a
/// machine-readable code, and the path of the field that does not fit.
///
/// It converts into [`crate::Error`] with `?` (type `JsonError`), and into an
/// [`HttpError`] 400 whose one detail carries the code and path.
///
/// ```
/// use celerity::websocket::Message;
/// #[derive(Debug, serde::Deserialize)]
/// struct Move { x: u32 }
/// let message = Message::new_text("move", r#"{"x": "left"}"#);
/// let error = message.json::<Move>().unwrap_err();
/// assert_eq!(error.code(), "invalid_type");
/// assert_eq!(error.path(), [celerity::http::PathSegment::from("x")]);
/// assert!(error.to_string().contains("`x`"), "{error}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    headline: String,
    code: &'static str,
    path: Vec<PathSegment>,
    detail: String,
}

impl JsonError {
    /// An error about the body as a whole, such as a binary WebSocket message
    /// where JSON text was expected.
    pub(crate) fn other(code: &'static str, headline: impl Into<String>) -> Self {
        let headline = headline.into();
        JsonError { detail: headline.clone(), headline, code, path: Vec::new() }
    }

    /// The code: `malformed` (not JSON at all), `missing` (a required field
    /// is absent), `invalid` (an unknown field or variant), `invalid_type`
    /// (a value of the wrong type).
    pub fn code(&self) -> &str {
        self.code
    }

    /// Where the value that does not fit is: field names and array indexes;
    /// empty for the body as a whole.
    pub fn path(&self) -> &[PathSegment] {
        &self.path
    }

    /// The decoder's own sentence, without the position.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The error as one detail of an HTTP error body.
    pub fn to_error_detail(&self) -> ErrorDetail {
        ErrorDetail::new(self.code, self.path.clone(), self.detail.clone())
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline)
    }
}

impl std::error::Error for JsonError {}

impl From<JsonError> for HttpError {
    fn from(error: JsonError) -> Self {
        let detail = error.to_error_detail();
        HttpError::bad_request(error.headline).with_detail(detail)
    }
}

/// Decodes JSON, naming the path of the field that does not fit. `subject`
/// names the body in the message, such as `the request body`.
pub(crate) fn decode_json<T: DeserializeOwned>(body: &[u8], subject: &str) -> Result<T, JsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut deserializer);
    let value = result.map_err(|error| {
        let path = json_path(error.path());
        let inner = error.inner();
        let text = inner.to_string();
        let code = match inner.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "malformed",
            _ if text.starts_with("missing field") => "missing",
            _ if text.starts_with("unknown field") || text.starts_with("unknown variant") => "invalid",
            _ => "invalid_type",
        };
        // The decoder quotes the value it refused, and the path names the
        // body's own keys: both are cut, as the body may be large.
        let detail = excerpt(&strip_position(&text)).into_owned();
        let headline = if code == "malformed" {
            format!("{subject} is not valid JSON: {detail}")
        } else if path.is_empty() {
            format!("{subject} does not fit: {detail}")
        } else {
            format!("{subject} does not fit at `{}`: {detail}", excerpt(&error.path().to_string()))
        };
        JsonError { headline, code, path, detail }
    })?;
    deserializer.end().map_err(|error| JsonError {
        headline: format!("{subject} has data after the JSON value"),
        code: "malformed",
        path: Vec::new(),
        detail: excerpt(&strip_position(&error.to_string())).into_owned(),
    })?;
    Ok(value)
}

/// Decodes an optional JSON input: an empty one reads as `null`, so that
/// `Option<T>` and `()` take it.
pub(crate) fn decode_json_input<T: DeserializeOwned>(input: &[u8], subject: &str) -> Result<T, JsonError> {
    if input.iter().all(u8::is_ascii_whitespace) { decode_json(b"null", subject) } else { decode_json(input, subject) }
}

fn json_path(path: &serde_path_to_error::Path) -> Vec<PathSegment> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(PathSegment::Index(*index)),
            Segment::Map { key } => Some(PathSegment::Key(excerpt(key).into_owned())),
            Segment::Enum { variant } => Some(PathSegment::Key(excerpt(variant).into_owned())),
            Segment::Unknown => None,
        })
        .collect()
}

/// serde_json appends " at line 1 column 9"; the caller wants the sentence.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// What a JSON value is, for messages: "an array", "a number".
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        qty: u32,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Order {
        name: String,
        items: Vec<Item>,
    }

    #[test]
    fn names_the_path_of_the_field_that_does_not_fit() {
        let error = decode_json::<Order>(br#"{"name":"a","items":[{"qty":"x"}]}"#, "the record body").unwrap_err();
        assert_eq!(error.code(), "invalid_type");
        assert_eq!(error.path(), [PathSegment::from("items"), PathSegment::from(0), PathSegment::from("qty")]);
        assert!(error.to_string().starts_with("the record body does not fit at `items[0].qty`: "), "{error}");
        assert!(!error.detail().contains("line"), "{}", error.detail());
    }

    #[test]
    fn codes() {
        assert_eq!(decode_json::<Order>(b"{", "x").unwrap_err().code(), "malformed");
        assert_eq!(decode_json::<Order>(br#"{"items":[]}"#, "x").unwrap_err().code(), "missing");
        assert_eq!(decode_json::<Order>(br#"{"name":"a","items":[],"z":1}"#, "x").unwrap_err().code(), "invalid");
        let trailing = decode_json::<u32>(b"1 2", "the input").unwrap_err();
        assert_eq!(trailing.code(), "malformed");
        assert_eq!(trailing.to_string(), "the input has data after the JSON value");
    }

    #[test]
    fn an_empty_input_reads_as_null() {
        assert_eq!(decode_json_input::<Option<u32>>(b"", "the input").unwrap(), None);
        assert_eq!(decode_json_input::<Option<u32>>(b" 7 ", "the input").unwrap(), Some(7));
        decode_json_input::<()>(b"", "the input").unwrap();
        assert_eq!(decode_json::<Option<u32>>(b"", "the input").unwrap_err().code(), "malformed");
    }

    #[test]
    fn becomes_a_400_with_one_detail() {
        let error: HttpError =
            decode_json::<Order>(br#"{"name":1,"items":[]}"#, "the request body").unwrap_err().into();
        assert_eq!(error.status(), 400);
        assert_eq!(error.details()[0].code, "invalid_type");
        assert_eq!(error.details()[0].path, vec![PathSegment::from("name")]);
    }

    #[test]
    fn becomes_a_celerity_error_keeping_the_sentence() {
        let error: crate::error::Error = decode_json::<Order>(b"[]", "the input").unwrap_err().into();
        assert_eq!(error.type_name(), "JsonError");
        assert!(error.message().starts_with("the input does not fit"), "{}", error.message());
        let json = error.source_error().and_then(|e| e.downcast_ref::<JsonError>()).unwrap();
        assert_eq!(json.code(), "invalid_type");
    }
}
