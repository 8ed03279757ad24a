//! What the end-to-end tests share: a `celerity-dev run <example>` process
//! with its log and port (or run until it exits), an example binary from
//! the target directory, a bare HTTP/1.1 client and FIFOs.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::ffi::CString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long anything a test waits for may take on a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// An example's binary (`package`). `cargo test --workspace` builds it (for
/// the example's own tests) before any test runs, so the one in the target
/// directory is used as is; only when it is missing is it built here
/// (building it with `-p` alone could unify features differently and
/// rebuild its dependencies). The variable `override_var` names another
/// binary.
pub fn example_binary(package: &str, override_var: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(override_var) {
        return PathBuf::from(path);
    }
    let root = root();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("debug").join(package);
    if !binary.is_file() {
        let status = Command::new(env!("CARGO")).args(["build", "-p", package]).current_dir(&root).status().unwrap();
        assert!(status.success(), "cargo build -p {package} failed");
    }
    binary
}

/// A Redis for one test's session: the test process's redis-server
/// (`celerity_testkit::servers::redis`), at a database of its own, so that
/// the tests of one process, which run at once, read and write streams of
/// the same names without meeting.
pub fn session_redis() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let database = NEXT.fetch_add(1, Ordering::SeqCst);
    assert!(database < 16, "redis-server has 16 databases, and this test process asked for more");
    format!("redis://127.0.0.1:{}/{database}", celerity_testkit::servers::redis().port())
}

/// `celerity-dev run <binary>` on a free port, from the workspace root, with
/// a short cancel grace and nothing inherited that would change a test's
/// timing; the caller adds its own arguments and environment.
pub fn dev_command(binary: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_celerity-dev"));
    command
        .arg("run")
        .arg(binary)
        .args(["--port", "0"])
        .current_dir(root())
        .env("CELERITY_CANCEL_GRACE_MS", "200")
        .env_remove("CELERITY_DRAIN_TIMEOUT")
        // The session's Redis is what a test gives, not the machine's.
        .env_remove("CELERITY_REDIS_ENDPOINT")
        .env_remove("CELERITY_CONFIG_VALKEY_HOST")
        .env_remove("CELERITY_CONFIG_VALKEY_PORT")
        // Buckets and datastores in the session's data folder (which
        // `Dev::spawn` and `run_to_exit` make for each session), not in an
        // S3 or DynamoDB the machine names.
        .env_remove("CELERITY_AWS_S3_ENDPOINT")
        .env_remove("CELERITY_AWS_DYNAMODB_ENDPOINT")
        .env_remove(DATA_DIR)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Names the session's data folder, where it keeps its buckets and
/// datastores.
pub const DATA_DIR: &str = "CELERITY_DEV_DATA_DIR";

/// Gives `command` a data folder of its own, removed when the folder
/// returned is dropped, unless the test named one (`CELERITY_DEV_DATA_DIR`
/// set on the command): a session keeps what its handler stores from one
/// run to the next, by default in a folder every session of the binary
/// shares, and two tests would meet there.
fn own_data_dir(command: &mut Command) -> (PathBuf, Option<tempfile::TempDir>) {
    let named = command.get_envs().find(|(name, _)| *name == DATA_DIR).and_then(|(_, value)| value);
    if let Some(dir) = named {
        return (PathBuf::from(dir), None);
    }
    let dir = tempfile::Builder::new().prefix("celerity-dev-data-").tempdir().expect("a data folder");
    command.env(DATA_DIR, dir.path());
    (dir.path().to_path_buf(), Some(dir))
}

/// A running `celerity-dev`, its log (its stderr, which the handler process
/// inherits, so the handler's own log lines are in it too), its port and
/// its data folder.
pub struct Dev {
    pub child: Child,
    log: Arc<Mutex<String>>,
    pub port: u16,
    /// The session's data folder: `buckets/<bucket>`, `datastores/<datastore>.json`.
    pub data: PathBuf,
    /// Removed after the process has been stopped (fields drop after `drop`).
    _data_dir: Option<tempfile::TempDir>,
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dev {
    /// Starts `command` (from [`dev_command`]) and waits until it serves.
    pub fn spawn(mut command: Command) -> Dev {
        let (data, data_dir) = own_data_dir(&mut command);
        let mut child = command.spawn().expect("start celerity-dev");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn({
            let log = Arc::clone(&log);
            move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            }
        });
        let mut dev = Dev { child, log, port: 0, data, _data_dir: data_dir };
        let line = dev.wait_for("serving on http://127.0.0.1:", Duration::from_secs(60));
        dev.port = number_after(&line, "serving on http://127.0.0.1:");
        dev
    }

    /// The log so far.
    pub fn text(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The lines of the log containing `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.text().lines().filter(|l| l.contains(needle)).count()
    }

    /// Waits for a log line containing `needle` and returns it.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        self.wait_for_nth(needle, 1, timeout)
    }

    /// Waits for the `n`th log line containing `needle` and returns it.
    pub fn wait_for_nth(&mut self, needle: &str, n: usize, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(line) = self.text().lines().filter(|l| l.contains(needle)).nth(n - 1) {
                return line.to_owned();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("celerity-dev exited ({status}) before logging {needle:?} (#{n}):\n{}", self.text());
            }
            assert!(Instant::now() < deadline, "no {needle:?} (#{n}) in the log:\n{}", self.text());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The number right after `needle` in `line`. The handler shares
/// celerity-dev's stderr, and its lines can land in the middle of one of
/// celerity-dev's, so the number is read up to its last digit.
pub fn number_after<T: std::str::FromStr>(line: &str, needle: &str) -> T {
    let rest = &line[line.find(needle).unwrap_or_else(|| panic!("no {needle:?} in {line:?}")) + needle.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("no number after {needle:?} in {line:?}"))
}

/// An HTTP response as read off the socket.
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Response {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Sends a request with a JSON body; the response is read with [`read`].
pub fn send(port: u16, method: &str, path: &str, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Reads the whole response (the request said `Connection: close`).
pub fn read(mut stream: TcpStream) -> Response {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Response { status, head: head.to_owned(), body: body.to_owned() }
}

/// A request and its response.
pub fn http(port: u16, method: &str, path: &str, body: &str) -> Response {
    read(send(port, method, path, body))
}

/// Sends `method path` with `headers` and `body` as it is (the length is
/// added); the response is read with [`read`]. Returns once the whole
/// request is written.
pub fn send_raw(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream
}

/// Runs `command` (from [`dev_command`]) until it exits by itself, within
/// [`PATIENCE`]; returns how it exited and its log.
pub fn run_to_exit(mut command: Command) -> (std::process::ExitStatus, String) {
    let (_, _data_dir) = own_data_dir(&mut command);
    let mut child = command.spawn().expect("start celerity-dev");
    let mut stderr = child.stderr.take().unwrap();
    // Read on a thread: a full pipe would stop the process writing.
    let reader = std::thread::spawn(move || {
        let mut log = String::new();
        let _ = stderr.read_to_string(&mut log);
        log
    });
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("celerity-dev did not exit:\n{}", reader.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The handler shares the pipe: the log ends when it has exited too.
    (status, reader.join().unwrap())
}

/// Writes `text` into the FIFO once a handler has opened it for reading.
pub fn release(fifo: &Path, text: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let deadline = Instant::now() + PATIENCE;
    let mut f = loop {
        // Without a reader, a non-blocking open for writing fails (ENXIO).
        match std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(fifo) {
            Ok(f) => break f,
            Err(e) => assert!(Instant::now() < deadline, "the handler never opened the FIFO: {e}"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    f.write_all(text.as_bytes()).unwrap();
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}
