//! Settings read from the environment the runtime starts the handler with.
//!
//! | variable | meaning | default |
//! | --- | --- | --- |
//! | `CELERITY_RUNTIME_SOCKET` | Unix socket the runtime serves | `/var/run/celerity/runtime.sock` |
//! | `CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED` | `true`: connect over loopback TCP instead | off |
//! | `CELERITY_RUNTIME_SOCKET_FALLBACK_PORT` | the TCP port on 127.0.0.1 (not 0) | `8592` |
//! | `CELERITY_HANDLER_CONCURRENCY` | worker pool size, declared as the initial credit | [`DEFAULT_CONCURRENCY`] |
//! | `CELERITY_CONNECT_TIMEOUT_MS` | how long to retry while the socket is missing or refuses | `30000` |
//! | `CELERITY_MAX_MESSAGE_BYTES` | largest frame accepted or sent, at least 65536 | 64 MiB |
//! | `CELERITY_HANDSHAKE_TIMEOUT_MS` | how long to wait, from connecting, for the event stream to open, for `RuntimeConfig`, and then for `ReadyAck` | `30000` |
//! | `CELERITY_CANCEL_GRACE_MS` | how long a handler may run on after its deadline passes or a `Cancel` arrives, before it is dropped and answered for; below `5000` (the runtime reclaims the place itself after 5 s) | `1000` |
//! | `CELERITY_SHUTDOWN_GRACE_MS` | the deadline put on `Draining` after SIGTERM or SIGINT | `10000` |
//! | `CELERITY_IO_THREAD` | `false`: serve the event stream as a task on the application's runtime instead of from a thread of its own: less CPU and latency per small event, but handlers blocking every worker thread then hold it back (see [`crate::App::io_thread`]) | on |
//! | `CELERITY_EXPOSE_PANICS` | `true`: a panicking handler's message goes in `HandlerError.message` and its stack trace in `HandlerError.stack`, and a consumer record that panicked fails with `panicked: <message>`. Off by default, because the runtime shows `HandlerError` text to HTTP callers: the answer is then `the handler panicked` (a record's failure `panicked`), and the message is only logged | off |

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::session::{HandlerSpec, SessionConfig};

/// Where the runtime serves when `CELERITY_RUNTIME_SOCKET` is not set.
pub const DEFAULT_SOCKET: &str = "/var/run/celerity/runtime.sock";
/// The loopback TCP port used when the fallback is enabled and no port is set.
pub const DEFAULT_FALLBACK_PORT: u16 = 8592;
/// The worker pool size, and so the initial credit, when
/// `CELERITY_HANDLER_CONCURRENCY` is not set.
pub const DEFAULT_CONCURRENCY: u32 = 64;
/// The smallest `CELERITY_MAX_MESSAGE_BYTES`: every answer the SDK composes
/// itself must fit a frame.
pub const MIN_MAX_MESSAGE_BYTES: usize = crate::session::MIN_MESSAGE_BYTES;

pub use crate::session::{DEFAULT_CANCEL_GRACE_MS, DEFAULT_HANDSHAKE_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES};
/// How long the runtime waits after cancelling before it takes the place
/// back itself. The cancel grace must be shorter, so that the answer for a
/// handler that ignores its cancellation still returns the place.
pub const RUNTIME_RECLAIM_MS: u64 = 5_000;

/// Where to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Unix domain socket.
    Unix(PathBuf),
    /// Loopback TCP.
    Tcp(SocketAddr),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Unix(path) => write!(f, "unix:{}", path.display()),
            Target::Tcp(addr) => write!(f, "tcp:{addr}"),
        }
    }
}

