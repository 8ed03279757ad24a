//! Matching HTTP requests to the routes of HTTP handler tags, the way the
//! Celerity runtime does, and the path parameters it then sends.
//!
//! - A literal segment matches the same segment of the raw path.
//! - `{name}` matches one segment that is not empty. Its value is that
//!   segment percent-decoded, once.
//! - A last `{*name}` matches one or more segments, and has one value per
//!   segment: the raw path is split on `/` first and each segment is then
//!   decoded, so `a%2Fb` stays the one segment `a/b`.
//! - Empty segments do not count: `/orders/` is `/orders`, and `//` is `/`.
//! - Where several routes match, literals beat parameters and parameters
//!   beat a catch-all.
//!
//! ```
//! use celerity_tags::route::Router;
//!
//! let router = Router::new(["GET::/orders/{id}", "GET::/files/{*path}"]);
//! let matched = router.route("GET", "/orders/a%2520b").unwrap();
//! assert_eq!(matched.route.tag(), "GET::/orders/{id}");
//! assert_eq!(matched.params["id"], ["a%20b"]);
//! let matched = router.route("GET", "/files/a%2Fb/c").unwrap();
//! assert_eq!(matched.params["path"], ["a/b", "c"]);
//! ```

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;

use crate::{TagKind, parse_tag};

/// The route of one HTTP handler tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    tag: String,
    method: String,
    template: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
    CatchAll(String),
}

/// A request matched to a route, with its path parameters as the runtime
/// sends them: decoded, a catch-all with one value per segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched<'a> {
    /// The route.
    pub route: &'a Route,
    /// The path parameters by name.
    pub params: BTreeMap<String, Vec<String>>,
}

impl Route {
    /// The route of an HTTP tag, such as `GET::/orders/{id}` (a catch-all
    /// written `{path+}` is taken as `{*path}`); `None` for a tag that is not
    /// a valid HTTP tag.
    pub fn from_tag(tag: &str) -> Option<Route> {
        let normalised = parse_tag(TagKind::Http, tag).ok()?;
        let (method, template) = normalised.tag.split_once("::")?;
        let segments = segments(template)
            .map(|segment| {
                if let Some(name) = segment.strip_prefix("{*").and_then(|s| s.strip_suffix('}')) {
                    Segment::CatchAll(name.to_string())
                } else if let Some(name) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Segment::Param(name.to_string())
                } else {
                    Segment::Literal(segment.to_string())
                }
            })
            .collect();
        Some(Route { method: method.to_string(), template: template.to_string(), segments, tag: normalised.tag })
    }

    /// The tag, normalised.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The method, such as `GET`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The route template, such as `/orders/{id}`.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The path parameters of `path` (raw, percent-encoded, without the
    /// query) by this route, decoded as the runtime decodes them; `None`
    /// when the path does not match.
    pub fn matches(&self, path: &str) -> Option<BTreeMap<String, Vec<String>>> {
        let parts: Vec<&str> = segments(path).collect();
        let mut params = BTreeMap::new();
        for (index, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Literal(literal) => {
                    if parts.get(index) != Some(&literal.as_str()) {
                        return None;
                    }
                }
                Segment::Param(name) => {
                    let value = parts.get(index)?;
                    params.insert(name.clone(), vec![decode(value)]);
                }
                Segment::CatchAll(name) => {
                    let rest = parts.get(index..).filter(|rest| !rest.is_empty())?;
                    params.insert(name.clone(), rest.iter().map(|segment| decode(segment)).collect());
                    return Some(params);
                }
            }
        }
        (parts.len() == self.segments.len()).then_some(params)
    }

    /// How specific the route is: literals beat parameters beat catch-alls.
    fn rank(&self) -> (bool, usize) {
        let literals = self.segments.iter().filter(|s| matches!(s, Segment::Literal(_))).count();
        let catch_all = self.segments.iter().any(|s| matches!(s, Segment::CatchAll(_)));
        (!catch_all, literals)
    }
}

/// The segments of a path that count: empty ones do not.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|segment| !segment.is_empty())
}

/// One segment percent-decoded. Bytes that are not UTF-8 once decoded are
/// replaced, since a parameter travels as text; an `%` that starts no
/// escape stays as it is.
pub fn decode(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

/// The HTTP routes of an application.
#[derive(Debug, Clone, Default)]
pub struct Router {
    routes: Vec<Route>,
}

/// Why a request matched no route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoMatch {
    /// No route has this path.
    NotFound,
    /// Routes have this path, for these other methods.
    MethodNotAllowed(Vec<String>),
}

