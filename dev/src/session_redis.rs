//! Which Redis holds the session's queues, so that `celerity-dev run
//! orders` needs nothing but a Rust toolchain.
//!
//! A blueprint that declares a `celerity/queue` is served with a Redis
//! (each queue is a stream in it), found in this order:
//!
//! 1. the one the environment names (`CELERITY_REDIS_ENDPOINT`, else the
//!    configuration stores' Valkey): the user asked for it, so one that
//!    does not answer stops the start;
//! 2. one that answers at the SDK's default endpoint,
//!    `redis://localhost:6379` (`CELERITY_DEV_DEFAULT_REDIS` names another);
//! 3. a `redis-server` (else `valkey-server`) found on `PATH`, started for
//!    the session on a free loopback port, keeping nothing on disk, and
//!    ended with it;
//! 4. none: the queues are not read, and the handler's sends to them fail,
//!    which one warning at the start says, with what to do about it.
//!
//! A blueprint without queues gets the Redis the environment names, if
//! any, and nothing is probed or started for it.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::config::App;
use crate::log;
use crate::queues::{ENV_REDIS_ENDPOINT, Redis};

use crate::session_server::{Failure, Launch, Poll, is_executable, linked, stop};

/// Names the endpoint tried when the environment names no Redis, instead of
/// the SDK's default: for a machine whose usual Redis is elsewhere, and for
/// tests, which must not pick up a Redis the machine happens to run.
pub const ENV_DEFAULT_REDIS: &str = "CELERITY_DEV_DEFAULT_REDIS";

/// Where the SDK sends when `CELERITY_REDIS_ENDPOINT` is unset.
pub const DEFAULT_ENDPOINT: &str = "redis://localhost:6379";

/// The servers tried on `PATH`, in order.
const SERVERS: [&str; 2] = ["redis-server", "valkey-server"];

/// How long a Redis named or found has to answer `PING`.
const PROBE: Duration = Duration::from_secs(2);
/// How long a started server has to answer `PING`.
const START: Duration = Duration::from_secs(15);

/// The session's Redis, as found, and the server started for it, if any,
/// which ends when this is dropped.
pub struct SessionRedis {
    redis: Option<Redis>,
    /// What the handler is given as `CELERITY_REDIS_ENDPOINT` when there is
    /// no Redis: the endpoint where none answered, so that its sends fail
    /// as unreachable rather than reach a Redis nothing reads.
    unanswered: Option<String>,
    _server: Option<Server>,
}

impl SessionRedis {
    /// The Redis holding the queues, if there is one.
    pub fn redis(&self) -> Option<&Redis> {
        self.redis.as_ref()
    }

    /// What the handler's environment gets beside what
    /// [`crate::stores::provision`] gives it for [`Self::redis`].
    pub fn handler_env(&self) -> Vec<(&'static str, String)> {
        self.unanswered.iter().map(|endpoint| (ENV_REDIS_ENDPOINT, endpoint.clone())).collect()
    }
}

/// Finds (or starts) the session's Redis for `app`, saying on the log which
/// it is. Fails when a Redis the environment names does not answer, or a
/// server started for the session never does.
pub async fn open(app: &App) -> Result<SessionRedis, String> {
    let queues = linked(app, "queue");
    let found = |redis| SessionRedis { redis: Some(redis), unanswered: None, _server: None };

    if let Some((redis, variable)) = Redis::named() {
        if !queues.is_empty() {
            redis.ping(PROBE).await.map_err(|why| {
                format!("could not reach the Redis at {} that {variable} names: {why}", redis.shown())
            })?;
        }
        return Ok(found(redis));
    }
    if queues.is_empty() {
        return Ok(SessionRedis { redis: None, unanswered: None, _server: None });
    }

    let default = std::env::var(ENV_DEFAULT_REDIS).ok().filter(|v| !v.is_empty());
    let default = Redis::at(default.as_deref().unwrap_or(DEFAULT_ENDPOINT));
    let unanswered = match default.ping(PROBE).await {
        Ok(()) => {
            log::line(&format!(
                "using the Redis that answers at {} for the queue(s) {} ({ENV_REDIS_ENDPOINT} names none)",
                default.shown(),
                queues.join(", ")
            ));
            return Ok(found(default));
        }
        Err(why) => why,
    };

    match find_server(std::env::var_os("PATH").as_deref()) {
        Some(binary) => {
            let server = Server::start(&binary).await?;
            log::line(&format!(
                "{ENV_REDIS_ENDPOINT} names no Redis and none answers at {} ({unanswered}): started {} as pid {} \
                 on {} for the queue(s) {}, keeping nothing on disk; it stops with the session",
                default.shown(),
                binary.display(),
                server.pid(),
                server.redis.shown(),
                queues.join(", ")
            ));
            Ok(SessionRedis { redis: Some(server.redis.clone()), unanswered: None, _server: Some(server) })
        }
        None => {
            log::line(&format!(
                "warning: the queue(s) {} will not be read, and the handler's sends to them fail: \
                 {ENV_REDIS_ENDPOINT} names no Redis, none answers at {} ({unanswered}), and neither {} is on PATH. \
                 Install redis-server or valkey (or start a Redis at {}), or set {ENV_REDIS_ENDPOINT} to a \
                 Redis, and run again; everything else is served, and consumers can still be fed by hand \
                 (celerity-dev push)",
                queues.join(", "),
                default.shown(),
                SERVERS.join(" nor "),
                default.shown()
            ));
            Ok(SessionRedis { redis: None, unanswered: Some(default.url().to_owned()), _server: None })
        }
    }
}

