//! Real servers on loopback for integration tests: Redis, an AWS API
//! emulator (moto), PostgreSQL, and whatever else a resource's tests reach.
//!
//! Each server is started once per test process, on a free port, the first
//! time a test asks for it, and stops when the process ends (it is the
//! child of a thread that lives as long as the process, with the kernel
//! told to end it with its parent). A server that is not installed is
//! installed first (Debian's `redis-server` and `postgresql`; PyPI's
//! `moto[server]`), under a lock shared by every test process, so that
//! `cargo test --workspace` sets up a fresh machine by itself. A server
//! that cannot be installed or started fails the test that asked for it,
//! naming the server: it never skips.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod database;
mod mariadb;
pub use mariadb::{MariaDb, mariadb};
mod postgres;
pub use postgres::{Postgres, postgres, postgres_tls, start_postgres};

/// A Redis server on loopback.
#[derive(Debug)]
pub struct Redis {
    port: u16,
    tls: bool,
    _dir: tempfile::TempDir,
}

impl Redis {
    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Sends one command (its words) and returns the server's raw answer:
    /// for setting up and checking data without a client of the test's own.
    ///
    /// Not for a TLS-only Redis, which takes no plain connection.
    pub fn command(&self, words: &[&str]) -> String {
        assert!(!self.tls, "the test Redis at {} takes only TLS connections", self.address());
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|error| panic!("the test Redis at {} refuses: {error}", self.address()));
        let mut request = format!("*{}\r\n", words.len());
        for word in words {
            request.push_str(&format!("${}\r\n{word}\r\n", word.len()));
        }
        stream.write_all(request.as_bytes()).expect("the test Redis took no command");
        stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let mut answer = vec![0; 64 * 1024];
        let read = stream.read(&mut answer).expect("the test Redis did not answer");
        String::from_utf8_lossy(&answer[..read]).into_owned()
    }
}

/// The process's Redis, started (and installed) on first use.
pub fn redis() -> &'static Redis {
    static REDIS: OnceLock<Redis> = OnceLock::new();
    REDIS.get_or_init(|| start_redis("redis-server", &[], |port| answers_ping(port, false)))
}

/// The process's one-node Redis cluster, holding every slot: a cluster
/// client's routing, and the cluster's own refusals (`CROSSSLOT`), against
/// a real server. Started (and installed) on first use.
pub fn redis_cluster() -> &'static Redis {
    static CLUSTER: OnceLock<Redis> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let redis = start_redis(
            "redis-server (cluster)",
            &["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"],
            |port| answers_ping(port, false),
        );
        let assigned = redis.command(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
        assert!(assigned.starts_with("+OK"), "the test cluster took no slots: {assigned}");
        let start = Instant::now();
        while !redis.command(&["CLUSTER", "INFO"]).contains("cluster_state:ok") {
            assert!(start.elapsed() < Duration::from_secs(30), "the test cluster never reached cluster_state:ok");
            std::thread::sleep(Duration::from_millis(50));
        }
        redis
    })
}

/// The process's Redis that takes only TLS connections, with a certificate
/// for `127.0.0.1` and `localhost` signed by the test CA
/// ([`tls_ca_file`]). Started (and installed) on first use.
pub fn redis_tls() -> &'static Redis {
    static TLS: OnceLock<Redis> = OnceLock::new();
    TLS.get_or_init(|| {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
        let file = |name: &str| fixtures.join(name).to_string_lossy().into_owned();
        let (cert, key, ca) = (file("server.pem"), file("server.key"), file("ca.pem"));
        start_redis(
            "redis-server (TLS)",
            &["--tls-cert-file", &cert, "--tls-key-file", &key, "--tls-ca-cert-file", &ca, "--tls-auth-clients", "no"],
            |port| answers_ping(port, true),
        )
    })
}

/// The CA certificate (PEM) that signed [`redis_tls`]'s certificate, for a
/// client to trust.
pub fn tls_ca_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/ca.pem")
}

