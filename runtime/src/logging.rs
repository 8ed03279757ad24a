//! A default log output for binaries that set none, with room for one more
//! layer (an OpenTelemetry exporter's, say) added once it is running.

use std::any::TypeId;
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata};
use tracing_subscriber::layer::{Context, Layered, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

/// What a layer added with [`crate::observe::install_layer`] sits on: the
/// registry, filtered by `RUST_LOG`.
pub type DefaultSubscriber = Layered<EnvFilter, Registry>;

/// A layer added to the default subscriber after it was installed. Set once
/// and never replaced or dropped, so a pointer into it stays valid for as
/// long as the (global, never dropped) subscriber lives.
static EXTRA: OnceLock<Box<dyn Layer<DefaultSubscriber> + Send + Sync>> = OnceLock::new();
/// Whether the default subscriber is the process's.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs a `tracing` subscriber writing to stderr, filtered by `RUST_LOG`
/// (default `info`), unless the application installed one already. Colour
/// only when stderr is a terminal, so logs captured by the runtime stay plain.
pub(crate) fn init_default() {
    if INSTALLED.load(Ordering::Acquire) {
        return;
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    if Registry::default().with(filter).with(Extra).with(output).try_init().is_ok() {
        INSTALLED.store(true, Ordering::Release);
    }
}

/// Why a layer could not be added to the default subscriber.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InstallLayerError {
    /// The application installed a `tracing` subscriber of its own: add the
    /// layer to that one.
    OtherSubscriber,
    /// A layer was added already; only one can be.
    AlreadyInstalled,
}

impl std::fmt::Display for InstallLayerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallLayerError::OtherSubscriber => write!(
                f,
                "the application installed a tracing subscriber of its own, so the SDK's default one is not in use; \
                 add the layer to the application's subscriber instead"
            ),
            InstallLayerError::AlreadyInstalled => {
                write!(f, "a layer was added to the SDK's default subscriber already; only one can be")
            }
        }
    }
}

impl std::error::Error for InstallLayerError {}

pub(crate) fn install_layer(layer: Box<dyn Layer<DefaultSubscriber> + Send + Sync>) -> Result<(), InstallLayerError> {
    init_default();
    if !INSTALLED.load(Ordering::Acquire) {
        return Err(InstallLayerError::OtherSubscriber);
    }
    EXTRA.set(layer).map_err(|_| InstallLayerError::AlreadyInstalled)?;
    // Call sites seen before were asked with no layer here.
    tracing::callsite::rebuild_interest_cache();
    Ok(())
}

/// The slot for [`EXTRA`]: forwards everything to the layer once there is
/// one.
struct Extra;

impl Layer<DefaultSubscriber> for Extra {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        match EXTRA.get() {
            Some(layer) => layer.register_callsite(metadata),
            None => Interest::always(),
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>, cx: Context<'_, DefaultSubscriber>) -> bool {
        EXTRA.get().is_none_or(|layer| layer.enabled(metadata, cx))
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_new_span(attrs, id, cx);
        }
    }

    fn on_record(&self, span: &Id, values: &Record<'_>, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_record(span, values, cx);
        }
    }

    fn on_follows_from(&self, span: &Id, follows: &Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_follows_from(span, follows, cx);
        }
    }

    fn event_enabled(&self, event: &Event<'_>, cx: Context<'_, DefaultSubscriber>) -> bool {
        EXTRA.get().is_none_or(|layer| layer.event_enabled(event, cx))
    }

    fn on_event(&self, event: &Event<'_>, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_event(event, cx);
        }
    }

    fn on_enter(&self, id: &Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_enter(id, cx);
        }
    }

    fn on_exit(&self, id: &Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_exit(id, cx);
        }
    }

    fn on_close(&self, id: Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_close(id, cx);
        }
    }

    fn on_id_change(&self, old: &Id, new: &Id, cx: Context<'_, DefaultSubscriber>) {
        if let Some(layer) = EXTRA.get() {
            layer.on_id_change(old, new, cx);
        }
    }

    // Lets `downcast_ref` reach into the added layer, which is how
    // `tracing-opentelemetry` finds itself to set a span's parent.
    unsafe fn downcast_raw(&self, id: TypeId) -> Option<*const ()> {
        if id == TypeId::of::<Self>() {
            return Some(self as *const Self as *const ());
        }
        // SAFETY: the layer lives in a static that is set once and never
        // cleared, so the pointer it gives stays valid.
        EXTRA.get().and_then(|layer| unsafe { layer.downcast_raw(id) })
    }
}
