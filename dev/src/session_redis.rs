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
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::App;
use crate::log;
use crate::queues::{ENV_REDIS_ENDPOINT, Redis};

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
/// How many free ports a started server is tried on: the port is free when
/// chosen, and something else may take it before the server binds it.
const PORT_ATTEMPTS: usize = 3;

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
    let queues: Vec<String> =
        app.resources.links.iter().filter(|link| link.kind == "queue").map(|link| format!("`{}`", link.name)).collect();
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

/// Whether `path` is a file someone may run.
pub(crate) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
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
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = free_port().map_err(|e| format!("no free port on 127.0.0.1 for {}: {e}", binary.display()))?;
            let redis = Redis::at(&format!("redis://127.0.0.1:{port}"));
            match spawn(binary, dir.path(), &output, port).await {
                Ok(child) => return Ok(Server { child, redis, _dir: dir }),
                Err(Failure::Exited { port_taken: true, .. }) if attempt < PORT_ATTEMPTS => continue,
                Err(Failure::Spawn(error)) => return Err(format!("could not start {}: {error}", binary.display())),
                Err(Failure::Exited { status, .. }) => {
                    return Err(format!(
                        "{}, started for the session's queues on {}, exited ({status}) before answering PING; its \
                         output:\n{}",
                        binary.display(),
                        redis.shown(),
                        tail(&output)
                    ));
                }
                Err(Failure::Silent) => {
                    return Err(format!(
                        "{}, started for the session's queues on {}, did not answer PING within {} s; its output:\n{}",
                        binary.display(),
                        redis.shown(),
                        START.as_secs(),
                        tail(&output)
                    ));
                }
            }
        }
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

/// Starts the server in `dir` on `port`, its output to `output`, and polls
/// it with `PING` until it answers; one that exits or never answers is
/// ended and not returned.
async fn spawn(binary: &Path, dir: &Path, output: &Path, port: u16) -> Result<Child, Failure> {
    let file = std::fs::File::create(output).map_err(Failure::Spawn)?;
    let mut command = Command::new(binary);
    command
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(Failure::Spawn)?)
        .stderr(file);
    ends_with_this_process(&mut command, libc::SIGKILL);
    let mut child = command.spawn().map_err(Failure::Spawn)?;
    let deadline = Instant::now() + START;
    loop {
        if answers_ping(port) {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            // Redis says "Address already in use" when it cannot bind.
            let port_taken = std::fs::read_to_string(output).unwrap_or_default().contains("in use");
            return Err(Failure::Exited { status, port_taken });
        }
        if Instant::now() > deadline {
            stop(&mut child);
            return Err(Failure::Silent);
        }
        // A server answers within milliseconds of starting: this is how
        // often it is asked, not a wait for it.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills `child` unless it has exited, and reaps it.
fn stop(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Why a started server is not used.
enum Failure {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It exited; `port_taken` when because something took its port.
    Exited { status: std::process::ExitStatus, port_taken: bool },
    /// It did not answer within [`START`].
    Silent,
}

/// Has the kernel send the child `signal` when the thread that starts it
/// ends. The session's servers are started from `run`, which `block_on`
/// polls on the main thread (never from a spawned task, which a pool thread
/// may run and outlive), so that is when `celerity-dev` ends, however it
/// ends.
pub(crate) fn ends_with_this_process(command: &mut Command, signal: libc::c_int) {
    // SAFETY: getpid(2) has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork
    // and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the prctl took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("celerity-dev ended while starting a server for the session"));
            }
            Ok(())
        });
    }
}

/// A port on 127.0.0.1 that nothing listens on now.
pub(crate) fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

/// Whether a Redis on 127.0.0.1:`port` answers `PING`.
fn answers_ping(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut answer = [0; 7];
    stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}

/// The last lines of the server's output, for the error that quotes it.
pub(crate) fn tail(output: &Path) -> String {
    let text = std::fs::read_to_string(output).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    if tail.is_empty() { "(none)".to_owned() } else { tail }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn server(dir: &Path, script: &str) -> PathBuf {
        let path = dir.join("redis-server");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn start(binary: &Path) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        loop {
            match runtime.block_on(Server::start(binary)) {
                // A process another test forks while the script is being
                // written holds it open for writing until it execs, and a
                // file open for writing cannot be run (ETXTBSY): run again.
                Err(error) if error.contains("Text file busy") => std::thread::yield_now(),
                other => return other,
            }
        }
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