/// Starts a Redis with `extra` arguments on a free port (its TLS port where
/// `extra` names a certificate), waiting until `ready` says it answers.
fn start_redis(server: &str, extra: &[&str], ready: impl Fn(u16) -> Option<()>) -> Redis {
    let binary = installed("redis-server", &["redis-server"], || apt_install("redis-server"));
    let dir = tempfile::tempdir().expect("no temporary directory for the test Redis");
    let port = free_port();
    let tls = extra.contains(&"--tls-cert-file");
    let mut command = Command::new(binary);
    command.args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
    if tls {
        command.args(["--port", "0", "--tls-port", &port.to_string()]);
    } else {
        command.args(["--port", &port.to_string()]);
    }
    command.args(extra).arg("--dir").arg(dir.path());
    let log = keep(command, server);
    wait_until(server, &log, Duration::from_secs(30), || ready(port));
    Redis { port, tls, _dir: dir }
}

/// Whether the Redis on `port` answers `PING`; over TLS, whether it takes
/// connections at all (a test client of its own would need TLS).
fn answers_ping(port: u16, tls: bool) -> Option<()> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    if tls {
        return Some(());
    }
    stream.write_all(b"PING\r\n").ok()?;
    let mut answer = [0; 7];
    stream.read_exact(&mut answer).ok()?;
    (&answer == b"+PONG\r\n").then_some(())
}

/// An AWS API emulator (moto's server) on loopback, answering every
/// service at one endpoint.
#[derive(Debug)]
pub struct Moto {
    port: u16,
}

impl Moto {
    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Points this process's AWS SDK at the emulator, with test
    /// credentials and a region: `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`. Call it first in every test of
    /// a test binary that uses the emulator, before anything else reads the
    /// environment; it sets the variables once.
    pub fn use_in_this_process(&self) {
        static SET: OnceLock<()> = OnceLock::new();
        SET.get_or_init(|| {
            for (name, value) in self.environment() {
                // SAFETY: every test of a binary that uses the emulator calls
                // this before it starts a runtime or reads the environment,
                // and the `OnceLock` makes the others wait until it is done.
                unsafe { std::env::set_var(name, value) };
            }
        });
    }

    /// The variables that point an AWS SDK at the emulator, for a process
    /// the test starts.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", "testing".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "testing".to_string()),
            ("AWS_REGION", "eu-west-2".to_string()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_string()),
        ]
    }

    /// Calls the emulator's API for setting up a test: an AWS JSON-protocol
    /// request (`X-Amz-Target: <target>`, such as
    /// `secretsmanager.CreateSecret`), answered with the status and body.
    pub fn call_json(&self, target: &str, body: &str) -> (u16, String) {
        let request = format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-amz-json-1.1\r\n\
             X-Amz-Target: {target}\r\nAuthorization: AWS4-HMAC-SHA256 Credential=testing/20260101/eu-west-2/{service}/aws4_request, SignedHeaders=host, Signature=0\r\n\
             Content-Length: {length}\r\nConnection: close\r\n\r\n{body}",
            port = self.port,
            service = target.split('.').next().unwrap_or_default().to_ascii_lowercase().replace("amazonssm", "ssm"),
            length = body.len(),
        );
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the AWS API emulator refuses");
        stream.write_all(request.as_bytes()).expect("the AWS API emulator took no request");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("the AWS API emulator did not answer");
        let status = answer.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
        let body = answer.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default();
        (status, body)
    }
}

/// The process's AWS API emulator, started (and installed) on first use.
pub fn moto() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(|| start_moto(&[]))
}

/// A second AWS API emulator that checks credentials as AWS does, and so
/// refuses the test credentials with a 403, as an account would refuse a
/// role without the permission.
pub fn moto_refusing_credentials() -> &'static Moto {
    static MOTO: OnceLock<Moto> = OnceLock::new();
    MOTO.get_or_init(|| start_moto(&[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]))
}

/// The moto the tests need: 5.2.6 is the first whose S3 answers a
/// completed multipart upload with the element S3 answers it with
/// (`CompleteMultipartUploadResult`), which the AWS SDK reads.
const MOTO: &str = "moto[server]>=5.2.6";
const MOTO_OLDEST: (u32, u32, u32) = (5, 2, 6);

