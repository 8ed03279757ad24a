//! A default log output for binaries that set none.

use std::io::IsTerminal;

/// Installs a `tracing` subscriber writing to stderr, filtered by `RUST_LOG`
/// (default `info`), unless the application installed one already. Colour
/// only when stderr is a terminal, so logs captured by the runtime stay plain.
pub(crate) fn init_default() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
