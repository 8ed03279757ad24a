//! The trace header Lambda gives an invocation, as the dispatch's W3C trace
//! context.
//!
//! Lambda passes the X-Ray header (`Root=1-{time}-{id};Parent={span};Sampled=1`).
//! Its root is a 128-bit trace id and its parent a 64-bit span id, the
//! sizes W3C trace context uses, so it becomes a `traceparent` the SDK's
//! spans (and OpenTelemetry) read. The header itself is kept beside it as
//! `x-amzn-trace-id`, for code that calls on to AWS services.

use std::collections::HashMap;

/// The trace context of an invocation whose X-Ray header is `header`: empty
/// without one, and without `traceparent` when it lacks a root or parent
/// of the expected form.
pub(crate) fn trace_context(header: Option<&str>) -> HashMap<String, String> {
    let mut context = HashMap::new();
    let Some(header) = header.map(str::trim).filter(|header| !header.is_empty()) else { return context };
    if let Some(traceparent) = traceparent(header) {
        context.insert("traceparent".to_string(), traceparent);
    }
    context.insert("x-amzn-trace-id".to_string(), header.to_string());
    context
}

fn traceparent(header: &str) -> Option<String> {
    let field = |name: &str| {
        header.split(';').find_map(|part| part.trim().strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
    };
    let root = field("Root")?;
    let trace_id: String = root.strip_prefix("1-")?.split('-').collect();
    let parent = field("Parent")?;
    let hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit()) && text.bytes().any(|b| b != b'0')
    };
    if !hex(&trace_id, 32) || !hex(parent, 16) {
        return None;
    }
    let flags = if field("Sampled") == Some("1") { "01" } else { "00" };
    Some(format!("00-{}-{}-{flags}", trace_id.to_ascii_lowercase(), parent.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xray_header_becomes_a_traceparent() {
        let header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
        let context = trace_context(Some(header));
        assert_eq!(context["traceparent"], "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01");
        assert_eq!(context["x-amzn-trace-id"], header);
        let unsampled = trace_context(Some("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8"));
        assert!(unsampled["traceparent"].ends_with("-00"));
    }

    #[test]
    fn a_header_without_a_parent_or_of_another_form_gives_no_traceparent() {
        for header in [
            "Root=1-5759e988-bd862e3fe1be46a994272793",
            "Root=1-5759e988-bd86;Parent=53995c3f42cd8ad8",
            "Parent=53995c3f42cd8ad8",
            "garbage",
        ] {
            let context = trace_context(Some(header));
            assert!(!context.contains_key("traceparent"), "{header}");
            assert_eq!(context["x-amzn-trace-id"], header);
        }
        assert!(trace_context(None).is_empty());
        assert!(trace_context(Some("  ")).is_empty());
    }
}
