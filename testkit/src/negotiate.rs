//! The runtime's verdict on a handler's `Ready` (specification, "Version
//! Negotiation" and "Tag Negotiation").

use std::collections::HashSet;

use celerity_proto::v1::{ProtocolVersion, Ready, ReadyAck, RuntimeConfig, ready_ack::RefusedReason};

/// Computes the `ReadyAck` the runtime answers `ready` with, given the
/// `config` it sent.
///
/// - When the config carries a `protocol_version` (a 1.0 runtime): a Ready
///   without a version, or with another major, is refused with
///   `REFUSED_REASON_PROTOCOL_VERSION` and empty tag lists; any minor of the
///   same major is served.
/// - When it carries none (a runtime older than 1.0), the handler's version is
///   ignored and `refused_reason` is never set.
/// - Tags: `unknown_tags` are in Ready but not in the config, in Ready's
///   order; `unhandled_tags` are in the config but not in Ready, in the
///   config's order; each listed once. Either non-empty refuses, with
///   `REFUSED_REASON_TAGS` (1.0 runtime).
pub fn negotiate(config: &RuntimeConfig, ready: &Ready) -> ReadyAck {
    let legacy = config.protocol_version.is_none();
    if let Some(served) = config.protocol_version
        && !version_served(served, ready.protocol_version)
    {
        return ReadyAck {
            accepted: false,
            unknown_tags: Vec::new(),
            unhandled_tags: Vec::new(),
            refused_reason: RefusedReason::ProtocolVersion as i32,
        };
    }

    let declared: HashSet<&str> = config.handlers.iter().map(|h| h.handler_tag.as_str()).collect();
    let registered: HashSet<&str> = ready.handler_tags.iter().map(String::as_str).collect();

    let unknown_tags = unique(ready.handler_tags.iter().map(String::as_str))
        .filter(|t| !declared.contains(t))
        .map(str::to_owned)
        .collect::<Vec<_>>();
    let unhandled_tags = unique(config.handlers.iter().map(|h| h.handler_tag.as_str()))
        .filter(|t| !registered.contains(t))
        .map(str::to_owned)
        .collect::<Vec<_>>();

    let accepted = unknown_tags.is_empty() && unhandled_tags.is_empty();
    let refused_reason = if accepted || legacy { RefusedReason::Unspecified } else { RefusedReason::Tags };
    ReadyAck { accepted, unknown_tags, unhandled_tags, refused_reason: refused_reason as i32 }
}

/// Whether a runtime serving `served` serves a handler declaring `declared`.
pub fn version_served(served: ProtocolVersion, declared: Option<ProtocolVersion>) -> bool {
    declared.is_some_and(|v| v.major == served.major)
}

/// Whether the handler declared a later minor of the served major (served,
/// and the runtime records that it happened).
pub fn is_later_minor(served: Option<ProtocolVersion>, declared: Option<ProtocolVersion>) -> bool {
    matches!((served, declared), (Some(s), Some(d)) if s.major == d.major && d.minor > s.minor)
}

fn unique<'a>(tags: impl Iterator<Item = &'a str>) -> impl Iterator<Item = &'a str> {
    let mut seen = HashSet::new();
    tags.filter(move |t| seen.insert(*t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_proto::v1::HandlerConfig;

    fn config(version: Option<(u32, u32)>, tags: &[&str]) -> RuntimeConfig {
        RuntimeConfig {
            handlers: tags.iter().map(|t| HandlerConfig { handler_tag: (*t).into(), ..Default::default() }).collect(),
            protocol_version: version.map(|(major, minor)| ProtocolVersion { major, minor }),
            ..Default::default()
        }
    }

    fn ready(version: Option<(u32, u32)>, tags: &[&str]) -> Ready {
        Ready {
            handler_tags: tags.iter().map(|t| (*t).into()).collect(),
            protocol_version: version.map(|(major, minor)| ProtocolVersion { major, minor }),
            ..Default::default()
        }
    }

    #[test]
    fn legacy_runtime_ignores_version_and_reason() {
        let ack = negotiate(&config(None, &["a", "b"]), &ready(None, &["a", "c", "c"]));
        assert!(!ack.accepted);
        assert_eq!(ack.unknown_tags, vec!["c"]);
        assert_eq!(ack.unhandled_tags, vec!["b"]);
        assert_eq!(ack.refused_reason, RefusedReason::Unspecified as i32);
    }

    #[test]
    fn versions() {
        let c = config(Some((1, 0)), &["a"]);
        assert!(negotiate(&c, &ready(Some((1, 3)), &["a"])).accepted);
        assert!(negotiate(&c, &ready(Some((1, 0)), &["a"])).accepted);
        for v in [None, Some((2, 0)), Some((0, 9))] {
            let ack = negotiate(&c, &ready(v, &["a"]));
            assert!(!ack.accepted);
            assert_eq!(ack.refused_reason, RefusedReason::ProtocolVersion as i32);
        }
        assert!(is_later_minor(c.protocol_version, Some(ProtocolVersion { major: 1, minor: 1 })));
    }
}