/// Everything the SDK reads from its environment. Built by
/// [`Settings::from_env`] or [`Settings::from_lookup`]; its fields can then
/// be changed, and more may be added.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// Where the runtime serves.
    pub target: Target,
    /// How long to keep retrying while the socket is missing or refuses.
    pub connect_timeout: Duration,
    /// The worker pool size, declared as the initial credit.
    pub concurrency: u32,
    /// The largest frame accepted or sent.
    pub max_message_bytes: usize,
    /// How long a cancelled handler may run on before it is abandoned;
    /// always below [`RUNTIME_RECLAIM_MS`].
    pub cancel_grace: Duration,
    /// The deadline put on `Draining` after SIGTERM.
    pub shutdown_grace: Duration,
    /// How long to wait, from connecting, for the stream to open, for
    /// `RuntimeConfig` and then for `ReadyAck`, before giving up with an
    /// error naming what did not come.
    pub handshake_timeout: Duration,
    /// Whether the event stream is served from a thread of its own rather
    /// than as a task on the application's runtime (see
    /// [`crate::App::io_thread`]).
    pub io_thread: bool,
    /// Whether a panic's message and stack trace are sent to the runtime
    /// (otherwise a fixed text is, and the message is only logged).
    pub expose_panics: bool,
}

/// A setting in the environment that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.variable, self.value, self.problem)
    }
}

impl std::error::Error for SettingsError {}

impl Settings {
    /// The protocol core's configuration for `handlers`, with every setting
    /// it uses taken from these: the pool size, the cancellation and
    /// shutdown graces, the handshake timeout and the largest frame.
    pub(crate) fn session_config(&self, handlers: Vec<HandlerSpec>) -> SessionConfig {
        let mut config = SessionConfig::new(handlers, self.concurrency);
        config.cancel_grace_ms = u64::try_from(self.cancel_grace.as_millis()).unwrap_or(u64::MAX);
        config.shutdown_grace_ms = u64::try_from(self.shutdown_grace.as_millis()).unwrap_or(u64::MAX);
        config.handshake_timeout_ms = u64::try_from(self.handshake_timeout.as_millis()).unwrap_or(u64::MAX);
        config.max_message_bytes = self.max_message_bytes;
        config
    }

    /// The settings of an environment that sets none of the variables.
    pub(crate) fn defaults() -> Self {
        // Every default is within its own bounds, so nothing here can fail.
        Self::from_lookup(|_| None).unwrap_or_else(|error| unreachable!("a default setting is refused: {error}"))
    }

    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup`, which maps a variable name to its
    /// value. Lets tests supply an environment without touching the process's.
    ///
    /// ```
    /// use celerity::settings::{Settings, Target};
    ///
    /// let settings = Settings::from_lookup(|name| match name {
    ///     "CELERITY_RUNTIME_SOCKET" => Some("/tmp/runtime.sock".to_string()),
    ///     _ => None,
    /// })
    /// .unwrap();
    /// assert_eq!(settings.target, Target::Unix("/tmp/runtime.sock".into()));
    /// ```
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let fallback = match lookup("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED") {
            None => false,
            Some(value) => parse_bool("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", &value)?,
        };
        let target = if fallback {
            let port = match lookup("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT") {
                None => DEFAULT_FALLBACK_PORT,
                Some(value) => parse_port(&value)?,
            };
            Target::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        } else {
            let path = lookup("CELERITY_RUNTIME_SOCKET")
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| DEFAULT_SOCKET.to_string());
            Target::Unix(PathBuf::from(path))
        };
        Ok(Settings {
            target,
            connect_timeout: Duration::from_millis(parse_number(&lookup, "CELERITY_CONNECT_TIMEOUT_MS", 30_000, 0)?),
            concurrency: parse_number(&lookup, "CELERITY_HANDLER_CONCURRENCY", DEFAULT_CONCURRENCY as u64, 1)?
                .min(u64::from(u32::MAX)) as u32,
            max_message_bytes: parse_number(
                &lookup,
                "CELERITY_MAX_MESSAGE_BYTES",
                DEFAULT_MAX_MESSAGE_BYTES as u64,
                MIN_MAX_MESSAGE_BYTES as u64,
            )?
            .min(usize::MAX as u64) as usize,
            cancel_grace: Duration::from_millis(parse_cancel_grace(&lookup)?),
            shutdown_grace: Duration::from_millis(parse_number(&lookup, "CELERITY_SHUTDOWN_GRACE_MS", 10_000, 0)?),
            handshake_timeout: Duration::from_millis(parse_number(
                &lookup,
                "CELERITY_HANDSHAKE_TIMEOUT_MS",
                DEFAULT_HANDSHAKE_TIMEOUT_MS,
                1,
            )?),
            io_thread: match lookup("CELERITY_IO_THREAD") {
                None => true,
                Some(value) => parse_bool("CELERITY_IO_THREAD", &value)?,
            },
            expose_panics: match lookup("CELERITY_EXPOSE_PANICS") {
                None => false,
                Some(value) => parse_bool("CELERITY_EXPOSE_PANICS", &value)?,
            },
        })
    }
}

