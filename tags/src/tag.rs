//! The grammar of handler tags: checking a tag against the kind of handler
//! it is given to, and normalising it to the form the runtime sends.
//!
//! [`parse_tag`] never panics, and a tag it returns parses again to itself;
//! the fuzz target `tag` checks both on arbitrary text.

use std::fmt;

/// The HTTP methods a tag can name, in the form tags use.
pub const HTTP_METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The WebSocket routes with a special meaning.
pub const WEBSOCKET_SPECIAL_ROUTES: [&str; 3] = ["$connect", "$disconnect", "$default"];

/// The kind of handler an attribute declares, which fixes the tag's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TagKind {
    /// `#[http_handler]`.
    Http,
    /// `#[websocket_handler]`.
    WebSocket,
    /// `#[consumer]`.
    Consumer,
    /// `#[schedule_handler]`.
    Schedule,
    /// `#[custom_handler]`.
    Custom,
}

impl TagKind {
    /// Every kind.
    pub const ALL: [TagKind; 5] =
        [TagKind::Http, TagKind::WebSocket, TagKind::Consumer, TagKind::Schedule, TagKind::Custom];

    /// The attribute that declares a handler of this kind.
    pub fn attribute(self) -> &'static str {
        match self {
            TagKind::Http => "http_handler",
            TagKind::WebSocket => "websocket_handler",
            TagKind::Consumer => "consumer",
            TagKind::Schedule => "schedule_handler",
            TagKind::Custom => "custom_handler",
        }
    }

    /// The kind's name in a sentence: "an HTTP tag", "a consumer handler".
    pub fn noun(self) -> &'static str {
        match self {
            TagKind::Http => "HTTP",
            TagKind::WebSocket => "WebSocket",
            TagKind::Consumer => "consumer",
            TagKind::Schedule => "schedule",
            TagKind::Custom => "custom",
        }
    }

    /// "an" or "a", for [`TagKind::noun`].
    pub fn article(self) -> &'static str {
        match self {
            TagKind::Http => "an",
            _ => "a",
        }
    }

    /// The tag's form, for messages.
    pub fn form(self) -> &'static str {
        match self {
            TagKind::Http => "`METHOD::/route`",
            TagKind::WebSocket => "`routeKey::route`",
            TagKind::Consumer | TagKind::Schedule => "`source::{sourceId}::{handlerName}`",
            TagKind::Custom => "`custom::{handlerName}`",
        }
    }

    /// A typical tag of this kind, for messages.
    pub fn example(self) -> &'static str {
        match self {
            TagKind::Http => "GET::/orders/{id}",
            TagKind::WebSocket => "event::$connect",
            TagKind::Consumer => "source::orders-queue::processOrders",
            TagKind::Schedule => "source::nightly::cleanup",
            TagKind::Custom => "custom::resizeImage",
        }
    }

    /// "an HTTP tag is `METHOD::/route`", for messages that go on with a
    /// corrected tag.
    pub fn short(self) -> String {
        format!("{} {} tag is {}", self.article(), self.noun(), self.form())
    }

    /// "an HTTP tag has the form `METHOD::/route`, such as `GET::/orders/{id}`".
    pub fn expected(self) -> String {
        format!("{} {} tag has the form {}, such as `{}`", self.article(), self.noun(), self.form(), self.example())
    }
}

impl fmt::Display for TagKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// A tag that fits its kind, in the runtime's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalisedTag {
    /// The kind it was checked against.
    pub kind: TagKind,
    /// The tag as the runtime sends it: an HTTP catch-all `{name+}` becomes
    /// `{*name}`.
    pub tag: String,
    /// HTTP: the route's parameter names, in order. Empty for other kinds.
    pub params: Vec<String>,
}

