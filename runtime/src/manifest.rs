//! The handler manifest: every handler the binary serves, as JSON.

use crate::registry::Registration;

/// Whether the process was asked to print its manifest and exit:
/// `CELERITY_EXTRACT_MANIFEST` set, or `--manifest` among the arguments.
pub(crate) fn requested() -> bool {
    std::env::var_os("CELERITY_EXTRACT_MANIFEST").is_some() || std::env::args_os().skip(1).any(|a| a == "--manifest")
}

/// The manifest of `registrations`, as JSON.
pub(crate) fn render(registrations: &[Registration]) -> String {
    let handlers: Vec<serde_json::Value> = registrations
        .iter()
        .map(|r| {
            serde_json::json!({
                "key": r.key.to_string(),
                "kind": r.kind.as_str(),
                "function": r.origin.function,
                "file": r.origin.file,
                "line": r.origin.line,
                "maxConcurrent": r.max_concurrent,
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "handlers": handlers })).unwrap_or_default()
}