impl Router {
    /// A router over the HTTP tags among `tags`; other tags are left out.
    pub fn new<'a>(tags: impl IntoIterator<Item = &'a str>) -> Router {
        let mut routes: Vec<Route> = tags.into_iter().filter_map(Route::from_tag).collect();
        routes.sort_by(|a, b| b.rank().cmp(&a.rank()).then_with(|| a.tag.cmp(&b.tag)));
        Router { routes }
    }

    /// The routes, most specific first.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The route of a request for `method` and the raw `path`.
    pub fn route(&self, method: &str, path: &str) -> Result<Matched<'_>, NoMatch> {
        let mut allowed = Vec::new();
        for route in &self.routes {
            if let Some(params) = route.matches(path) {
                if route.method == method {
                    return Ok(Matched { route, params });
                }
                if !allowed.contains(&route.method) {
                    allowed.push(route.method.clone());
                }
            }
        }
        if allowed.is_empty() { Err(NoMatch::NotFound) } else { Err(NoMatch::MethodNotAllowed(allowed)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> Router {
        Router::new([
            "GET::/orders",
            "GET::/orders/{id}",
            "GET::/orders/recent",
            "POST::/orders/{id}/items",
            "GET::/files/{*path}",
            "GET::/customers/{customer}/orders",
            "source::queue::process",
        ])
    }

    #[test]
    fn literal_routes_win_over_parameters() {
        let router = router();
        assert_eq!(router.route("GET", "/orders/recent").unwrap().route.tag(), "GET::/orders/recent");
        let matched = router.route("GET", "/orders/42").unwrap();
        assert_eq!(matched.route.tag(), "GET::/orders/{id}");
        assert_eq!(matched.params["id"], ["42"]);
    }

    #[test]
    fn parameters_are_decoded_once() {
        let router = router();
        let matched = router.route("GET", "/customers/a%2520b/orders").unwrap();
        assert_eq!(matched.params["customer"], ["a%20b"]);
        assert_eq!(router.route("GET", "/orders/%25FF").unwrap().params["id"], ["%FF"]);
        assert_eq!(router.route("GET", "/orders/a%2Fb").unwrap().params["id"], ["a/b"]);
        assert_eq!(router.route("GET", "/orders/%zz").unwrap().params["id"], ["%zz"], "no escape, kept");
        assert_eq!(router.route("GET", "/orders/%FF").unwrap().params["id"], ["\u{fffd}"]);
    }

    #[test]
    fn a_catch_all_is_split_first_and_each_segment_decoded() {
        let router = router();
        let matched = router.route("GET", "/files/a%2520b/c").unwrap();
        assert_eq!(matched.params["path"], ["a%20b", "c"]);
        let matched = router.route("GET", "/files/a%2Fb/b%20c/d.txt").unwrap();
        assert_eq!(matched.params["path"], ["a/b", "b c", "d.txt"]);
        assert_eq!(router.route("GET", "/files"), Err(NoMatch::NotFound));
        assert_eq!(router.route("GET", "/files/"), Err(NoMatch::NotFound));
    }

    #[test]
    fn an_empty_segment_matches_no_parameter() {
        let router = router();
        assert_eq!(router.route("GET", "/orders/").unwrap().route.tag(), "GET::/orders");
        assert_eq!(Route::from_tag("GET::/orders/{id}").unwrap().matches("/orders/"), None);
        assert_eq!(router.route("GET", "//orders//7").unwrap().params["id"], ["7"]);
    }

    #[test]
    fn other_methods_and_unknown_paths() {
        assert_eq!(router().route("DELETE", "/orders/1"), Err(NoMatch::MethodNotAllowed(vec!["GET".into()])));
        assert_eq!(router().route("GET", "/nope"), Err(NoMatch::NotFound));
        assert_eq!(router().route("GET", "/orders/1/items"), Err(NoMatch::MethodNotAllowed(vec!["POST".into()])));
    }

    #[test]
    fn only_valid_http_tags_are_routes() {
        assert_eq!(router().routes().len(), 6);
        assert!(Route::from_tag("custom::resize").is_none());
        assert!(Route::from_tag("event::$default").is_none());
        assert!(Route::from_tag("get::/x").is_none());
        assert_eq!(Route::from_tag("GET::/files/{path+}").unwrap().tag(), "GET::/files/{*path}");
    }
}
