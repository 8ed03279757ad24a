//! What a broken rule says: `validator`'s error tree, flattened into one
//! failure per rule with its field's path, code and message, and turned into
//! the answer of every kind.

use std::fmt::Write as _;

use serde_json::Value;
use validator::{ValidationError, ValidationErrors, ValidationErrorsKind};

use crate::error::Error;
use crate::excerpt::excerpt;
use crate::http::{ErrorDetail, HttpError, PathSegment};

/// The field name `validator` gives to rules of the whole struct
/// (`#[validate(schema(...))]`): they have the struct's own path.
const WHOLE_VALUE: &str = "__all__";

/// A value that broke its rules: each broken rule with its field's path,
/// code and message, in path order.
///
/// An HTTP handler answers it `400`, in the SDK's error shape:
///
/// ```json
/// {"message": "the request body did not pass validation: `quantity` must be at least 1",
///  "details": [{"code": "range", "path": ["quantity"], "message": "must be at least 1"}]}
/// ```
///
/// Every other kind fails the event (a consumer, the record) with an error
/// of type `ValidationError` and that message.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    message: String,
    details: Vec<ErrorDetail>,
}

impl Invalid {
    /// The failures in `errors`, of a value taken from `subject` ("the
    /// request body").
    pub fn new(subject: &str, errors: &ValidationErrors) -> Self {
        let mut details = Vec::new();
        flatten(errors, &mut Vec::new(), &mut details);
        let message = headline(subject, &details);
        Invalid { message, details }
    }

    /// The sentence a caller reads: what did not pass, and the first
    /// failure.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// One detail per broken rule.
    pub fn details(&self) -> &[ErrorDetail] {
        &self.details
    }

    /// The `400` an HTTP handler answers with.
    pub fn to_http(&self) -> HttpError {
        self.details.iter().cloned().fold(HttpError::bad_request(self.message.clone()), HttpError::with_detail)
    }

    /// The error of every kind: of type `ValidationError`, answered over
    /// HTTP as [`Invalid::to_http`].
    pub fn into_error(self) -> Error {
        Error::answered_over_http("ValidationError", self.to_http())
    }
}

/// Appends a detail for each rule broken in `errors`, whose value is at
/// `path`. `validator` keeps fields in a hash map: they are taken in name
/// order, so that the answer is the same for the same input.
fn flatten(errors: &ValidationErrors, path: &mut Vec<PathSegment>, out: &mut Vec<ErrorDetail>) {
    let mut fields: Vec<_> = errors.errors().iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    for (field, kind) in fields {
        let whole = field == WHOLE_VALUE;
        if !whole {
            path.push(PathSegment::Key(field.to_string()));
        }
        match kind {
            ValidationErrorsKind::Field(errors) => {
                for error in errors {
                    out.push(ErrorDetail::new(error.code.to_string(), path.clone(), describe(error)));
                }
            }
            ValidationErrorsKind::Struct(inner) => flatten(inner, path, out),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    path.push(PathSegment::Index(*index));
                    flatten(inner, path, out);
                    path.pop();
                }
            }
        }
        if !whole {
            path.pop();
        }
    }
}

/// The message of one broken rule: the one its declaration gives, or one
/// made from its code and limits. The refused value itself is never
/// repeated: it may be large, or a secret.
fn describe(error: &ValidationError) -> String {
    if let Some(message) = &error.message {
        return excerpt(message).into_owned();
    }
    let param = |name: &str| error.params.get(name).map(show);
    match error.code.as_ref() {
        "length" => match (param("equal"), param("min"), param("max")) {
            (Some(n), _, _) => format!("must have a length of exactly {n}"),
            (None, Some(min), Some(max)) => format!("must have a length between {min} and {max}"),
            (None, Some(min), None) => format!("must have a length of at least {min}"),
            (None, None, Some(max)) => format!("must have a length of at most {max}"),
            (None, None, None) => "does not have an allowed length".to_string(),
        },
        "range" => {
            let low = param("min")
                .map(|n| format!("at least {n}"))
                .or(param("exclusive_min").map(|n| format!("more than {n}")));
            let high = param("max")
                .map(|n| format!("at most {n}"))
                .or(param("exclusive_max").map(|n| format!("less than {n}")));
            match (low, high) {
                (Some(low), Some(high)) => format!("must be {low} and {high}"),
                (Some(bound), None) | (None, Some(bound)) => format!("must be {bound}"),
                (None, None) => "is out of range".to_string(),
            }
        }
        "email" => "must be an email address".to_string(),
        "url" => "must be a URL".to_string(),
        "ip" => "must be an IP address".to_string(),
        "credit_card" => "must be a credit card number".to_string(),
        "non_control_character" => "must not contain control characters".to_string(),
        "required" => "is required".to_string(),
        "regex" => "does not have the required form".to_string(),
        "contains" => match param("needle") {
            Some(needle) => format!("must contain {needle}"),
            None => "does not contain what it must".to_string(),
        },
        "does_not_contain" => match param("needle") {
            Some(needle) => format!("must not contain {needle}"),
            None => "contains what it must not".to_string(),
        },
        "must_match" => "must match the field it is checked against".to_string(),
        code => format!("failed the `{}` rule", excerpt(code)),
    }
}

