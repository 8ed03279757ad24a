//! How a test runtime behaves towards each handler stream.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use celerity_proto::v1::{Ready, ReadyAck, RuntimeConfig, RuntimeMessage};

/// How long a handler has from connecting to send Ready (specification,
/// "Declaring The Handler").
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`TestRuntime::accept`](crate::TestRuntime::accept) waits by default for a handler to
/// connect and finish its handshake.
pub const DEFAULT_ACCEPT_TIMEOUT: Duration = Duration::from_secs(60);

/// Replaces the computed `ReadyAck`: gets the handler's Ready and the ack the
/// runtime computed, returns the ack to send.
pub(crate) type AckOverride = Arc<dyn Fn(&Ready, ReadyAck) -> ReadyAck + Send + Sync>;

/// Per-stream behaviour, shared by every handshake.
pub(crate) struct Settings {
    /// The RuntimeConfig sent first (and negotiated against).
    pub(crate) config: RuntimeConfig,
    /// A frame sent instead of the config, if set.
    pub(crate) first_frame: Option<RuntimeMessage>,
    /// How long after connecting the handler has to send Ready.
    pub(crate) ready_timeout: Duration,
    /// Default timeout of a connection's wait methods.
    pub(crate) wait_timeout: Duration,
    /// Replaces the computed ReadyAck, if set.
    pub(crate) ack_override: Option<AckOverride>,
    /// Set while the runtime drains: new streams are refused.
    pub(crate) refusing: Arc<AtomicBool>,
}
