//! Matching HTTP requests to handler tags, with the runtime's route
//! semantics: `{param}` matches one path segment, `{*name}` the rest of the
//! path (one value per segment), literal segments match exactly.

use std::collections::BTreeMap;

/// One HTTP route: the tag it dispatches to, its method and its template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The handler tag, such as `GET::/orders/{id}`.
    pub tag: String,
    /// The method, upper case.
    pub method: String,
    /// The route template, such as `/orders/{id}`.
    pub template: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
    CatchAll(String),
}

/// A request matched to a route: the route and its path parameters, still
/// percent-encoded as the runtime sends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched<'a> {
    /// The route.
    pub route: &'a Route,
    /// Path parameters; a catch-all has one value per segment.
    pub params: BTreeMap<String, Vec<String>>,
}

impl Route {
    /// Parses an HTTP tag `METHOD::/template`; `None` for tags of other kinds.
    pub fn from_tag(tag: &str) -> Option<Route> {
        let (method, template) = tag.split_once("::")?;
        if !template.starts_with('/') || method.is_empty() || !method.chars().all(|c| c.is_ascii_uppercase()) {
            return None;
        }
        let segments = split(template)
            .map(|s| {
                if let Some(name) = s.strip_prefix("{*").and_then(|s| s.strip_suffix('}')) {
                    Segment::CatchAll(name.to_string())
                } else if let Some(name) = s.strip_prefix('{').and_then(|s| s.strip_suffix("+}")) {
                    Segment::CatchAll(name.to_string())
                } else if let Some(name) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Segment::Param(name.to_string())
                } else {
                    Segment::Literal(s.to_string())
                }
            })
            .collect();
        Some(Route { tag: tag.to_string(), method: method.to_string(), template: template.to_string(), segments })
    }

    fn matches(&self, path: &str) -> Option<BTreeMap<String, Vec<String>>> {
        let parts: Vec<&str> = split(path).collect();
        let mut params = BTreeMap::new();
        for (index, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Literal(literal) => {
                    if parts.get(index) != Some(&literal.as_str()) {
                        return None;
                    }
                }
                Segment::Param(name) => {
                    let value = parts.get(index).filter(|v| !v.is_empty())?;
                    params.insert(name.clone(), vec![value.to_string()]);
                }
                Segment::CatchAll(name) => {
                    let rest: Vec<String> = parts[index.min(parts.len())..].iter().map(|s| s.to_string()).collect();
                    if rest.is_empty() {
                        return None;
                    }
                    params.insert(name.clone(), rest);
                    return Some(params);
                }
            }
        }
        (parts.len() == self.segments.len()).then_some(params)
    }

    /// How specific the route is: literals beat parameters beat catch-alls.
    fn rank(&self) -> (usize, usize) {
        let literals = self.segments.iter().filter(|s| matches!(s, Segment::Literal(_))).count();
        let catch_all = self.segments.iter().any(|s| matches!(s, Segment::CatchAll(_)));
        (usize::from(!catch_all), literals)
    }
}

fn split(path: &str) -> impl Iterator<Item = &str> {
    path.trim_start_matches('/').split('/').filter(|s| !s.is_empty())
}

/// Every HTTP route of an application.
#[derive(Debug, Clone, Default)]
pub struct Router {
    routes: Vec<Route>,
}

/// Why a request matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoMatch {
    /// No route has this path.
    NotFound,
    /// Routes have this path, for other methods.
    MethodNotAllowed(Vec<String>),
}

impl Router {
    /// A router over the HTTP tags among `tags`.
    pub fn new<'a>(tags: impl IntoIterator<Item = &'a str>) -> Router {
        let mut routes: Vec<Route> = tags.into_iter().filter_map(Route::from_tag).collect();
        routes.sort_by(|a, b| b.rank().cmp(&a.rank()).then_with(|| a.tag.cmp(&b.tag)));
        Router { routes }
    }

    /// The routes, most specific first.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Finds the route for a request.
    pub fn route(&self, method: &str, path: &str) -> Result<Matched<'_>, NoMatch> {
        let mut allowed = Vec::new();
        for route in &self.routes {
            if let Some(params) = route.matches(path) {
                if route.method == method {
                    return Ok(Matched { route, params });
                }
                allowed.push(route.method.clone());
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
            "source::queue::process",
        ])
    }

    #[test]
    fn literal_routes_win_over_parameters() {
        let router = router();
        assert_eq!(router.route("GET", "/orders/recent").unwrap().route.tag, "GET::/orders/recent");
        let matched = router.route("GET", "/orders/42").unwrap();
        assert_eq!(matched.route.tag, "GET::/orders/{id}");
        assert_eq!(matched.params["id"], ["42"]);
    }

    #[test]
    fn catch_all_takes_one_value_per_segment() {
        let routes = router();
        let matched = routes.route("GET", "/files/a/b%20c/d.txt").unwrap();
        assert_eq!(matched.params["path"], ["a", "b%20c", "d.txt"]);
        assert_eq!(router().route("GET", "/files"), Err(NoMatch::NotFound));
    }

    #[test]
    fn other_methods_and_unknown_paths() {
        assert_eq!(router().route("DELETE", "/orders/1"), Err(NoMatch::MethodNotAllowed(vec!["GET".into()])));
        assert_eq!(router().route("GET", "/nope"), Err(NoMatch::NotFound));
        assert_eq!(router().route("GET", "/orders/1/items"), Err(NoMatch::MethodNotAllowed(vec!["POST".into()])));
    }

    #[test]
    fn non_http_tags_are_not_routes() {
        assert_eq!(router().routes().len(), 5);
        assert!(Route::from_tag("custom::resize").is_none());
        assert!(Route::from_tag("event::$default").is_none());
    }

    #[test]
    fn trailing_slashes_do_not_matter() {
        assert_eq!(router().route("GET", "/orders/").unwrap().route.tag, "GET::/orders");
    }
}
