//! Where the kit's runtimes listen, binding it the way the runtime does, and
//! serving there.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::transport::Server;

use crate::error::Error;
use crate::service::RuntimeService;

/// Environment variable naming the Unix socket the handler connects to.
pub const ENV_SOCKET: &str = "CELERITY_RUNTIME_SOCKET";
/// Environment variable enabling the loopback TCP fallback.
pub const ENV_FALLBACK_ENABLED: &str = "CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED";
/// Environment variable giving the loopback TCP fallback port.
pub const ENV_FALLBACK_PORT: &str = "CELERITY_RUNTIME_SOCKET_FALLBACK_PORT";

/// The address a test runtime serves on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddress {
    /// A Unix domain socket.
    Unix(PathBuf),
    /// Loopback TCP.
    Tcp(SocketAddr),
}

impl ListenAddress {
    /// The Unix socket path, when it is one.
    ///
    /// ```
    /// use celerity_testkit::ListenAddress;
    /// let address = ListenAddress::Unix("/tmp/runtime.sock".into());
    /// assert_eq!(address.socket_path(), Some(std::path::Path::new("/tmp/runtime.sock")));
    /// assert_eq!(address.tcp_addr(), None);
    /// ```
    pub fn socket_path(&self) -> Option<&Path> {
        match self {
            ListenAddress::Unix(path) => Some(path),
            ListenAddress::Tcp(_) => None,
        }
    }

    /// The loopback TCP address, when it is one.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match self {
            ListenAddress::Tcp(addr) => Some(*addr),
            ListenAddress::Unix(_) => None,
        }
    }

    /// The environment a handler process needs to connect here:
    /// `CELERITY_RUNTIME_SOCKET` for a Unix socket; for TCP,
    /// `CELERITY_RUNTIME_SOCKET_FALLBACK_ENABLED=true` and
    /// `CELERITY_RUNTIME_SOCKET_FALLBACK_PORT`.
    pub fn env(&self) -> Vec<(String, String)> {
        match self {
            ListenAddress::Unix(path) => {
                vec![(ENV_SOCKET.to_owned(), path.display().to_string())]
            }
            ListenAddress::Tcp(addr) => vec![
                (ENV_FALLBACK_ENABLED.to_owned(), "true".to_owned()),
                (ENV_FALLBACK_PORT.to_owned(), addr.port().to_string()),
            ],
        }
    }
}

impl fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddress::Unix(path) => write!(f, "unix:{}", path.display()),
            ListenAddress::Tcp(addr) => write!(f, "tcp:{addr}"),
        }
    }
}

/// Binds a Unix socket as the runtime does: creates a missing parent
/// directory (0700), removes a stale socket file but refuses one that another
/// process still serves, and restricts the socket to its owner (0600).
pub(crate) fn bind_unix(path: &Path) -> Result<UnixListener, Error> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    if std::fs::symlink_metadata(path).is_ok() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(Error::AlreadyServing(path.to_owned()));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Binds loopback TCP on `port` (0 picks a free port; unlike the real
/// runtime, which refuses 0, since the test knows the bound port).
pub(crate) async fn bind_tcp(port: u16) -> io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", port)).await
}

/// Where a runtime is told to listen.
#[derive(Debug)]
pub(crate) enum Listen {
    /// `runtime.sock` in a fresh temporary directory.
    TempUnix,
    /// This Unix socket path.
    Unix(PathBuf),
    /// Loopback TCP on this port (0: any free one).
    Tcp(u16),
}

/// A runtime's server, listening. Dropping it stops the server and removes
/// the socket.
#[derive(Debug)]
pub(crate) struct Serving {
    pub(crate) address: ListenAddress,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    _temp_dir: Option<tempfile::TempDir>,
}