fn start_moto(env: &[(&str, &str)]) -> Moto {
    {
        installed("moto_server", &["moto_server"], || pip_install(MOTO));
        let binary = moto_at_least_oldest();
        let port = free_port();
        let mut command = Command::new(binary);
        command.args(["-H", "127.0.0.1", "-p", &port.to_string()]).envs(env.iter().copied());
        let log = keep(command, "moto_server");
        wait_until("moto_server", &log, Duration::from_secs(60), || {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
            stream.write_all(b"GET /moto-api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
            let mut head = [0; 12];
            stream.read_exact(&mut head).ok()?;
            head.starts_with(b"HTTP/1.").then_some(())
        });
        Moto { port }
    }
}

/// The installed moto's version, as the Python that runs `moto_server`
/// (the test servers' own virtual environment's, where it is there, else
/// the machine's) reports it.
fn moto_version() -> Option<(u32, u32, u32)> {
    let venv = servers_venv().join("bin/python");
    let python = if venv.is_file() { venv } else { find(&["python3", "python"])? };
    let output = Command::new(python)
        .args(["-c", "import importlib.metadata as m; print(m.version('moto'))"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.trim().split('.').map(|part| part.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next().flatten().unwrap_or(0)))
}

/// `moto_server`, upgraded first where the installed moto is older than
/// the tests need, under the install lock.
fn moto_at_least_oldest() -> PathBuf {
    if moto_version().is_some_and(|version| version < MOTO_OLDEST) {
        let _lock = InstallLock::take();
        if moto_version().is_some_and(|version| version < MOTO_OLDEST)
            && let Err(error) = pip_install(MOTO)
        {
            panic!("moto_server is needed by this test at {MOTO}, is older, and could not be upgraded: {error}");
        }
    }
    find(&["moto_server"]).unwrap_or_else(|| panic!("moto_server is needed by this test and was not found"))
}

/// A port on 127.0.0.1 that nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address: SocketAddr| address.port())
        .expect("no free port on 127.0.0.1")
}

/// The path of `program`, installing it with `install` when it is found
/// nowhere, under a lock every test process shares.
fn installed(server: &str, programs: &[&str], install: impl FnOnce() -> Result<(), String>) -> PathBuf {
    installed_at(server, || find(programs), install)
}

/// What `locate` finds, installing the server with `install` when it finds
/// nothing, under a lock every test process shares: for a server whose
/// programs are not on any `PATH` (Debian keeps PostgreSQL's in a
/// directory of each version's own).
fn installed_at(
    server: &str,
    locate: impl Fn() -> Option<PathBuf>,
    install: impl FnOnce() -> Result<(), String>,
) -> PathBuf {
    if let Some(path) = locate() {
        return path;
    }
    let _lock = InstallLock::take();
    if let Some(path) = locate() {
        return path;
    }
    if let Err(error) = install() {
        panic!("{server} is needed by this test, is not installed, and could not be installed: {error}");
    }
    locate().unwrap_or_else(|| panic!("{server} is needed by this test and was not found after installing it"))
}

fn find(programs: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    // Where pip puts scripts for this user, the test servers' own virtual
    // environment, and where Debian puts its servers.
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".local/bin"));
    }
    dirs.push(servers_venv().join("bin"));
    dirs.extend(["/usr/local/bin", "/usr/bin", "/usr/sbin"].map(PathBuf::from));
    programs.iter().flat_map(|program| dirs.iter().map(move |dir| dir.join(program))).find(|path| path.is_file())
}