/// What is wrong with a tag, for tests and tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagErrorCode {
    /// The tag is empty.
    Empty,
    /// The tag has whitespace or control characters.
    Whitespace,
    /// The tag is of another kind than the attribute's.
    WrongKind,
    /// The tag does not have the parts of its kind.
    Form,
    /// An HTTP method in lower or mixed case.
    LowercaseMethod,
    /// An HTTP method that is not one of [`HTTP_METHODS`].
    UnknownMethod,
    /// An HTTP route that does not start with `/`.
    RouteNotAbsolute,
    /// An HTTP route with a query string or fragment.
    RouteQuery,
    /// A malformed HTTP route parameter.
    BadParam,
    /// A catch-all parameter that is not the last segment.
    CatchAllNotLast,
    /// Two HTTP route parameters with one name.
    DuplicateParam,
    /// An empty part: route key, route, source id, handler name.
    EmptyPart,
    /// A WebSocket route starting with `$` that is not a special route.
    UnknownSpecialRoute,
}

/// Why a tag does not fit its attribute: a message saying what form is
/// expected, and the corrected tag when there is an obvious one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagError {
    /// What kind of problem.
    pub code: TagErrorCode,
    /// The message, which names the expected form.
    pub message: String,
    /// The tag as it should probably have been written.
    pub suggestion: Option<String>,
}

impl TagError {
    fn new(code: TagErrorCode, message: impl Into<String>) -> Self {
        TagError { code, message: message.into(), suggestion: None }
    }

    fn suggest(mut self, tag: impl Into<String>) -> Self {
        self.suggestion = Some(tag.into());
        self
    }
}

impl fmt::Display for TagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, ": write `{suggestion}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for TagError {}

/// Checks `tag` against the form of `kind` and returns it normalised.
pub fn parse_tag(kind: TagKind, tag: &str) -> Result<NormalisedTag, TagError> {
    if tag.is_empty() {
        return Err(TagError::new(TagErrorCode::Empty, format!("the tag is empty: {}", kind.expected())));
    }
    if tag.chars().any(|c| c.is_whitespace() || c.is_control()) {
        let mut error = TagError::new(
            TagErrorCode::Whitespace,
            format!("a tag has no spaces or control characters: {}", kind.expected()),
        );
        let trimmed = tag.trim();
        let fixed = if !trimmed.is_empty() && !trimmed.chars().any(|c| c.is_whitespace() || c.is_control()) {
            Some(trimmed.to_string())
        } else if kind == TagKind::Http
            && let Some((method, route)) = trimmed.split_once(' ')
            && route.starts_with('/')
            && is_http_method(&method.to_ascii_uppercase())
            && !route.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            Some(format!("{}::{route}", method.to_ascii_uppercase()))
        } else {
            None
        };
        if let Some(fixed) = fixed {
            error.message = format!("a tag has no spaces; {}", kind.short());
            error = error.suggest(fixed);
        }
        return Err(error);
    }
    if let Some(found) = Shape::of(tag)
        && !found.fits(kind)
    {
        return Err(TagError::new(
            TagErrorCode::WrongKind,
            format!(
                "`{tag}` {}, which goes on {}; `#[{}]` takes {} {} tag {}, such as `{}`",
                found.description(),
                found.attributes(),
                kind.attribute(),
                kind.article(),
                kind.noun(),
                kind.form(),
                kind.example()
            ),
        ));
    }
    match kind {
        TagKind::Http => parse_http(tag),
        TagKind::WebSocket => parse_websocket(tag),
        TagKind::Consumer | TagKind::Schedule => parse_source(kind, tag),
        TagKind::Custom => parse_custom(tag),
    }
}

/// Whether `method` is one of [`HTTP_METHODS`], as written.
pub fn is_http_method(method: &str) -> bool {
    HTTP_METHODS.contains(&method)
}

/// The kind a tag looks like at first sight, to name the right attribute
/// when a tag is put on the wrong one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Http,
    WebSocket,
    /// A WebSocket tag with a `$` route: surely not a tag of another kind.
    WebSocketSpecial,
    Source,
    Custom,
}

