//! Running a handler executable under test: environment, captured output,
//! exit status, signals, kill-on-drop.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::runtime::TestRuntime;

/// How long, after the process exits, to wait for its output pipes to drain.
const OUTPUT_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Output captured from a process, readable while it runs.
#[derive(Default)]
struct Captured {
    stdout: Mutex<Vec<u8>>,
    stderr: Mutex<Vec<u8>>,
}

/// Builds a [`HandlerProcess`]: program, arguments and environment. The
/// process inherits the test's environment unless
/// [`env_clear`](Self::env_clear) is called.
#[derive(Debug)]
#[must_use]
pub struct HandlerCommand {
    program: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    env_clear: bool,
    current_dir: Option<PathBuf>,
}

impl HandlerCommand {
    /// A command for `program`.
    pub fn new(program: impl AsRef<Path>) -> Self {
        HandlerCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            env_clear: false,
            current_dir: None,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// Removes an environment variable.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.as_ref().to_owned(), None));
        self
    }

    /// Starts from an empty environment instead of the test's.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    /// Sets the working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Starts the process (inside a Tokio runtime), stdin closed, stdout and
    /// stderr captured.
    pub fn spawn(self) -> io::Result<HandlerProcess> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        if self.env_clear {
            cmd.env_clear();
        }
        for (k, v) in &self.envs {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn()?;

        let captured = Arc::new(Captured::default());
        let (changed, _) = watch::channel(0u64);
        let changed = Arc::new(changed);
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(capture(out, Arc::clone(&captured), Arc::clone(&changed), false)));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(capture(err, Arc::clone(&captured), Arc::clone(&changed), true)));
        }
        Ok(HandlerProcess { program: self.program, child, captured, changed, readers })
    }
}

/// A running handler executable.
///
/// stdout and stderr are captured continuously into buffers readable at any
/// time. The process is killed when this is dropped.
pub struct HandlerProcess {
    program: PathBuf,
    child: Child,
    captured: Arc<Captured>,
    changed: Arc<watch::Sender<u64>>,
    readers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for HandlerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerProcess")
            .field("program", &self.program)
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl HandlerProcess {
    /// Starts `program` with the extra environment `envs` (typically
    /// [`TestRuntime::env`], i.e. `CELERITY_RUNTIME_SOCKET`).
    pub fn spawn<I, K, V>(program: impl AsRef<Path>, envs: I) -> io::Result<Self>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        HandlerCommand::new(program).envs(envs).spawn()
    }

    /// Starts `program` with the environment that connects it to `runtime`.
    pub fn spawn_for(runtime: &TestRuntime, program: impl AsRef<Path>) -> io::Result<Self> {
        Self::spawn(program, runtime.env())
    }

    /// A builder for more control (arguments, a cleared environment, ...).
    pub fn command(program: impl AsRef<Path>) -> HandlerCommand {
        HandlerCommand::new(program)
    }

    /// The process id, while it has not been reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits at most `timeout` for the process to exit. On exit, also waits
    /// (briefly) for its output to be fully captured.
    pub async fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let status = tokio::time::timeout(timeout, self.child.wait()).await.ok()?.ok()?;
        self.drain_output().await;
        Some(status)
    }

    /// Waits, without limit, for the process to exit.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.drain_output().await;
        Ok(status)
    }

    /// The exit status if the process has exited, without waiting.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Kills the process (SIGKILL) and waits for it.
    pub async fn kill(&mut self) -> io::Result<ExitStatus> {
        // Killing an already exited child is not an error here.
        let _ = self.child.start_kill();
        self.wait().await
    }

    /// Sends `signal` (e.g. `libc::SIGTERM`) to the process.
    pub fn signal(&self, signal: i32) -> io::Result<()> {
        let pid = self.child.id().ok_or_else(|| io::Error::other("the process has already been reaped"))?;
        let pid = libc::pid_t::try_from(pid).map_err(io::Error::other)?;
        // SAFETY: kill(2) has no memory-safety preconditions.
        let rc = unsafe { libc::kill(pid, signal) };
        if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
    }

    /// Sends SIGTERM, as the runtime may on shutdown.
    pub fn terminate(&self) -> io::Result<()> {
        self.signal(libc::SIGTERM)
    }

    /// Everything captured from stdout so far (lossy UTF-8).
    pub fn stdout_text(&self) -> String {
        lossy(&self.captured.stdout)
    }

    /// Everything captured from stderr so far (lossy UTF-8).
    pub fn stderr_text(&self) -> String {
        lossy(&self.captured.stderr)
    }

    /// Both streams, labelled, for assertion messages.
    pub fn output_text(&self) -> String {
        format!("--- stdout ---\n{}\n--- stderr ---\n{}", self.stdout_text(), self.stderr_text())
    }

    /// Waits at most `timeout` until stdout or stderr contains `needle`.
    pub async fn wait_for_output(&self, needle: &str, timeout: Duration) -> bool {
        let mut changes = self.changed.subscribe();
        let check = || self.stdout_text().contains(needle) || self.stderr_text().contains(needle);
        let wait = async {
            loop {
                changes.borrow_and_update();
                if check() {
                    return true;
                }
                if changes.changed().await.is_err() {
                    return check();
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.unwrap_or(false)
    }

    async fn drain_output(&mut self) {
        for reader in std::mem::take(&mut self.readers) {
            let _ = tokio::time::timeout(OUTPUT_DRAIN_TIMEOUT, reader).await;
        }
    }
}

async fn capture(
    mut pipe: impl AsyncRead + Unpin,
    captured: Arc<Captured>,
    changed: Arc<watch::Sender<u64>>,
    stderr: bool,
) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let target = if stderr { &captured.stderr } else { &captured.stdout };
                target.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&buf[..n]);
                changed.send_modify(|v| *v = v.wrapping_add(1));
            }
        }
    }
}

fn lossy(buf: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buf.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
}