fn parse_cancel_grace(lookup: &impl Fn(&str) -> Option<String>) -> Result<u64, SettingsError> {
    let variable = "CELERITY_CANCEL_GRACE_MS";
    let grace = parse_number(lookup, variable, DEFAULT_CANCEL_GRACE_MS, 0)?;
    if grace >= RUNTIME_RECLAIM_MS {
        return Err(SettingsError {
            variable,
            value: lookup(variable).unwrap_or_default(),
            problem: format!(
                "the grace must be below {RUNTIME_RECLAIM_MS} ms: the runtime takes a cancelled event's place back \
                 itself {RUNTIME_RECLAIM_MS} ms after cancelling it, so a later answer would no longer return it; \
                 the default is {DEFAULT_CANCEL_GRACE_MS}"
            ),
        });
    }
    Ok(grace)
}

fn parse_bool(variable: &'static str, value: &str) -> Result<bool, SettingsError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" | "" => Ok(false),
        _ => Err(SettingsError { variable, value: value.to_string(), problem: "expected true or false".to_string() }),
    }
}

fn parse_port(value: &str) -> Result<u16, SettingsError> {
    let variable = "CELERITY_RUNTIME_SOCKET_FALLBACK_PORT";
    let port: u16 = value.trim().parse().map_err(|_| SettingsError {
        variable,
        value: value.to_string(),
        problem: "expected a TCP port number from 1 to 65535".to_string(),
    })?;
    if port == 0 {
        return Err(SettingsError {
            variable,
            value: value.to_string(),
            problem: "port 0 asks the operating system for any free port, which the runtime cannot be listening on; \
                      set the port the runtime serves its TCP fallback on"
                .to_string(),
        });
    }
    Ok(port)
}