impl Shape {
    fn of(tag: &str) -> Option<Shape> {
        let (first, rest) = tag.split_once("::")?;
        if first == "custom" {
            Some(Shape::Custom)
        } else if first == "source" {
            Some(Shape::Source)
        } else if is_http_method(&first.to_ascii_uppercase()) || rest.starts_with('/') {
            Some(Shape::Http)
        } else if rest.starts_with('$') {
            Some(Shape::WebSocketSpecial)
        } else {
            Some(Shape::WebSocket)
        }
    }

    fn fits(self, kind: TagKind) -> bool {
        match (self, kind) {
            (Shape::Http, TagKind::Http) => true,
            (Shape::Source, TagKind::Consumer | TagKind::Schedule) => true,
            (Shape::Custom, TagKind::Custom) => true,
            (Shape::WebSocket | Shape::WebSocketSpecial, TagKind::WebSocket) => true,
            // `a::b` on a consumer, schedule or custom handler is most likely
            // a tag of that kind with its prefix missing; the kind's own
            // parser says so.
            (Shape::WebSocket, TagKind::Consumer | TagKind::Schedule | TagKind::Custom) => true,
            _ => false,
        }
    }

    fn description(self) -> &'static str {
        match self {
            Shape::Http => "is an HTTP tag (`METHOD::/route`)",
            Shape::WebSocket | Shape::WebSocketSpecial => "looks like a WebSocket tag (`routeKey::route`)",
            Shape::Source => "is a consumer or schedule tag (`source::{sourceId}::{handlerName}`)",
            Shape::Custom => "is a custom handler tag (`custom::{handlerName}`)",
        }
    }

    fn attributes(self) -> &'static str {
        match self {
            Shape::Http => "`#[http_handler]`",
            Shape::WebSocket | Shape::WebSocketSpecial => "`#[websocket_handler]`",
            Shape::Source => "`#[consumer]` or `#[schedule_handler]`",
            Shape::Custom => "`#[custom_handler]`",
        }
    }
}

fn parse_http(tag: &str) -> Result<NormalisedTag, TagError> {
    let expected = TagKind::Http.expected();
    let Some((method, route)) = tag.split_once("::") else {
        let error = TagError::new(TagErrorCode::Form, format!("`{tag}` is not an HTTP tag: {expected}"));
        return Err(if tag.starts_with('/') {
            TagError { message: format!("`{tag}` has no HTTP method; {}", TagKind::Http.short()), ..error }
                .suggest(format!("GET::{tag}"))
        } else {
            error
        });
    };
    if !is_http_method(method) {
        let upper = method.to_ascii_uppercase();
        if is_http_method(&upper) {
            let error = TagError::new(
                TagErrorCode::LowercaseMethod,
                format!("the HTTP method in a tag is upper case, `{upper}` and not `{method}`"),
            );
            // What to write is the tag with every mistake fixed, not just
            // this one: `get::orders` becomes `GET::/orders`.
            let suggestion = match parse_http(&format!("{upper}::{route}")) {
                Ok(fixed) => Some(fixed.tag),
                Err(rest) => rest.suggestion,
            };
            return Err(match suggestion {
                Some(suggestion) => error.suggest(suggestion),
                None => error,
            });
        }
        let shown = if method.is_empty() { "no method".to_string() } else { format!("`{method}`") };
        return Err(TagError::new(
            TagErrorCode::UnknownMethod,
            format!(
                "`{tag}` has {shown} where an HTTP method goes: expected one of {}, as in `GET::/orders/{{id}}`",
                HTTP_METHODS.join(", ")
            ),
        ));
    }
    let (route, params) = parse_route(method, route)?;
    Ok(NormalisedTag { kind: TagKind::Http, tag: format!("{method}::{route}"), params })
}

