//! Binding registered handlers to the blueprint's tags, and the report and
//! `Ready` that follow from it.

use std::collections::BTreeMap;
use std::fmt;

use celerity_proto::v1::{HandlerLimit, ProtocolVersion, Ready, RuntimeConfig};

use super::{HandlerKey, HandlerSpec, SessionError};
use crate::kind::HandlerKind;
use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR};

/// What the handshake found when it compared the handlers registered in code
/// with the ones the blueprint declares. Logged before `Ready` is sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandshakeReport {
    /// The protocol version the runtime serves, when it says.
    pub runtime_version: Option<(u32, u32)>,
    /// Tags registered in code and declared by the blueprint: `(tag, handler)`.
    pub served: Vec<(String, String)>,
    /// Tags registered in code that the blueprint does not declare.
    pub undeclared: Vec<(String, String)>,
    /// Tags the blueprint declares that no handler in code serves:
    /// `(tag, blueprint handler name)`.
    pub unregistered: Vec<(String, String)>,
}

impl HandshakeReport {
    /// Whether the runtime can be expected to accept this handler's `Ready`.
    pub fn is_complete(&self) -> bool {
        self.undeclared.is_empty() && self.unregistered.is_empty()
    }
}

impl fmt::Display for HandshakeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "handlers: {} served, {} registered but not declared by the blueprint, {} declared but not registered",
            self.served.len(),
            self.undeclared.len(),
            self.unregistered.len()
        )?;
        for (tag, label) in &self.served {
            write!(f, "\n  served      {tag}  <- {label}")?;
        }
        for (tag, label) in &self.undeclared {
            write!(f, "\n  undeclared  {tag}  <- {label} (the blueprint has no such handler)")?;
        }
        for (tag, name) in &self.unregistered {
            write!(f, "\n  missing     {tag}  (blueprint handler `{name}` has no handler in this binary)")?;
        }
        Ok(())
    }
}

/// The outcome of binding: which registered handler serves which tag.
#[derive(Debug)]
pub(crate) struct Binding {
    /// Tag → index into the registered handlers.
    pub by_tag: super::FastMap<String, usize>,
    /// Index → bound tag.
    pub tags: Vec<String>,
    pub report: HandshakeReport,
}

/// Resolves every registered handler to a tag, using the blueprint for the
/// ones registered by name, and compares the result with what the blueprint
/// declares.
pub(crate) fn bind(handlers: &[HandlerSpec], config: &RuntimeConfig) -> Result<Binding, SessionError> {
    let mut tags = Vec::with_capacity(handlers.len());
    for spec in handlers {
        let tag = match &spec.key {
            HandlerKey::Tag(tag) => tag.clone(),
            HandlerKey::Name(name) => config
                .handlers
                .iter()
                .find(|h| h.handler_name == *name || (!h.published_name.is_empty() && h.published_name == *name))
                .map(|h| h.handler_tag.clone())
                .ok_or_else(|| SessionError::UnknownHandlerName {
                    name: name.clone(),
                    handler: spec.label.clone(),
                    declared: declared_names(config),
                })
                .and_then(|tag| route_fits(spec, name, tag))?,
        };
        tags.push(tag);
    }

    let mut by_tag: super::FastMap<String, usize> =
        super::FastMap::with_capacity_and_hasher(tags.len(), Default::default());
    for (index, tag) in tags.iter().enumerate() {
        if let Some(&first) = by_tag.get(tag) {
            return Err(SessionError::DuplicateTag {
                tag: tag.clone(),
                first: handlers[first].label.clone(),
                second: handlers[index].label.clone(),
            });
        }
        by_tag.insert(tag.clone(), index);
    }

    let declared: BTreeMap<&str, &str> =
        config.handlers.iter().map(|h| (h.handler_tag.as_str(), h.handler_name.as_str())).collect();
    let mut report = HandshakeReport {
        runtime_version: config.protocol_version.map(|v| (v.major, v.minor)),
        ..HandshakeReport::default()
    };
    for (index, tag) in tags.iter().enumerate() {
        let entry = (tag.clone(), handlers[index].label.clone());
        if declared.contains_key(tag.as_str()) {
            report.served.push(entry);
        } else {
            report.undeclared.push(entry);
        }
    }
    for (tag, name) in &declared {
        if !by_tag.contains_key(*tag) {
            report.unregistered.push((tag.to_string(), name.to_string()));
        }
    }
    report.served.sort();
    report.undeclared.sort();

    Ok(Binding { by_tag, tags, report })
}

/// `tag`, the one the blueprint gives `spec`'s `name`, if the handler's
/// arguments can be taken from its route. A handler bound by tag had its
/// route checked before connecting.
fn route_fits(spec: &HandlerSpec, name: &str, tag: String) -> Result<String, SessionError> {
    if spec.kind != HandlerKind::Http {
        return Ok(tag);
    }
    match super::route_fits(&spec.route, &tag) {
        Ok(()) => Ok(tag),
        Err(problem) => {
            Err(SessionError::RouteMismatch { handler: spec.label.clone(), name: name.to_string(), tag, problem })
        }
    }
}

fn declared_names(config: &RuntimeConfig) -> Vec<String> {
    let mut names: Vec<String> = config
        .handlers
        .iter()
        .flat_map(|h| [h.handler_name.clone(), h.published_name.clone()])
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Checks the runtime's protocol version against ours: another major is
/// refused; a missing version (an older runtime) and any minor are served.
pub(crate) fn check_version(config: &RuntimeConfig) -> Result<(), SessionError> {
    match config.protocol_version {
        Some(v) if v.major != PROTOCOL_MAJOR => {
            Err(SessionError::VersionMismatch { ours: (PROTOCOL_MAJOR, PROTOCOL_MINOR), theirs: (v.major, v.minor) })
        }
        _ => Ok(()),
    }
}

/// Builds `Ready`: every bound tag (sorted), the initial credit, our versions
/// and the per-tag caps.
pub(crate) fn ready(handlers: &[HandlerSpec], binding: &Binding, initial_credit: u32, sdk_version: &str) -> Ready {
    let mut handler_tags = binding.tags.clone();
    handler_tags.sort();
    let mut limits: Vec<HandlerLimit> = handlers
        .iter()
        .zip(&binding.tags)
        .filter_map(|(spec, tag)| {
            spec.max_concurrent.map(|max| HandlerLimit { handler_tag: tag.clone(), max_concurrent: max })
        })
        .collect();
    limits.sort_by(|a, b| a.handler_tag.cmp(&b.handler_tag));
    Ready {
        handler_tags,
        initial_credit,
        sdk_version: sdk_version.to_string(),
        limits,
        protocol_version: Some(ProtocolVersion { major: PROTOCOL_MAJOR, minor: PROTOCOL_MINOR }),
    }
}
