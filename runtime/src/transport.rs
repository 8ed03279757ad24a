//! Connecting to the runtime: a Unix socket, or loopback TCP when the
//! fallback is enabled, retried while the runtime is still starting.

use std::fmt;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tokio::net::{TcpStream, UnixStream};
use tokio_util::either::Either;
use tonic::transport::{Channel, Endpoint};

use crate::settings::Target;

/// The longest path a Unix socket address can hold on Linux, less its
/// terminating NUL.
pub const MAX_SOCKET_PATH_BYTES: usize = 107;

/// Why the SDK could not connect to the runtime.
#[derive(Debug)]
pub enum ConnectError {
    /// The path exists and is not a socket: nothing will ever listen there.
    NotASocket(PathBuf),
    /// The path is longer than a Unix socket address can hold.
    PathTooLong(PathBuf),
    /// The runtime did not accept a connection before the retry window ran out.
    GaveUp {
        /// Where the SDK tried to connect.
        target: Target,
        /// How long it kept trying.
        waited: Duration,
        /// The last error seen.
        last_error: io::Error,
    },
    /// An error retrying cannot fix, such as a permission refusal.
    Failed {
        /// Where the SDK tried to connect.
        target: Target,
        /// The error.
        error: io::Error,
    },
    /// The gRPC connection over the socket could not be set up.
    Grpc {
        /// Where the SDK connected.
        target: Target,
        /// The transport's error.
        error: String,
    },
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::NotASocket(path) => write!(
                f,
                "{} exists but is not a socket; point CELERITY_RUNTIME_SOCKET at the socket the Celerity runtime serves",
                path.display()
            ),
            ConnectError::PathTooLong(path) => write!(
                f,
                "socket path {} is {} bytes long; a Unix socket path can be at most {MAX_SOCKET_PATH_BYTES} bytes",
                path.display(),
                path.as_os_str().len()
            ),
            ConnectError::GaveUp { target, waited, last_error } => write!(
                f,
                "could not connect to the Celerity runtime at {target} within {:.1} s (CELERITY_CONNECT_TIMEOUT_MS); last error: {last_error}",
                waited.as_secs_f64()
            ),
            ConnectError::Failed { target, error } => {
                write!(f, "could not connect to the Celerity runtime at {target}: {error}")
            }
            ConnectError::Grpc { target, error } => {
                write!(f, "could not open the gRPC connection to {target}: {error}")
            }
        }
    }
}

impl std::error::Error for ConnectError {}

type Io = Either<UnixStream, TcpStream>;

/// Connects to `target`, retrying with backoff for up to `timeout` while the
/// socket does not exist yet or refuses, and returns a channel over that one
/// connection.
pub async fn connect(target: &Target, timeout: Duration) -> Result<Channel, ConnectError> {
    let io = connect_io(target, timeout).await?;
    // The channel takes the connection already made; tonic would call the
    // connector again only to reconnect, and this process never reconnects:
    // a lost stream is the end of the process.
    let slot = Arc::new(Mutex::new(Some(io)));
    let connector = tower::service_fn(move |_| {
        let io = slot.lock().ok().and_then(|mut slot| slot.take());
        async move {
            match io {
                Some(io) => Ok(TokioIo::new(io)),
                None => Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "the connection to the runtime was lost; the handler process does not reconnect",
                )),
            }
        }
    });
    // `localhost` as the authority: the runtime resets streams whose
    // `:authority` is not a valid one.
    Endpoint::from_static("http://localhost")
        .initial_stream_window_size(Some(8 * 1024 * 1024))
        .initial_connection_window_size(Some(16 * 1024 * 1024))
        .connect_with_connector(connector)
        .await
        .map_err(|error| ConnectError::Grpc { target: target.clone(), error: error_chain(&error) })
}

async fn connect_io(target: &Target, timeout: Duration) -> Result<Io, ConnectError> {
    if let Target::Unix(path) = target
        && path.as_os_str().len() > MAX_SOCKET_PATH_BYTES
    {
        return Err(ConnectError::PathTooLong(path.clone()));
    }
    let started = Instant::now();
    let mut backoff = FIRST_BACKOFF;
    loop {
        let attempt = match target {
            Target::Unix(path) => {
                check_is_socket(path)?;
                UnixStream::connect(path).await.map(Either::Left)
            }
            Target::Tcp(addr) => TcpStream::connect(addr).await.map(|s| {
                let _ = s.set_nodelay(true);
                Either::Right(s)
            }),
        };
        let error = match attempt {
            Ok(io) => return Ok(io),
            Err(error) => error,
        };
        if !is_retryable(&error) {
            return Err(ConnectError::Failed { target: target.clone(), error });
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(ConnectError::GaveUp { target: target.clone(), waited, last_error: error });
        }
        if backoff == FIRST_BACKOFF {
            announce_wait(target, timeout, &error);
        }
        tracing::debug!(%target, %error, "runtime not reachable yet; retrying");
        tokio::time::sleep(backoff.min(timeout - waited)).await;
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }
}

/// The wait before the second attempt; later waits double, up to 500 ms.
const FIRST_BACKOFF: Duration = Duration::from_millis(20);

/// Says once, as soon as the first attempt fails, what the process is
/// waiting for: started by hand, a binary would otherwise sit silent for
/// the whole connect timeout.
fn announce_wait(target: &Target, timeout: Duration, error: &io::Error) {
    let binary = std::env::args().next().unwrap_or_else(|| "<this binary>".to_string());
    tracing::info!(
        "waiting up to {:.1} s (CELERITY_CONNECT_TIMEOUT_MS) for the Celerity runtime at {target} ({error}); \
         a handler binary is started by the runtime: to run this one locally, use the dev runtime, \
         `celerity-dev run {binary}`",
        timeout.as_secs_f64()
    );
}

fn check_is_socket(path: &Path) -> Result<(), ConnectError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => Err(ConnectError::NotASocket(path.to_path_buf())),
        _ => Ok(()),
    }
}

/// Errors that mean the runtime is not listening yet, rather than that it
/// never will be.
fn is_retryable(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
    )
}

/// An error and its sources, joined for one log line.
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_regular_file_is_not_a_socket() {
        let dir = std::env::temp_dir().join(format!("celerity-transport-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("not-a-socket");
        std::fs::write(&path, b"").unwrap();
        let err = connect(&Target::Unix(path.clone()), Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, ConnectError::NotASocket(_)), "{err}");
        assert!(err.to_string().contains("is not a socket"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn an_over_long_path_is_refused_before_trying() {
        let path = PathBuf::from(format!("/tmp/{}", "x".repeat(200)));
        let err = connect(&Target::Unix(path), Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, ConnectError::PathTooLong(_)), "{err}");
    }

    #[tokio::test]
    async fn a_missing_socket_is_retried_until_the_timeout_and_named() {
        let path = PathBuf::from("/tmp/celerity-no-such-dir/runtime.sock");
        let started = Instant::now();
        let err = connect(&Target::Unix(path), Duration::from_millis(200)).await.unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        let text = err.to_string();
        assert!(text.contains("/tmp/celerity-no-such-dir/runtime.sock"), "{text}");
        assert!(text.contains("last error"), "{text}");
    }
}
