//! Endpoint URLs as errors and logs may show them.

/// `endpoint` as an error may show it: a password in the URL
/// (`redis://user:secret@host`) is left out.
pub(crate) fn shown(endpoint: &str) -> String {
    match endpoint.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('/').map_or(rest, |(authority, _)| authority).rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => endpoint.to_string(),
        },
        None => "(not a URL)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_endpoint_is_never_shown() {
        assert_eq!(shown("redis://:hunter2@cache:6379/0"), "redis://***@cache:6379");
        assert_eq!(shown("rediss://user:hunter2@cache"), "rediss://***@cache");
        assert_eq!(shown("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
        assert_eq!(shown("hunter2"), "(not a URL)");
    }
}
