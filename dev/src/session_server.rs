//! What the session's servers (its Redis, its Postgres) share when
//! `celerity-dev` starts one itself: the blueprint's resources it serves,
//! the program found on `PATH`, a child the kernel ends with
//! `celerity-dev`, a free loopback port, tried again when something else
//! takes it first, the polling until it answers, and failures that quote
//! its output.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::App;

/// How many free ports a started server is tried on: the port is free when
/// chosen, and something else may take it before the server binds it.
pub(crate) const PORT_ATTEMPTS: usize = 3;

/// How often a starting server is asked whether it answers. Redis answers
/// within milliseconds of starting, Postgres within a second: this is how
/// often it is asked, not a wait for it.
const POLL: Duration = Duration::from_millis(20);

/// The resources of `kind` that `app`'s blueprint links, as the log names
/// them (`` `name` ``): what the session's server is for.
pub(crate) fn linked(app: &App, kind: &str) -> Vec<String> {
    app.resources.links.iter().filter(|link| link.kind == kind).map(|link| format!("`{}`", link.name)).collect()
}

/// A server started for the session, as its failures describe it.
pub(crate) struct Launch<'a> {
    /// Its program.
    pub(crate) program: &'a Path,
    /// What of the session's it serves: `queues`.
    pub(crate) serves: &'a str,
    /// What it does once it is ready, as "exited before …" says it:
    /// `answering PING`.
    pub(crate) answering: &'a str,
    /// The same, as "did not … within" says it: `answer PING`.
    pub(crate) answer: &'a str,
    /// How long it has to, once started.
    pub(crate) within: Duration,
    /// The file its output goes to, quoted when it fails.
    pub(crate) output: &'a Path,
}

/// What asking a starting server whether it answers found.
pub(crate) enum Poll {
    /// It answers: it is used.
    Ready,
    /// Not yet, for this reason, which a server that never answers is
    /// failed with.
    NotYet(String),
    /// It answered, but as a server that will not do: it is ended.
    Failed(String),
}

/// Why a started server is not used.
pub(crate) enum Failure {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It exited; `port_taken` when because something took its port.
    Exited { status: std::process::ExitStatus, port_taken: bool },
    /// It did not answer within [`Launch::within`], or refused, saying
    /// this.
    Silent(String),
}

