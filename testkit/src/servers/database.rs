//! What the test database servers (PostgreSQL, MariaDB) have in common:
//! the address they listen on and their URLs, how long they may take,
//! their data directories and the sweep of those that ended test processes
//! left behind, and running their command-line clients.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Where every database server listens: loopback only.
pub(super) const HOST: &str = "127.0.0.1";

/// How long a database server may take to start answering, or to stop.
pub(super) const LIMIT: Duration = Duration::from_secs(60);

/// What a URL's user, password or database keeps as it is: RFC 3986's
/// unreserved characters. The rest is percent-encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `<scheme>://<user>:<password>@127.0.0.1:<port>/<database>`, with each
/// part percent-encoded where a URL needs it.
pub(super) fn url(scheme: &str, port: u16, user: &str, password: &str, database: &str) -> String {
    let encode = |part| utf8_percent_encode(part, UNRESERVED);
    format!("{scheme}://{}:{}@{HOST}:{port}/{}", encode(user), encode(password), encode(database))
}

/// The data directories of one kind of server, in the temporary directory,
/// each named by `prefix` and the id of the test process that made it: how
/// a later process knows a directory left by one that has ended. A shared
/// server's data outlives it, as statics are never dropped; the kernel
/// ends the server with its process, but not its files (tens to hundreds
/// of MB), so the first server of a kind that a process starts removes
/// what ended processes left.
pub(super) struct DataDirs {
    prefix: &'static str,
    /// Removes what a server killed with its process leaves beyond its
    /// directory, given the directory, before the directory goes.
    leftovers: fn(&Path),
    /// Whether this process has swept them yet.
    swept: OnceLock<()>,
}

impl DataDirs {
    /// The directories named by `prefix`, whose ended servers leave what
    /// `leftovers` removes.
    pub(super) const fn new(prefix: &'static str, leftovers: fn(&Path)) -> DataDirs {
        DataDirs { prefix, leftovers, swept: OnceLock::new() }
    }

    /// A new data directory for `server`, once those that ended test
    /// processes left are gone.
    pub(super) fn make(&self, server: &str) -> tempfile::TempDir {
        self.swept.get_or_init(|| self.sweep(&std::env::temp_dir()));
        tempfile::Builder::new()
            .prefix(&format!("{}{}-", self.prefix, std::process::id()))
            .tempdir()
            .unwrap_or_else(|error| panic!("no temporary directory for {server}: {error}"))
    }

    /// Removes the directories in `temp` whose test process has ended.
    fn sweep(&self, temp: &Path) {
        let Ok(entries) = std::fs::read_dir(temp) else {
            return;
        };
        // Directories only: the servers' logs begin alike.
        for entry in entries.flatten().filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir())) {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|name| name.strip_prefix(self.prefix))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            // SAFETY: signal 0 only asks whether the process exists.
            let ended = unsafe { libc::kill(pid, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if ended {
                (self.leftovers)(&entry.path());
                std::fs::remove_dir_all(entry.path()).ok();
            }
        }
    }
}

/// Runs a server's command-line `client` (`psql`, named so in failures)
/// for `server`, giving it `input`, and answers what it printed, trimmed,
/// or, where it failed, a message naming the server and quoting the
/// client's errors.
pub(super) fn run_client(mut command: Command, client: &str, server: &str, input: &str) -> Result<String, String> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|error| format!("{client} for {server} could not be started: {error}"))?;
    let mut stdin = child.stdin.take();
    // Written beside the reading, so that neither waits on a full pipe.
    let output = std::thread::scope(|scope| {
        scope.spawn(move || stdin.as_mut().map(|stdin| stdin.write_all(input.as_bytes())));
        child.wait_with_output()
    })
    .map_err(|error| format!("{client} for {server} did not finish: {error}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(format!(
            "{server} refused {input:?} ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_encodes_what_a_url_cannot_hold() {
        assert_eq!(
            url("postgres", 5432, "a user", "p@ss:w/rd", "db-1"),
            "postgres://a%20user:p%40ss%3Aw%2Frd@127.0.0.1:5432/db-1"
        );
        assert_eq!(url("mysql", 3306, "celerity", "~a.b_c-d", "é"), "mysql://celerity:~a.b_c-d@127.0.0.1:3306/%C3%A9");
    }

    #[test]
    fn the_sweep_removes_only_the_directories_of_ended_processes() {
        static LEFT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let dirs = DataDirs::new("celerity-test-sweep-", |dir| {
            LEFT.lock().unwrap().push(dir.file_name().unwrap().to_string_lossy().into_owned());
        });
        let temp = tempfile::tempdir().unwrap();
        let mine = temp.path().join(format!("celerity-test-sweep-{}-a", std::process::id()));
        // No process has the largest pid there is: an ended one's.
        let ended = temp.path().join(format!("celerity-test-sweep-{}-b", libc::pid_t::MAX));
        let other = temp.path().join("celerity-test-other-1-c");
        for dir in [&mine, &ended, &other] {
            std::fs::create_dir_all(dir.join("data")).unwrap();
        }
        let log = temp.path().join(format!("celerity-test-sweep-{}-d.log", libc::pid_t::MAX));
        std::fs::write(&log, "").unwrap();
        dirs.sweep(temp.path());
        assert!(mine.exists() && other.exists() && log.exists() && !ended.exists());
        assert_eq!(*LEFT.lock().unwrap(), [format!("celerity-test-sweep-{}-b", libc::pid_t::MAX)]);
    }

    #[test]
    fn a_client_that_fails_is_quoted_naming_the_server() {
        let mut client = Command::new("sh");
        client.args(["-c", "cat >/dev/null; echo 'ERROR: no such table' >&2; exit 3"]);
        let error = run_client(client, "sh", "a-server", "SELECT 1").unwrap_err();
        assert_eq!(error, "a-server refused \"SELECT 1\" (exit status: 3): ERROR: no such table");
        let mut client = Command::new("sh");
        client.args(["-c", "cat"]);
        assert_eq!(run_client(client, "sh", "a-server", "  echoed \n"), Ok("echoed".to_string()));
        let absent = run_client(Command::new("/nonexistent/client"), "the client", "a-server", "").unwrap_err();
        assert!(absent.starts_with("the client for a-server could not be started: "), "{absent}");
    }
}