fn parse_number(
    lookup: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    default: u64,
    min: u64,
) -> Result<u64, SettingsError> {
    let Some(value) = lookup(variable) else {
        return Ok(default);
    };
    match value.trim().parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(SettingsError { variable, value, problem: format!("expected a whole number of at least {min}") }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_lookup(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.target, Target::Unix(DEFAULT_SOCKET.into()));
        assert_eq!(s.concurrency, DEFAULT_CONCURRENCY);
        assert_eq!(s.connect_timeout, Duration::from_secs(30));
        assert_eq!(s.max_message_bytes, 64 * 1024 * 1024);
        assert_eq!(s.cancel_grace, Duration::from_secs(1));
        assert_eq!(s.shutdown_grace, Duration::from_secs(10));
        assert_eq!(s.handshake_timeout, Duration::from_secs(30));
        assert!(!s.expose_panics);
    }

    #[test]
    fn the_handshake_timeout_is_configurable_and_positive() {
        let s = settings(&[("CELERITY_HANDSHAKE_TIMEOUT_MS", "1500")]).unwrap();
        assert_eq!(s.handshake_timeout, Duration::from_millis(1500));
        for bad in ["0", "soon", "-1"] {
            let err = settings(&[("CELERITY_HANDSHAKE_TIMEOUT_MS", bad)]).unwrap_err();
            assert_eq!(err.variable, "CELERITY_HANDSHAKE_TIMEOUT_MS");
        }
        let config = s.session_config(Vec::new());
        assert_eq!(config.handshake_timeout_ms, 1500);
        assert_eq!(config.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
    }

    #[test]
    fn the_largest_frame_has_room_for_the_sdks_own_answers() {
        assert_eq!(settings(&[("CELERITY_MAX_MESSAGE_BYTES", "65536")]).unwrap().max_message_bytes, 65536);
        let err = settings(&[("CELERITY_MAX_MESSAGE_BYTES", "1024")]).unwrap_err();
        assert!(err.problem.contains("65536"), "{err}");
    }

    #[test]
    fn cancel_grace_stays_inside_the_runtime_reclaim() {
        assert_eq!(settings(&[("CELERITY_CANCEL_GRACE_MS", "250")]).unwrap().cancel_grace, Duration::from_millis(250));
        assert_eq!(settings(&[("CELERITY_CANCEL_GRACE_MS", "4999")]).unwrap().cancel_grace.as_millis(), 4999);
        assert_eq!(settings(&[("CELERITY_CANCEL_GRACE_MS", "0")]).unwrap().cancel_grace, Duration::ZERO);
        for bad in ["5000", "60000"] {
            let err = settings(&[("CELERITY_CANCEL_GRACE_MS", bad)]).unwrap_err();
            assert_eq!(err.variable, "CELERITY_CANCEL_GRACE_MS");
            assert!(err.problem.contains("below 5000 ms"), "{err}");
            assert_eq!(err.value, bad);
        }
        assert!(settings(&[("CELERITY_CANCEL_GRACE_MS", "soon")]).is_err());
    }

    #[test]
    fn the_stack_is_exposed_only_when_asked() {
        assert!(settings(&[]).unwrap().io_thread);
        assert!(!settings(&[("CELERITY_IO_THREAD", "false")]).unwrap().io_thread);
        assert!(settings(&[("CELERITY_IO_THREAD", "often")]).is_err());
        assert!(settings(&[("CELERITY_EXPOSE_PANICS", "true")]).unwrap().expose_panics);
        assert!(!settings(&[("CELERITY_EXPOSE_PANICS", "false")]).unwrap().expose_panics);
        assert_eq!(
            settings(&[("CELERITY_EXPOSE_PANICS", "sometimes")]).unwrap_err().variable,
            "CELERITY_EXPOSE_PANICS"
        );
        // The old name is not read any more.
        assert!(!settings(&[("CELERITY_EXPOSE_STACK", "true")]).unwrap().expose_panics);
    }

    #[test]
    fn socket_path_from_env() {
        let s = settings(&[("CELERITY_RUNTIME_SOCKET", "/tmp/x.sock")]).unwrap();
        assert_eq!(s.target, Target::Unix("/tmp/x.sock".into()));
    }

    #[test]
    fn fallback_uses_loopback_and_the_default_port() {
        let s = settings(&[("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true")]).unwrap();
        assert_eq!(s.target, Target::Tcp("127.0.0.1:8592".parse().unwrap()));
        let s = settings(&[
            ("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true"),
            ("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", "9000"),
        ])
        .unwrap();
        assert_eq!(s.target, Target::Tcp("127.0.0.1:9000".parse().unwrap()));
    }

    #[test]
    fn port_zero_is_refused_with_the_reason() {
        let err = settings(&[
            ("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true"),
            ("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", "0"),
        ])
        .unwrap_err();
        assert_eq!(err.variable, "CELERITY_RUNTIME_SOCKET_FALLBACK_PORT");
        assert!(err.to_string().contains("port 0"), "{err}");
    }

    #[test]
    fn port_that_does_not_parse_is_refused() {
        for bad in ["abc", "70000", "-1", ""] {
            let err = settings(&[
                ("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "true"),
                ("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", bad),
            ])
            .unwrap_err();
            assert!(err.problem.contains("1 to 65535"), "{bad}: {err}");
        }
    }

    #[test]
    fn port_is_ignored_without_the_fallback() {
        let s = settings(&[("CELERITY_RUNTIME_SOCKET_FALLBACK_PORT", "0")]).unwrap();
        assert!(matches!(s.target, Target::Unix(_)));
    }

    #[test]
    fn concurrency_must_be_positive() {
        assert_eq!(settings(&[("CELERITY_HANDLER_CONCURRENCY", "8")]).unwrap().concurrency, 8);
        assert!(settings(&[("CELERITY_HANDLER_CONCURRENCY", "0")]).is_err());
        assert!(settings(&[("CELERITY_HANDLER_CONCURRENCY", "many")]).is_err());
    }

    #[test]
    fn fallback_flag_must_be_a_boolean() {
        assert!(settings(&[("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "perhaps")]).is_err());
        let s = settings(&[("CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED", "false")]).unwrap();
        assert!(matches!(s.target, Target::Unix(_)));
    }
}
