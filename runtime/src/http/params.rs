//! An ordered multi-map of request parameters (path or query).

/// An ordered multi-map of parameter names to their values.
///
/// Used for both the path parameters and the query parameters of an HTTP
/// request. Each name appears once and keeps the position where it was first
/// added; a name may carry several values (a repeated query parameter, or
/// the segments of a catch-all path parameter such as `{*path}`).
///
/// ```rust
/// use celerity::http::Params;
///
/// let mut p = Params::new();
/// p.push("a", "1");
/// assert_eq!(p.get("a"), Some("1"));
/// ```
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct Params {
    entries: Vec<(String, Vec<String>)>,
}

impl Params {
    /// Creates an empty set of parameters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value` to the values of `name`, adding `name` at the end if
    /// it is not present yet.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        match self.position(&name) {
            Some(i) => self.entries[i].1.push(value),
            None => self.entries.push((name, vec![value])),
        }
    }

    /// Replaces all values of `name` with `values`.
    ///
    /// An existing name keeps its position; a new name is added at the end.
    pub fn insert(&mut self, name: impl Into<String>, values: Vec<String>) {
        let name = name.into();
        match self.position(&name) {
            Some(i) => self.entries[i].1 = values,
            None => self.entries.push((name, values)),
        }
    }

    /// Returns the first value of `name`, if it is present and has a value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_all(name).first().map(String::as_str)
    }

    /// Returns all values of `name`, or an empty slice if it is absent.
    pub fn get_all(&self, name: &str) -> &[String] {
        match self.position(name) {
            Some(i) => &self.entries[i].1,
            None => &[],
        }
    }

    /// Returns `true` if a parameter called `name` is present (even if it
    /// has no values).
    pub fn contains(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Returns the number of distinct parameter names.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Returns `true` if there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Iterates over the parameters in order, yielding each name with all of
    /// its values.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &[String])> + '_ {
        self.entries.iter().map(|(name, values)| (name.as_str(), values.as_slice()))
    }

    /// Iterates over the parameter names in order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.entries.iter().map(|(name, _)| name.as_str())
    }

    /// Builds parameters from the wire map, ordered by name so that the
    /// order is deterministic (the wire map has no order of its own).
    pub(crate) fn from_wire_sorted(map: impl IntoIterator<Item = (String, Vec<String>)>) -> Params {
        let mut entries: Vec<(String, Vec<String>)> = map.into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Params { entries }
    }

    /// Builds parameters from the wire map, ordered by where each name
    /// appears in the route template as `{name}`, `{name+}` or `{*name}`.
    /// Names that do not appear in the route come last, ordered by name.
    pub(crate) fn from_wire_in_route_order(
        map: impl IntoIterator<Item = (String, Vec<String>)>,
        route: &str,
    ) -> Params {
        let order = route_param_names(route);
        let rank = |name: &str| order.iter().position(|n| *n == name).unwrap_or(usize::MAX);
        let mut entries: Vec<(usize, String, Vec<String>)> =
            map.into_iter().map(|(name, values)| (rank(&name), name, values)).collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        Params { entries: entries.into_iter().map(|(_, name, values)| (name, values)).collect() }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|(n, _)| n == name)
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Params {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut params = Params::new();
        for (name, value) in iter {
            params.push(name, value);
        }
        params
    }
}

/// The parameter names of a route template, in order of appearance:
/// `{name}`, `{name+}` and `{*name}` all yield `name`.
fn route_param_names(route: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = route;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            break;
        };
        let inner = &after[..close];
        let inner = inner.strip_prefix('*').unwrap_or(inner);
        let inner = inner.strip_suffix('+').unwrap_or(inner);
        if !inner.is_empty() && !names.contains(&inner) {
            names.push(inner);
        }
        rest = &after[close + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn wire(pairs: &[(&str, &[&str])]) -> HashMap<String, Vec<String>> {
        pairs.iter().map(|(k, vs)| (k.to_string(), vs.iter().map(|v| v.to_string()).collect())).collect()
    }

    #[test]
    fn push_get_and_get_all() {
        let mut p = Params::new();
        assert!(p.is_empty());
        p.push("a", "1");
        p.push("b", String::from("x"));
        p.push("a", "2");
        assert_eq!(p.len(), 2);
        assert!(!p.is_empty());
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get_all("a"), ["1", "2"]);
        assert_eq!(p.get("b"), Some("x"));
        assert_eq!(p.get("c"), None);
        assert!(p.get_all("c").is_empty());
        assert!(p.contains("a"));
        assert!(!p.contains("c"));
    }

    #[test]
    fn insert_replaces_in_place_or_appends() {
        let mut p: Params = [("a", "1"), ("b", "2")].into_iter().collect();
        p.insert("a", vec!["9".into(), "8".into()]);
        assert_eq!(p.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(p.get_all("a"), ["9", "8"]);
        p.insert("c", vec![]);
        assert_eq!(p.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert!(p.contains("c"));
        assert_eq!(p.get("c"), None);
    }

    #[test]
    fn iter_keeps_insertion_order() {
        let p: Params = [("z", "1"), ("a", "2"), ("z", "3")].into_iter().collect();
        let items: Vec<(&str, &[String])> = p.iter().collect();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].0, "z");
        assert_eq!(items[0].1, ["1", "3"]);
        assert_eq!(items[1].0, "a");
        assert_eq!(items[1].1, ["2"]);
    }

    #[test]
    fn traits() {
        let p: Params = [("a", "1")].into_iter().collect();
        let q = p.clone();
        assert_eq!(p, q);
        assert_ne!(p, Params::default());
        assert!(format!("{p:?}").contains("\"a\""));
    }

    #[test]
    fn from_wire_sorted_orders_by_name() {
        let p = Params::from_wire_sorted(wire(&[("b", &["1"]), ("a", &["2", "3"]), ("c", &[])]));
        assert_eq!(p.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(p.get_all("a"), ["2", "3"]);
        assert!(p.contains("c"));
    }

    #[test]
    fn from_wire_in_route_order_follows_template() {
        let map = wire(&[
            ("zeta", &["0"]),
            ("path", &["a", "b"]),
            ("id", &["1"]),
            ("org", &["o"]),
            ("alpha", &["0"]),
            ("rest", &["r"]),
        ]);
        let p = Params::from_wire_in_route_order(map, "/orgs/{org}/items/{id}/{rest+}/files/{*path}");
        assert_eq!(p.names().collect::<Vec<_>>(), ["org", "id", "rest", "path", "alpha", "zeta"]);
        assert_eq!(p.get_all("path"), ["a", "b"]);
    }

    #[test]
    fn route_param_names_handles_odd_templates() {
        assert_eq!(route_param_names("/a/{x}/{x}/{*y}/{z+}"), ["x", "y", "z"]);
        assert_eq!(route_param_names("/a/{}/{unclosed"), Vec::<&str>::new());
        assert_eq!(route_param_names("/é/{ü}/"), ["ü"]);
        assert_eq!(route_param_names(""), Vec::<&str>::new());
        assert_eq!(route_param_names("}{a}"), ["a"]);
    }
}