fn apt_install(package: &str) -> Result<(), String> {
    let install = || {
        run(Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive"))
    };
    install().or_else(|_| {
        run(Command::new("apt-get").arg("update").env("DEBIAN_FRONTEND", "noninteractive"))?;
        install()
    })
}

/// Installs `package` with the machine's pip, or, where the machine's
/// Python refuses packages of its own (Debian marks it externally
/// managed), into a virtual environment kept for the test servers.
fn pip_install(package: &str) -> Result<(), String> {
    let python = find(&["python3", "python"]).ok_or("no python3 to install it with")?;
    let system = run(Command::new(&python).args(["-m", "pip", "install", "--quiet", package]));
    system.or_else(|refused| {
        let venv = servers_venv();
        if !venv.join("bin/python").is_file() {
            run(Command::new(&python).arg("-m").arg("venv").arg(&venv))
                .map_err(|error| format!("{refused}; and no virtual environment could be made: {error}"))?;
        }
        run(Command::new(venv.join("bin/python")).args(["-m", "pip", "install", "--quiet", package]))
            .map_err(|error| format!("{refused}; and in a virtual environment: {error}"))
    })
}

/// The virtual environment the test servers are installed into where the
/// machine's Python takes no packages: kept beside the user's caches, so a
/// second run finds them.
fn servers_venv() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("celerity-test-servers").join("venv")
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command.stdin(Stdio::null()).output().map_err(|error| format!("{command:?}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(format!("{command:?} failed ({}): {}", output.status, stderr.lines().last().unwrap_or_default()))
    }
}

/// An exclusive lock on a file every test process opens, held while one
/// installs a server.
struct InstallLock(std::fs::File);

impl InstallLock {
    fn take() -> InstallLock {
        let path = std::env::temp_dir().join("celerity-test-servers.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap_or_else(|error| panic!("cannot open the install lock {}: {error}", path.display()));
        // SAFETY: flock on a descriptor this value owns.
        let locked = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) };
        assert_eq!(locked, 0, "cannot take the install lock {}", path.display());
        InstallLock(file)
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.0), libc::LOCK_UN) };
    }
}

type Spawn = Box<dyn FnOnce() + Send>;

/// Starts `command` as a child of a thread that lives as long as the test
/// process, told by the kernel to die with that thread, so that the server
/// never outlives the tests (the kernel ends a child when the thread that
/// started it ends, not only its process). Its output goes to the file this
/// returns, for the failure that names a server that never answered.
fn keep(mut command: Command, server: &str) -> PathBuf {
    let log = std::env::temp_dir().join(format!("celerity-test-{server}-{}.log", std::process::id()));
    let output = std::fs::File::create(&log)
        .unwrap_or_else(|error| panic!("cannot open {} for {server}'s output: {error}", log.display()));
    let errors = output.try_clone().unwrap_or_else(|error| panic!("cannot share {}: {error}", log.display()));
    static KEEPER: OnceLock<Mutex<mpsc::Sender<Spawn>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<Spawn>();
        std::thread::Builder::new()
            .name("test-servers".into())
            .spawn(move || {
                for spawn in receiver {
                    spawn();
                }
                // The senders live in a static: never reached.
                loop {
                    std::thread::park();
                }
            })
            .expect("cannot start the test servers' thread");
        Mutex::new(sender)
    });
    let (done, started) = mpsc::channel::<Result<Child, String>>();
    let server = server.to_string();
    let spawn: Spawn = Box::new(move || {
        command.stdin(Stdio::null()).stdout(output).stderr(errors);
        // SAFETY: prctl only, between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let _ = done.send(command.spawn().map_err(|error| format!("{server} could not be started: {error}")));
    });
    keeper.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).send(spawn).expect("the test servers' thread ended");
    match started.recv().expect("the test servers' thread ended") {
        // Kept for the life of the process; the kernel ends it after.
        Ok(child) => std::mem::forget(child),
        Err(error) => panic!("{error}"),
    }
    log
}

/// Waits until `ready` says so, failing the test after `limit` naming
/// `server` and quoting the end of its output, from `log`.
fn wait_until(server: &str, log: &Path, limit: Duration, mut ready: impl FnMut() -> Option<()>) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = output.lines().rev().take(20).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    panic!(
        "{server} did not start answering within {} s; the end of its output ({}):\n{}",
        limit.as_secs(),
        log.display(),
        tail.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(
        expected = "celerity-absent is needed by this test, is not installed, and could not be installed: no registry"
    )]
    fn a_server_that_cannot_be_installed_fails_the_test_naming_it() {
        installed("celerity-absent", &["celerity-absent-program"], || Err("no registry".into()));
    }

    #[test]
    fn a_server_that_never_answers_fails_the_test_quoting_its_output() {
        let log = std::env::temp_dir().join(format!("celerity-test-silent-{}.log", std::process::id()));
        std::fs::write(&log, "starting\nFATAL: address in use\n").unwrap();
        let failed = std::panic::catch_unwind(|| wait_until("silent-server", &log, Duration::from_millis(60), || None));
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(message.starts_with("silent-server did not start answering within 0 s"), "{message}");
        assert!(message.ends_with("starting\nFATAL: address in use"), "{message}");
        std::fs::remove_file(log).ok();
    }
}