/// A rule's limit, as a person writes it: `3`, `"@"`.
fn show(value: &Value) -> String {
    match value {
        Value::String(text) => format!("\"{}\"", excerpt(text)),
        other => excerpt(&other.to_string()).into_owned(),
    }
}

/// `the request body did not pass validation: `quantity` must be at least
/// 1`, and how many more failed.
fn headline(subject: &str, details: &[ErrorDetail]) -> String {
    let mut message = format!("{subject} did not pass validation");
    if let Some(first) = details.first() {
        if first.path.is_empty() {
            let _ = write!(message, ": {}", first.message);
        } else {
            let _ = write!(message, ": `{}` {}", written(&first.path), first.message);
        }
        match details.len() {
            1 => {}
            2 => message.push_str(", and one more rule"),
            n => {
                let _ = write!(message, ", and {} more rules", n - 1);
            }
        }
    }
    message
}

/// A path as code writes it: `items[0].quantity`.
fn written(path: &[PathSegment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            PathSegment::Key(key) if out.is_empty() => out.push_str(key),
            PathSegment::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            PathSegment::Index(index) => {
                let _ = write!(out, "[{index}]");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use validator::Validate;

    use super::*;

    #[derive(Validate)]
    struct Line {
        #[validate(range(min = 1, max = 100))]
        quantity: u32,
    }

    #[derive(Validate)]
    #[validate(schema(function = "not_both"))]
    struct Order {
        #[validate(length(min = 1, max = 8))]
        customer: String,
        #[validate(email)]
        email: String,
        #[validate(nested)]
        lines: Vec<Line>,
        #[validate(custom(function = "no_test_notes", code = "test_note"))]
        note: String,
    }

    fn not_both(order: &Order) -> Result<(), ValidationError> {
        if order.customer == "both" {
            return Err(ValidationError::new("exclusive").with_message(Cow::Borrowed("customer cannot be `both`")));
        }
        Ok(())
    }

    fn no_test_notes(note: &str) -> Result<(), ValidationError> {
        if note.starts_with("test") { Err(ValidationError::new("ignored")) } else { Ok(()) }
    }

    fn order() -> Order {
        Order {
            customer: "ada".to_string(),
            email: "ada@example.com".to_string(),
            lines: vec![Line { quantity: 1 }, Line { quantity: 5 }],
            note: String::new(),
        }
    }

    fn invalid(order: &Order) -> Invalid {
        Invalid::new("the request body", &order.validate().unwrap_err())
    }

    #[test]
    fn each_broken_rule_is_a_detail_with_its_path_code_and_message_in_path_order() {
        let mut bad = order();
        bad.customer = "a customer name that is too long".to_string();
        bad.email = "not an address".to_string();
        bad.lines[1].quantity = 0;
        bad.note = "test order".to_string();
        let invalid = invalid(&bad);
        let details: Vec<(&str, String, &str)> =
            invalid.details().iter().map(|d| (d.code.as_str(), written(&d.path), d.message.as_str())).collect();
        assert_eq!(
            details,
            [
                ("length", "customer".to_string(), "must have a length between 1 and 8"),
                ("email", "email".to_string(), "must be an email address"),
                ("range", "lines[1].quantity".to_string(), "must be at least 1 and at most 100"),
                ("test_note", "note".to_string(), "failed the `test_note` rule"),
            ]
        );
        assert_eq!(
            invalid.message(),
            "the request body did not pass validation: `customer` must have a length between 1 and 8, and 3 more rules"
        );
        assert_eq!(invalid.details()[2].path, [PathSegment::from("lines"), PathSegment::Index(1), "quantity".into()]);
    }

    #[test]
    fn a_rule_of_the_whole_value_has_its_path_and_its_own_message() {
        let mut bad = order();
        bad.customer = "both".to_string();
        let invalid = invalid(&bad);
        assert_eq!(invalid.details().len(), 1);
        assert_eq!(invalid.details()[0].code, "exclusive");
        assert!(invalid.details()[0].path.is_empty());
        assert_eq!(invalid.message(), "the request body did not pass validation: customer cannot be `both`");
    }

    #[test]
    fn the_refused_value_is_not_repeated() {
        let mut bad = order();
        bad.email = "secret-token-123".to_string();
        let invalid = invalid(&bad);
        assert!(!format!("{invalid:?}").contains("secret-token-123"), "{invalid:?}");
    }

    #[test]
    fn over_http_it_is_a_400_in_the_error_shape_and_otherwise_a_validation_error() {
        let mut bad = order();
        bad.lines[0].quantity = 101;
        let invalid = invalid(&bad);
        let http = invalid.to_http();
        assert_eq!(http.status(), 400);
        assert_eq!(http.details().len(), 1);
        assert_eq!(http.details()[0].code, "range");
        let error = invalid.into_error();
        assert_eq!(error.to_handler_error().r#type, "ValidationError");
        assert!(error.message().contains("`lines[0].quantity` must be at least 1 and at most 100"), "{error}");
        assert_eq!(HttpError::from(error).status(), 400);
    }
}
