//! The one block logged when the handler starts serving.

use std::fmt::Write as _;

use super::switches::Switches;
use crate::registry::Registration;
use crate::session::HandshakeReport;
use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR, SDK_VERSION};

/// Everything the startup block shows.
pub(crate) struct Startup<'a> {
    pub report: &'a HandshakeReport,
    pub registrations: &'a [Registration],
    pub switches: &'a Switches,
    pub socket: String,
    pub credit: u32,
}

/// The block: versions, socket, credit, tracing and metrics, then one line
/// per handler served (tag, kind, cap, tracing, Rust function and source),
/// then whatever the handshake found missing on either side.
pub(crate) fn render(startup: &Startup<'_>) -> String {
    let Startup { report, registrations, switches, socket, credit } = startup;
    let mut out = String::new();
    let served = report.served.len();
    let _ = write!(
        out,
        "serving {served} handler{}: celerity SDK {SDK_VERSION}, protocol {PROTOCOL_MAJOR}.{PROTOCOL_MINOR}",
        plural(served)
    );
    match report.runtime_version {
        Some((major, minor)) => {
            let _ = write!(out, " (the runtime serves {major}.{minor})");
        }
        None => {
            out.push_str(" (the runtime did not say which protocol version it serves: it predates version negotiation)")
        }
    }
    let _ = write!(out, "\n  socket   {socket}");
    let _ = write!(out, "\n  credit   {credit} event{} in flight at once", plural(*credit as usize));

    let lines: Vec<(String, &Registration, bool)> = report
        .served
        .iter()
        .chain(&report.undeclared)
        .filter_map(|(tag, _)| {
            let index = switches.tags.iter().position(|t| t.as_deref() == Some(tag.as_str()))?;
            Some((tag.clone(), &registrations[index], switches.is_traced(index)))
        })
        .collect();
    let traced = lines.iter().filter(|(_, _, traced)| *traced).count();
    let _ = write!(out, "\n  tracing  ");
    let source = match switches.tracing_override {
        Some(value) => format!("{} = {value}", super::switches::TRACING_ENV),
        None => format!("RuntimeConfig.tracing_enabled = {}", switches.runtime_tracing),
    };
    if traced == lines.len() {
        let _ = write!(out, "every event's span at INFO ({source})");
    } else if traced == 0 {
        let _ = write!(out, "off: event spans at TRACE only ({source}, no handler's tracing_enabled)");
    } else {
        let _ = write!(
            out,
            "event spans at INFO for the {traced} handler(s) marked `traced`, TRACE for the rest ({source})"
        );
    }
    let _ = write!(out, "\n  metrics  ");
    if !cfg!(feature = "metrics") {
        out.push_str("not built in (the `metrics` feature is off)");
    } else {
        let source = match switches.metrics_override {
            Some(value) => format!("{} = {value}", super::switches::METRICS_ENV),
            None => format!("RuntimeConfig.metrics_enabled = {}", switches.runtime_metrics),
        };
        let _ = write!(out, "{} ({source})", if switches.metrics { "on" } else { "off" });
    }

    let width = lines.iter().map(|(tag, _, _)| tag.len()).max().unwrap_or(0);
    for (tag, registration, traced) in &lines {
        let cap = match registration.max_concurrent {
            Some(cap) => format!("max {cap}"),
            None => "no cap".to_string(),
        };
        let _ = write!(
            out,
            "\n  {tag:<width$}  {:<9} {cap:<8} {:<6}  {}",
            registration.kind.as_str(),
            if *traced { "traced" } else { "" },
            registration.origin
        );
    }
    for (tag, label) in &report.undeclared {
        let _ = write!(out, "\n  undeclared  {tag}  <- {label} (the blueprint has no such handler)");
    }
    for (tag, name) in &report.unregistered {
        let _ = write!(out, "\n  missing     {tag}  (blueprint handler `{name}` has no handler in this binary)");
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::HandlerKey;

    async fn noop() {}

    #[test]
    fn one_block_with_versions_socket_credit_and_each_handler() {
        let registrations = vec![
            Registration::http(HandlerKey::Tag("GET::/orders/{id}".into()), noop).max_concurrent(8),
            Registration::schedule(HandlerKey::Tag("source::nightly::cleanup".into()), noop),
        ];
        let report = HandshakeReport {
            runtime_version: Some((1, 0)),
            served: vec![
                ("GET::/orders/{id}".into(), registrations[0].origin.to_string()),
                ("source::nightly::cleanup".into(), registrations[1].origin.to_string()),
            ],
            undeclared: vec![],
            unregistered: vec![("custom::resize".into(), "resize".into())],
        };
        let switches = Switches {
            traced: vec![true, false],
            tags: vec![Some("GET::/orders/{id}".into()), Some("source::nightly::cleanup".into())],
            ..Switches::default()
        };
        let text = render(&Startup {
            report: &report,
            registrations: &registrations,
            switches: &switches,
            socket: "unix:/tmp/runtime.sock".into(),
            credit: 64,
        });
        assert!(text.starts_with(&format!("serving 2 handlers: celerity SDK {SDK_VERSION}, protocol 1.0")), "{text}");
        assert!(text.contains("(the runtime serves 1.0)"), "{text}");
        assert!(text.contains("\n  socket   unix:/tmp/runtime.sock"), "{text}");
        assert!(text.contains("\n  credit   64 events in flight at once"), "{text}");
        assert!(text.contains("for the 1 handler(s) marked `traced`"), "{text}");
        assert!(text.contains("RuntimeConfig.tracing_enabled = false"), "{text}");
        let order = text.lines().find(|l| l.contains("GET::/orders/{id}")).unwrap();
        assert!(order.contains("http") && order.contains("max 8") && order.contains("traced"), "{order}");
        assert!(order.contains("noop"), "{order}");
        let cleanup = text.lines().find(|l| l.contains("source::nightly::cleanup")).unwrap();
        assert!(cleanup.contains("schedule") && cleanup.contains("no cap") && !cleanup.contains("traced"), "{cleanup}");
        assert!(text.contains("missing     custom::resize"), "{text}");
    }

    #[test]
    fn an_unversioned_runtime_is_said_so() {
        let report = HandshakeReport::default();
        let text = render(&Startup {
            report: &report,
            registrations: &[],
            switches: &Switches::default(),
            socket: "tcp:127.0.0.1:8592".into(),
            credit: 1,
        });
        assert!(text.starts_with("serving 0 handlers"), "{text}");
        assert!(text.contains("predates version negotiation"), "{text}");
        assert!(text.contains("1 event in flight at once"), "{text}");
    }
}