impl Serving {
    /// The next of what the server hands on through `queue` (an accepted
    /// stream), waiting at most `timeout` for it: an error names what was
    /// awaited and where this listens.
    pub(crate) async fn next<T>(
        &self,
        queue: &tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<T>>,
        timeout: std::time::Duration,
        waiting_for: &str,
    ) -> Result<T, Error> {
        let mut queue = queue.lock().await;
        match tokio::time::timeout(timeout, queue.recv()).await {
            Err(_) => Err(Error::Timeout {
                waiting_for: waiting_for.to_owned(),
                after: timeout,
                state: format!("listening on {}", self.address),
            }),
            Ok(None) => Err(Error::RuntimeStopped),
            Ok(Some(next)) => Ok(next),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.server.abort();
        if let ListenAddress::Unix(path) = &self.address {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Binds `listen` and serves `service` there with `server`, in a
/// background task.
pub(crate) async fn serve(listen: Listen, server: Server, service: RuntimeService) -> Result<Serving, Error> {
    let mut temp_dir = None;
    let (address, server) = match listen {
        Listen::TempUnix | Listen::Unix(_) => {
            let path = match listen {
                Listen::Unix(path) => path,
                _ => {
                    let dir = tempfile::Builder::new().prefix("celerity-testkit-").tempdir()?;
                    let path = dir.path().join(crate::DEFAULT_SOCKET_NAME);
                    temp_dir = Some(dir);
                    path
                }
            };
            let incoming = UnixListenerStream::new(bind_unix(&path)?);
            (ListenAddress::Unix(path), tokio::spawn(server.serve_with_incoming(service, incoming)))
        }
        Listen::Tcp(port) => {
            let listener = bind_tcp(port).await?;
            let addr = listener.local_addr()?;
            let incoming = TcpListenerStream::new(listener);
            (ListenAddress::Tcp(addr), tokio::spawn(server.serve_with_incoming(service, incoming)))
        }
    };
    Ok(Serving { address, server, _temp_dir: temp_dir })
}

/// The accessors of where a runtime listens, on a runtime that holds its
/// [`Serving`] as `serving`: the checked runtime and the raw one alike.
macro_rules! where_it_listens {
    () => {
        /// Where it listens.
        pub fn address(&self) -> &$crate::ListenAddress {
            &self.serving.address
        }

        /// The Unix socket path, when listening on one.
        pub fn socket_path(&self) -> Option<&std::path::Path> {
            self.serving.address.socket_path()
        }

        /// The bound TCP address, when listening on loopback TCP.
        pub fn tcp_addr(&self) -> Option<std::net::SocketAddr> {
            self.serving.address.tcp_addr()
        }

        /// The environment a handler process needs to connect here (see
        /// [`ListenAddress::env`](crate::ListenAddress::env)).
        pub fn env(&self) -> Vec<(String, String)> {
            self.serving.address.env()
        }

        /// The settings an in-process application connects here with: the
        /// environment of [`env`](Self::env), with `extra` variables over
        /// it and a connect timeout of 10 s.
        pub fn app_settings(&self, extra: &[(&str, &str)]) -> celerity::settings::Settings {
            let mut vars: std::collections::HashMap<String, String> = self.env().into_iter().collect();
            vars.insert("CELERITY_CONNECT_TIMEOUT_MS".to_string(), "10000".to_string());
            vars.extend(extra.iter().map(|(name, value)| (name.to_string(), value.to_string())));
            celerity::settings::Settings::from_lookup(|name| vars.get(name).cloned())
                .expect("the test runtime's settings are valid")
        }
    };
}

pub(crate) use where_it_listens;

/// The setters of where a runtime is to listen, on a builder that holds a
/// [`Listen`] as `listen`: the checked runtime's and the raw one's alike.
macro_rules! where_to_listen {
    () => {
        /// Listens on this Unix socket path (parent created if needed). The
        /// default is `runtime.sock` in a fresh temporary directory.
        pub fn unix_socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
            self.listen = $crate::listen::Listen::Unix(path.into());
            self
        }

        /// Listens on loopback TCP `127.0.0.1:port`; 0 picks a free port
        /// (the runtime's `tcp_addr` says which).
        pub fn tcp(mut self, port: u16) -> Self {
            self.listen = $crate::listen::Listen::Tcp(port);
            self
        }
    };
}

pub(crate) use where_to_listen;
