//! The process environment, read once into a snapshot that discovery, the
//! links and the platform all read from, so that tests can give one of
//! their own.

use std::collections::BTreeMap;

/// A snapshot of environment variables.
#[derive(Debug, Clone, Default)]
pub(crate) struct Environment {
    vars: BTreeMap<String, String>,
}

impl Environment {
    /// The process's environment now. Variables whose name or value is not
    /// UTF-8 are left out: none of the SDK's are.
    pub(crate) fn process() -> Self {
        Environment {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    pub(crate) fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Environment { vars: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    /// A variable's value; an empty one counts as unset, as the deployment
    /// tooling writes empty values for what it does not set.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }

    /// Whether a variable is present at all, even empty.
    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.vars.contains_key(name)
    }

    /// Every variable whose name starts with `prefix`, with it taken off.
    pub(crate) fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.vars
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(move |(k, v)| (&k[prefix.len()..], v.as_str()))
    }
}