/// Checks an HTTP route and returns it normalised, with its parameter names.
fn parse_route(method: &str, route: &str) -> Result<(String, Vec<String>), TagError> {
    if !route.starts_with('/') {
        let error = TagError::new(
            TagErrorCode::RouteNotAbsolute,
            format!("the route of an HTTP tag starts with `/`, such as `{method}::/orders/{{id}}`"),
        );
        let fixed = route.trim_start_matches(':');
        return Err(if fixed.is_empty() { error } else { error.suggest(format!("{method}::/{fixed}")) });
    }
    if let Some(c) = route.chars().find(|c| matches!(c, '?' | '#')) {
        let what = if c == '?' { "a query string" } else { "a fragment" };
        let path = route.split(['?', '#']).next().unwrap_or(route);
        return Err(TagError::new(
            TagErrorCode::RouteQuery,
            format!("an HTTP route is a path without {what} (query parameters are read with `Query<T>`)"),
        )
        .suggest(format!("{method}::{path}")));
    }
    let segments: Vec<&str> = route[1..].split('/').collect();
    let last = segments.len() - 1;
    let mut params: Vec<String> = Vec::new();
    let mut normalised = String::with_capacity(route.len());
    for (index, segment) in segments.iter().enumerate() {
        normalised.push('/');
        if !segment.contains(['{', '}']) {
            normalised.push_str(segment);
            continue;
        }
        let inner = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}'));
        let Some(inner) = inner.filter(|inner| !inner.contains(['{', '}'])) else {
            return Err(TagError::new(
                TagErrorCode::BadParam,
                format!(
                    "`{segment}` in route `{route}` is not a parameter: a parameter is a whole path segment `{{name}}`, such as `/orders/{{id}}`"
                ),
            ));
        };
        let (name, catch_all) = if let Some(name) = inner.strip_prefix('*') {
            (name, true)
        } else if let Some(name) = inner.strip_suffix('+') {
            (name, true)
        } else {
            (inner, false)
        };
        if !is_identifier(name) {
            let what = if name.is_empty() { "has no name" } else { "is not named with an identifier" };
            return Err(TagError::new(
                TagErrorCode::BadParam,
                format!(
                    "route parameter `{segment}` {what}: a parameter is named with letters, digits and `_`, such as `{{id}}`, `{{order_id}}` or the catch-all `{{*path}}`"
                ),
            ));
        }
        if catch_all && index != last {
            let written = if inner.starts_with('*') { format!("{{*{name}}}") } else { format!("{{{name}+}}") };
            return Err(TagError::new(
                TagErrorCode::CatchAllNotLast,
                format!(
                    "the catch-all parameter `{written}` takes the rest of the path, so it must be the route's last segment, as in `{method}::/files/{{*path}}`"
                ),
            ));
        }
        if params.iter().any(|p| p == name) {
            return Err(TagError::new(
                TagErrorCode::DuplicateParam,
                format!(
                    "route parameter `{{{name}}}` appears twice in `{route}`: each parameter of a route has its own name, such as `/orders/{{order_id}}/items/{{item_id}}`"
                ),
            ));
        }
        params.push(name.to_string());
        if catch_all {
            normalised.push_str("{*");
            normalised.push_str(name);
            normalised.push('}');
        } else {
            normalised.push('{');
            normalised.push_str(name);
            normalised.push('}');
        }
    }
    Ok((normalised, params))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
}