impl Launch<'_> {
    /// Starts the server with `spawn` on a free loopback port, on another
    /// when something else took that one first, up to [`PORT_ATTEMPTS`];
    /// answers its port and process, or why there is none, quoting its
    /// output.
    pub(crate) async fn on_a_free_port(
        &self,
        mut spawn: impl AsyncFnMut(u16) -> Result<Child, Failure>,
    ) -> Result<(u16, Child), String> {
        let program = self.program.display();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = free_port().map_err(|e| format!("no free port on 127.0.0.1 for {program}: {e}"))?;
            let failure = match spawn(port).await {
                Ok(child) => return Ok((port, child)),
                Err(failure) => failure,
            };
            let started = format!("{program}, started for the session's {} on 127.0.0.1:{port}", self.serves);
            let why = match failure {
                Failure::Exited { port_taken: true, .. } if attempt < PORT_ATTEMPTS => continue,
                Failure::Spawn(error) => format!("could not start {program}: {error}"),
                Failure::Exited { status, .. } => format!(
                    "{started}, exited ({status}) before {}; its output:\n{}",
                    self.answering,
                    tail(self.output)
                ),
                Failure::Silent(why) => format!(
                    "{started}, did not {} within {} s ({why}); its output:\n{}",
                    self.answer,
                    self.within.as_secs(),
                    tail(self.output)
                ),
            };
            return Err(why);
        }
    }

    /// Starts `command`, its output to `output` (the file at
    /// [`Launch::output`]), told to end with `signal` when `celerity-dev`
    /// does, and asks `ready` whether it answers until it does; one that
    /// exits, refuses or never answers is ended and not returned.
    pub(crate) async fn spawn(
        &self,
        mut command: Command,
        output: std::fs::File,
        signal: libc::c_int,
        mut ready: impl FnMut() -> Poll,
    ) -> Result<Child, Failure> {
        command.stdin(Stdio::null()).stdout(output.try_clone().map_err(Failure::Spawn)?).stderr(output);
        ends_with_this_process(&mut command, signal);
        let mut child = command.spawn().map_err(Failure::Spawn)?;
        let deadline = Instant::now() + self.within;
        loop {
            let last = match ready() {
                Poll::Ready => return Ok(child),
                Poll::NotYet(why) => why,
                Poll::Failed(why) => {
                    stop(&mut child);
                    return Err(Failure::Silent(why));
                }
            };
            if let Ok(Some(status)) = child.try_wait() {
                // What Redis and Postgres both say when they cannot bind.
                let port_taken =
                    std::fs::read_to_string(self.output).unwrap_or_default().contains("Address already in use");
                return Err(Failure::Exited { status, port_taken });
            }
            if Instant::now() > deadline {
                stop(&mut child);
                return Err(Failure::Silent(last));
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Whether `path` is a file someone may run.
pub(crate) fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Kills `child` unless it has exited, and reaps it.
pub(crate) fn stop(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    let _ = child.wait();
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

/// The last lines of the server's output, for the error that quotes it.
pub(crate) fn tail(output: &Path) -> String {
    let text = std::fs::read_to_string(output).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(20)..].join("\n");
    if tail.is_empty() { "(none)".to_owned() } else { tail }
}

/// What the tests of starting a server use: programs that are scripts.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Makes `path` a shell script running `body`.
    pub(crate) fn script(path: &Path, body: &str) {
        std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// What `start` answers, on a runtime of its own, started again while
    /// a script cannot be run yet: a process another test forks while the
    /// script is being written holds it open for writing until it execs,
    /// and a file open for writing cannot be run (ETXTBSY).
    pub(crate) fn started<T>(start: impl AsyncFn() -> Result<T, String>) -> Result<T, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        loop {
            match runtime.block_on(start()) {
                Err(error) if error.contains("Text file busy") => std::thread::yield_now(),
                other => return other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{script, started};
    use super::*;

    /// A launch of `program`, its output in `dir`, with `within` to answer.
    fn launch<'a>(program: &'a Path, output: &'a Path, within: Duration) -> Launch<'a> {
        Launch { program, serves: "tests", answering: "answering", answer: "answer", within, output }
    }

    /// Starts `program` as `launch` says, ready when `ready` says so.
    fn start(launch: &Launch<'_>, ready: impl Fn(u16) -> Poll + Copy) -> Result<(u16, Child), String> {
        started(async || {
            launch
                .on_a_free_port(async |port| {
                    let output = std::fs::File::create(launch.output).map_err(Failure::Spawn)?;
                    launch.spawn(Command::new(launch.program), output, libc::SIGKILL, || ready(port)).await
                })
                .await
        })
    }

    #[test]
    fn a_server_that_answers_is_used_and_one_that_refuses_or_never_answers_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (program, output) = (dir.path().join("server"), dir.path().join("output.log"));
        script(&program, "echo 'listening'; exec sleep 30");

        let (port, mut child) = start(&launch(&program, &output, Duration::from_secs(5)), |_| Poll::Ready).unwrap();
        assert!(port > 0 && matches!(child.try_wait(), Ok(None)), "a server that answers is kept running");
        stop(&mut child);

        let refused = start(&launch(&program, &output, Duration::from_secs(5)), |_| Poll::Failed("no".into()));
        let error = refused.expect_err("a server that refuses is not used");
        assert!(error.contains("started for the session's tests on 127.0.0.1:"), "{error}");
        assert!(error.contains(", did not answer within 5 s (no); its output:\n"), "{error}");

        let silent = start(&launch(&program, &output, Duration::from_secs(1)), |_| Poll::NotYet("quiet".into()));
        let error = silent.expect_err("a server that never answers is not used");
        assert!(error.ends_with(", did not answer within 1 s (quiet); its output:\nlistening"), "{error}");
    }

    #[test]
    fn a_program_that_cannot_be_started_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (program, output) = (dir.path().join("absent"), dir.path().join("output.log"));
        let error = start(&launch(&program, &output, Duration::from_secs(1)), |_| Poll::Ready).unwrap_err();
        assert!(error.starts_with(&format!("could not start {}: ", program.display())), "{error}");
    }

    #[test]
    fn the_output_quoted_is_its_last_twenty_lines() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("output.log");
        assert_eq!(tail(&output), "(none)");
        let lines: Vec<String> = (1..=25).map(|n| n.to_string()).collect();
        std::fs::write(&output, lines.join("\n")).unwrap();
        assert_eq!(tail(&output), lines[5..].join("\n"));
    }
}
