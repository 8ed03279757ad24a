//! Whether tracing and metrics are on: what the runtime asks for in
//! `RuntimeConfig`, and the application's overrides.

use celerity_proto::v1::RuntimeConfig;

use crate::registry::{HandlerKey, Registration};

/// Overrides the runtime's `tracing_enabled` flags for every handler.
pub const TRACING_ENV: &str = "CELERITY_SDK_TRACING";
/// Overrides the runtime's `metrics_enabled`.
pub const METRICS_ENV: &str = "CELERITY_SDK_METRICS";

/// An override read from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Override {
    /// Unset, empty or `runtime`: the runtime's flags decide.
    Runtime,
    /// `on`, `true`, `1` or `yes`.
    On,
    /// `off`, `false`, `0` or `no`.
    Off,
}

impl Override {
    /// Reads `variable` through `lookup`; a value that means nothing is
    /// reported (for a warning) and left to the runtime.
    pub(crate) fn read(
        variable: &'static str,
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Override, (&'static str, String)> {
        let Some(value) = lookup(variable) else {
            return Ok(Override::Runtime);
        };
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "runtime" => Ok(Override::Runtime),
            "on" | "true" | "1" | "yes" => Ok(Override::On),
            "off" | "false" | "0" | "no" => Ok(Override::Off),
            _ => Err((variable, value)),
        }
    }

    fn apply(self, runtime: bool) -> bool {
        match self {
            Override::Runtime => runtime,
            Override::On => true,
            Override::Off => false,
        }
    }

    fn describe(self) -> Option<&'static str> {
        match self {
            Override::Runtime => None,
            Override::On => Some("on"),
            Override::Off => Some("off"),
        }
    }
}

/// The switches in force for one stream, from its `RuntimeConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Switches {
    /// `RuntimeConfig.tracing_enabled`.
    pub runtime_tracing: bool,
    /// `RuntimeConfig.metrics_enabled`.
    pub runtime_metrics: bool,
    /// Whether each registered handler (by registration index) is traced.
    pub traced: Vec<bool>,
    /// The tag each registered handler is bound to, when it binds.
    pub tags: Vec<Option<String>>,
    /// Whether metrics are recorded: asked for, and built in.
    pub metrics: bool,
    pub tracing_override: Option<&'static str>,
    pub metrics_override: Option<&'static str>,
}

impl Switches {
    /// What `config` asks for, for `registrations`, with the overrides.
    ///
    /// A handler is traced when the runtime traces every handler
    /// (`RuntimeConfig.tracing_enabled`) or the blueprint traces this one
    /// (its `HandlerConfig.tracing_enabled`), unless [`TRACING_ENV`] says
    /// otherwise for all. Protobuf booleans cannot tell "off" from "not
    /// said", so a handler's own flag can add tracing, never take it away.
    pub(crate) fn from_config(
        config: &RuntimeConfig,
        registrations: &[Registration],
        tracing: Override,
        metrics: Override,
    ) -> Switches {
        let tags: Vec<Option<String>> = registrations.iter().map(|r| bound_tag(&r.key, config)).collect();
        let traced = tags
            .iter()
            .map(|tag| {
                let own = tag
                    .as_ref()
                    .is_some_and(|tag| config.handlers.iter().any(|h| h.handler_tag == *tag && h.tracing_enabled));
                tracing.apply(config.tracing_enabled || own)
            })
            .collect();
        Switches {
            runtime_tracing: config.tracing_enabled,
            runtime_metrics: config.metrics_enabled,
            traced,
            tags,
            metrics: cfg!(feature = "metrics") && metrics.apply(config.metrics_enabled),
            tracing_override: tracing.describe(),
            metrics_override: metrics.describe(),
        }
    }

    /// Whether the handler at `index` is traced.
    pub(crate) fn is_traced(&self, index: usize) -> bool {
        self.traced.get(index).copied().unwrap_or(false)
    }
}

/// The tag a registration binds to, as the handshake binds it.
fn bound_tag(key: &HandlerKey, config: &RuntimeConfig) -> Option<String> {
    match key {
        HandlerKey::Tag(tag) => Some(tag.clone()),
        HandlerKey::Name(name) => config
            .handlers
            .iter()
            .find(|h| h.handler_name == *name || (!h.published_name.is_empty() && h.published_name == *name))
            .map(|h| h.handler_tag.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celerity_proto::v1::HandlerConfig;

    async fn noop() {}

    fn config(runtime_tracing: bool, traced_tag: &str) -> RuntimeConfig {
        let handler = |name: &str, tag: &str| HandlerConfig {
            handler_name: name.into(),
            handler_tag: tag.into(),
            timeout_ms: 1000,
            tracing_enabled: tag == traced_tag,
            published_name: String::new(),
        };
        RuntimeConfig {
            tracing_enabled: runtime_tracing,
            metrics_enabled: true,
            handlers: vec![handler("a", "GET::/a"), handler("b", "GET::/b")],
            protocol_version: None,
        }
    }

    fn registrations() -> Vec<Registration> {
        vec![
            Registration::http(HandlerKey::Tag("GET::/a".into()), noop),
            Registration::http(HandlerKey::Name("b".into()), noop),
            Registration::http(HandlerKey::Name("nothing".into()), noop),
        ]
    }

    #[test]
    fn a_handler_is_traced_by_its_own_flag_or_the_runtime_s() {
        let s =
            Switches::from_config(&config(false, "GET::/b"), &registrations(), Override::Runtime, Override::Runtime);
        assert_eq!(s.traced, [false, true, false]);
        assert_eq!(s.tags, [Some("GET::/a".to_string()), Some("GET::/b".to_string()), None]);
        let s = Switches::from_config(&config(true, ""), &registrations(), Override::Runtime, Override::Runtime);
        assert_eq!(s.traced, [true, true, true]);
        assert!(s.is_traced(0));
        assert!(!s.is_traced(99));
    }

    #[test]
    fn the_overrides_win() {
        let s = Switches::from_config(&config(true, "GET::/a"), &registrations(), Override::Off, Override::Off);
        assert_eq!(s.traced, [false, false, false]);
        assert!(!s.metrics);
        assert_eq!(s.tracing_override, Some("off"));
        let s = Switches::from_config(&config(false, ""), &registrations(), Override::On, Override::On);
        assert_eq!(s.traced, [true, true, true]);
        assert_eq!(s.metrics, cfg!(feature = "metrics"));
    }

    #[test]
    fn overrides_are_read_leniently_and_nonsense_is_reported() {
        let read = |value: Option<&str>| {
            let value = value.map(str::to_string);
            Override::read(TRACING_ENV, &|_| value.clone())
        };
        assert_eq!(read(None), Ok(Override::Runtime));
        assert_eq!(read(Some("runtime")), Ok(Override::Runtime));
        assert_eq!(read(Some(" ON ")), Ok(Override::On));
        assert_eq!(read(Some("false")), Ok(Override::Off));
        assert_eq!(read(Some("sometimes")), Err((TRACING_ENV, "sometimes".to_string())));
    }
}