fn parse_websocket(tag: &str) -> Result<NormalisedTag, TagError> {
    let expected = TagKind::WebSocket.expected();
    let Some((route_key, route)) = tag.split_once("::") else {
        return Err(TagError::new(
            TagErrorCode::Form,
            format!("`{tag}` has no route key (usually `event`); {}", TagKind::WebSocket.short()),
        )
        .suggest(format!("event::{tag}")));
    };
    if route_key.is_empty() {
        return Err(TagError::new(
            TagErrorCode::EmptyPart,
            format!("the route key of `{tag}` is empty (it is usually `event`); {}", TagKind::WebSocket.short()),
        )
        .suggest(format!("event::{route}")));
    }
    if route.is_empty() {
        return Err(TagError::new(
            TagErrorCode::EmptyPart,
            format!(
                "the route of `{tag}` is empty: {expected}; the route is `$connect`, `$disconnect`, `$default` or a route name such as `sendMessage`"
            ),
        ));
    }
    if route.contains("::") {
        return Err(TagError::new(TagErrorCode::Form, format!("`{tag}` has more than two parts: {expected}")));
    }
    if route.starts_with('$') && !WEBSOCKET_SPECIAL_ROUTES.contains(&route) {
        let lower = route.to_ascii_lowercase();
        let error = TagError::new(
            TagErrorCode::UnknownSpecialRoute,
            format!(
                "`{route}` is not a WebSocket route: the routes starting with `$` are `$connect`, `$disconnect` and `$default`; other routes are names such as `sendMessage`"
            ),
        );
        return Err(if WEBSOCKET_SPECIAL_ROUTES.contains(&lower.as_str()) {
            error.suggest(format!("{route_key}::{lower}"))
        } else {
            error
        });
    }
    Ok(NormalisedTag { kind: TagKind::WebSocket, tag: tag.to_string(), params: Vec::new() })
}

fn parse_source(kind: TagKind, tag: &str) -> Result<NormalisedTag, TagError> {
    let expected = kind.expected();
    let parts: Vec<&str> = tag.split("::").collect();
    if parts[0] != "source" {
        let error =
            TagError::new(TagErrorCode::Form, format!("`{tag}` does not start with `source::`; {}", kind.short()));
        return Err(match parts.as_slice() {
            [first, rest @ ..] if first.eq_ignore_ascii_case("source") => {
                error.suggest(format!("source::{}", rest.join("::")))
            }
            [id, name] if !id.is_empty() && !name.is_empty() => error.suggest(format!("source::{tag}")),
            _ => error,
        });
    }
    let [_, source_id, handler_name] = parts.as_slice() else {
        return Err(TagError::new(
            TagErrorCode::Form,
            format!("`{tag}` has {} parts where a {} tag has three: {expected}", parts.len(), kind.noun()),
        ));
    };
    if source_id.is_empty() {
        return Err(TagError::new(TagErrorCode::EmptyPart, format!("the source id of `{tag}` is empty: {expected}")));
    }
    if handler_name.is_empty() {
        return Err(TagError::new(
            TagErrorCode::EmptyPart,
            format!("the handler name of `{tag}` is empty: {expected}"),
        ));
    }
    Ok(NormalisedTag { kind, tag: tag.to_string(), params: Vec::new() })
}

fn parse_custom(tag: &str) -> Result<NormalisedTag, TagError> {
    let expected = TagKind::Custom.expected();
    let parts: Vec<&str> = tag.split("::").collect();
    match parts.as_slice() {
        ["custom", name] if !name.is_empty() => {
            Ok(NormalisedTag { kind: TagKind::Custom, tag: tag.to_string(), params: Vec::new() })
        }
        ["custom", _] => {
            Err(TagError::new(TagErrorCode::EmptyPart, format!("the handler name of `{tag}` is empty: {expected}")))
        }
        [name] => Err(TagError::new(
            TagErrorCode::Form,
            format!("`{tag}` does not start with `custom::`; {}", TagKind::Custom.short()),
        )
        .suggest(format!("custom::{name}"))),
        [first, name] if first.eq_ignore_ascii_case("custom") && !name.is_empty() => Err(TagError::new(
            TagErrorCode::Form,
            format!("`{tag}` does not start with `custom::`; {}", TagKind::Custom.short()),
        )
        .suggest(format!("custom::{name}"))),
        [_, name] if !name.is_empty() => Err(TagError::new(
            TagErrorCode::Form,
            format!("`{tag}` does not start with `custom::`; {}", TagKind::Custom.short()),
        )
        .suggest(format!("custom::{name}"))),
        _ => Err(TagError::new(TagErrorCode::Form, format!("`{tag}` is not a custom handler tag: {expected}"))),
    }
}

#[cfg(test)]
mod tests;