/// The first of [`SERVERS`] found as an executable file in a folder of
/// `path` (the `PATH` variable's value).
fn find_server(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = path.map(|path| std::env::split_paths(path).collect()).unwrap_or_default();
    SERVERS.iter().flat_map(|server| dirs.iter().map(move |dir| dir.join(server))).find(|path| is_executable(path))
}

/// A Redis server started for the session: killed when dropped, and by the
/// kernel should `celerity-dev` die first.
struct Server {
    child: Child,
    redis: Redis,
    /// Its working folder and its output, removed after it has ended.
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `binary` on a free loopback port, without persistence, and
    /// waits until it answers `PING`.
    async fn start(binary: &Path) -> Result<Server, String> {
        let dir = tempfile::Builder::new()
            .prefix("celerity-dev-redis-")
            .tempdir()
            .map_err(|e| format!("could not make a folder for {}: {e}", binary.display()))?;
        let output = dir.path().join("output.log");
        let launch = Launch {
            program: binary,
            serves: "queues",
            answering: "answering PING",
            answer: "answer PING",
            within: START,
            output: &output,
        };
        let (port, child) = launch.on_a_free_port(async |port| spawn(&launch, dir.path(), port).await).await?;
        let redis = Redis::at(&format!("redis://127.0.0.1:{port}"));
        Ok(Server { child, redis, _dir: dir })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        stop(&mut self.child);
        log::line(&format!("stopped the session's Redis, pid {}", self.child.id()));
    }
}

/// Starts the server in `dir` on `port`, its output to the launch's (a
/// fresh file for each port tried), and polls it with `PING` until it
/// answers.
async fn spawn(launch: &Launch<'_>, dir: &Path, port: u16) -> Result<Child, Failure> {
    let output = std::fs::File::create(launch.output).map_err(Failure::Spawn)?;
    let mut command = Command::new(launch.program);
    command
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir);
    launch
        .spawn(command, output, libc::SIGKILL, || answers_ping(port).map_or_else(Poll::NotYet, |()| Poll::Ready))
        .await
}

/// Whether a Redis on 127.0.0.1:`port` answers `PING`, and if not, why.
fn answers_ping(port: u16) -> Result<(), String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut answer = [0; 7];
    stream.write_all(b"PING\r\n").and_then(|()| stream.read_exact(&mut answer)).map_err(|e| e.to_string())?;
    match &answer {
        b"+PONG\r\n" => Ok(()),
        other => Err(format!("it answered PING with {:?}", String::from_utf8_lossy(other))),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::session_server::PORT_ATTEMPTS;
    use crate::session_server::testing::{script, started};

    #[test]
    fn a_server_is_found_on_path_redis_first() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        let make = |path: &Path, mode| {
            std::fs::write(path, "").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let path = std::env::join_paths([&first, &second]).unwrap();
        assert_eq!(find_server(Some(&path)), None);
        // Not executable: not a server.
        make(&first.join("redis-server"), 0o644);
        assert_eq!(find_server(Some(&path)), None);
        make(&first.join("valkey-server"), 0o755);
        assert_eq!(find_server(Some(&path)), Some(first.join("valkey-server")));
        make(&second.join("redis-server"), 0o755);
        assert_eq!(find_server(Some(&path)), Some(second.join("redis-server")));
        assert_eq!(find_server(None), None);
    }

    /// A `redis-server` in `dir` that runs `body`.
    fn server(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("redis-server");
        script(&path, body);
        path
    }

    fn start(binary: &Path) -> Result<Server, String> {
        started(async || Server::start(binary).await)
    }

    #[test]
    fn a_server_that_exits_before_answering_is_an_error_quoting_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let binary = server(dir.path(), "echo 'FATAL CONFIG FILE ERROR: bad directive'; exit 1");
        let error = start(&binary).err().expect("a server that exits is not used");
        assert!(error.contains("exited (exit status: 1) before answering PING"), "{error}");
        assert!(error.ends_with("its output:\nFATAL CONFIG FILE ERROR: bad directive"), "{error}");
    }

    #[test]
    fn a_server_that_cannot_bind_its_port_is_tried_on_another() {
        let dir = tempfile::tempdir().unwrap();
        let attempts = dir.path().join("attempts");
        let script = format!("echo x >> '{}'; echo 'bind: Address already in use'; exit 1", attempts.display());
        let error = start(&server(dir.path(), &script)).err().expect("a server that exits is not used");
        assert!(error.ends_with("its output:\nbind: Address already in use"), "{error}");
        assert_eq!(std::fs::read_to_string(&attempts).unwrap().lines().count(), PORT_ATTEMPTS);
    }
}
