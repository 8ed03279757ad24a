//! PostgreSQL servers on loopback: the process's shared one, a shared one
//! that makes TLS observable, and private ones a test may stop and start.
//!
//! Each is a fresh cluster (`initdb`) in a data directory of its own, with
//! the superuser `celerity` (password `celerity`) and a database
//! `celerity`, run without durability (`fsync=off`): a test's data need
//! not outlive the test. Postgres refuses to run as root, so a test process
//! that is root runs its servers as the `postgres` user.

use std::ffi::CString;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::database::{DataDirs, HOST, LIMIT, run_client, url};
use super::{apt_install, find, free_port, installed_at, keep, run, wait_until};

/// The superuser every server is set up with, also its password and the
/// name of the database made for the tests.
const SUPERUSER: &str = "celerity";

/// The role [`postgres_tls`] takes only over TLS, also its password.
const TLS_ONLY: &str = "tls_only";

/// The servers' data directories. A killed postmaster leaves, beside its
/// files, the small System V shared memory segment it removes only when it
/// stops.
static DATA_DIRS: DataDirs =
    DataDirs::new("celerity-test-postgres-", |dir| remove_shared_memory(&dir.join("data/postmaster.pid")));

/// A PostgreSQL server on loopback, reached over TCP on 127.0.0.1 with
/// passwords (SCRAM-SHA-256).
#[derive(Debug)]
pub struct Postgres {
    /// Names it in failures and in its log's name.
    server: String,
    port: u16,
    /// The directory of the PostgreSQL programs it runs.
    programs: PathBuf,
    /// Whom it runs as, where that is not this process's user.
    owner: Option<Owner>,
    /// `-c name=value` arguments of its own, beyond every server's.
    settings: Vec<String>,
    /// Holds the data directory (`data`); removed when a private server is
    /// dropped.
    dir: tempfile::TempDir,
}

impl Postgres {
    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        HOST
    }

    /// `postgres://<user>:<password>@127.0.0.1:<port>/<database>`, with
    /// each part percent-encoded where a URL needs it.
    pub fn url(&self, user: &str, password: &str, database: &str) -> String {
        url("postgres", self.port, user, password, database)
    }

    /// The URL of the superuser `celerity` (password `celerity`) on the
    /// database `celerity`.
    pub fn superuser_url(&self) -> String {
        self.url(SUPERUSER, SUPERUSER, SUPERUSER)
    }

    /// Runs `sql` with `psql` as the superuser on the database `celerity`,
    /// stopping at the first error, and returns what it printed, trimmed:
    /// unaligned rows without headers, one a line, columns split by `|`
    /// (`SELECT 1` answers `1`). For setting up and checking data without a
    /// client of the test's own. A statement that fails fails the test,
    /// naming the server and quoting `psql`'s errors.
    pub fn psql(&self, sql: &str) -> String {
        self.psql_on(SUPERUSER, sql)
    }

    /// [`psql`](Self::psql) on `database` instead: for checking what a
    /// test wrote to a database of its own.
    pub fn psql_on(&self, database: &str, sql: &str) -> String {
        self.run_psql(&self.url(SUPERUSER, SUPERUSER, database), &[], sql).unwrap_or_else(|error| panic!("{error}"))
    }

    /// Stops the server as `pg_ctl stop -m fast` would: it ends every
    /// session, writes a checkpoint and exits. Returns once its port
    /// refuses connections and its pid file is gone. Only for a private
    /// server ([`start_postgres`]): the shared ones serve other tests too.
    pub fn stop(&self) {
        self.shut_down().unwrap_or_else(|error| panic!("{error}"))
    }

    /// Starts the stopped server again on the same port and data, and
    /// returns once it answers.
    pub fn start(&self) {
        // A server still answering would make the new one fail to start
        // and yet pass the wait below.
        assert!(
            TcpStream::connect((self.host(), self.port)).is_err(),
            "{} is already running on port {}",
            self.server,
            self.port
        );
        let log = keep(self.postmaster(), &self.server);
        wait_until(&self.server, &log, LIMIT, || self.answers());
    }

    /// [`stop`](Self::stop), then [`start`](Self::start): its sessions end,
    /// its data stays.
    pub fn restart(&self) {
        self.stop();
        self.start();
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn pid_file(&self) -> PathBuf {
        self.data().join("postmaster.pid")
    }

    /// One of the PostgreSQL programs, to run as the server's user, in the
    /// directory that holds its data (its user may not be able to enter
    /// this process's).
    fn program(&self, name: &str) -> Command {
        let mut command = Command::new(self.programs.join(name));
        command.current_dir(self.dir.path());
        if let Some(owner) = self.owner {
            command.uid(owner.uid).gid(owner.gid);
        }
        command
    }

    /// Makes the cluster: the superuser with its password (from a file, so
    /// that it appears in no process's arguments), passwords over TCP, and
    /// no checks on the local socket, which only the kit itself could use.
    fn initdb(&self) {
        if let Some(owner) = self.owner {
            owner.chown(self.dir.path());
        }
        let password = self.dir.path().join("password");
        std::fs::write(&password, format!("{SUPERUSER}\n"))
            .unwrap_or_else(|error| panic!("{} could not be set up: {}: {error}", self.server, password.display()));
        let mut initdb = self.program("initdb");
        initdb.arg("-D").arg(self.data()).arg(format!("--pwfile={}", password.display())).args([
            "-U",
            SUPERUSER,
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "-N",
        ]);
        run(&mut initdb).unwrap_or_else(|error| panic!("{} could not be set up: {error}", self.server));
        std::fs::remove_file(password).ok();
    }

    /// Turns on TLS with the test certificate for 127.0.0.1 and localhost,
    /// and makes TLS observable: [`TLS_ONLY`] may connect only over it.
    fn serve_tls(&mut self) {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
        // Postgres takes a key only when its own user owns it and no one
        // else may read it; the copies are beside the data, which the
        // server's user can reach wherever the fixtures are.
        for name in ["server.pem", "server.key"] {
            let copy = self.data().join(name);
            std::fs::copy(fixtures.join(name), &copy)
                .and_then(|_| std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)))
                .unwrap_or_else(|error| panic!("{} could not be set up: {}: {error}", self.server, copy.display()));
            if let Some(owner) = self.owner {
                owner.chown(&copy);
            }
        }
        let hba = self.data().join("pg_hba.conf");
        // The first line that matches a connection decides it.
        let rules = format!(
            "# Written by celerity-testkit: {TLS_ONLY} only over TLS, everyone else over either.\n\
             local all all trust\n\
             hostnossl all {TLS_ONLY} 127.0.0.1/32 reject\n\
             host all all 127.0.0.1/32 scram-sha-256\n"
        );
        std::fs::write(&hba, rules)
            .unwrap_or_else(|error| panic!("{} could not be set up: {}: {error}", self.server, hba.display()));
        for setting in ["ssl=on", "ssl_cert_file=server.pem", "ssl_key_file=server.key"] {
            self.settings.extend(["-c".to_string(), setting.to_string()]);
        }
    }

    /// The postmaster's command: listening on 127.0.0.1 only, its socket
    /// in its data directory (not `/var/run/postgresql`, which may not
    /// exist), without durability, logging to the output [`keep`] keeps.
    fn postmaster(&self) -> Command {
        let mut postgres = self.program("postgres");
        postgres
            .arg("-D")
            .arg(self.data())
            .args(["-h", self.host(), "-p", &self.port.to_string(), "-k"])
            .arg(self.data())
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
            .args(["-c", "max_connections=100"])
            .args(&self.settings);
        postgres
    }

    /// Whether the server takes a password over TCP and runs a query: it
    /// listens a while before it takes sessions.
    fn answers(&self) -> Option<()> {
        TcpStream::connect((self.host(), self.port)).ok()?;
        let one = self.run_psql(&self.url(SUPERUSER, SUPERUSER, "postgres"), &[], "SELECT 1").ok()?;
        (one == "1").then_some(())
    }

    /// Runs `sql` with `psql` at `url`, with `env` (such as `PGSSLMODE`),
    /// answering what it printed, trimmed, or, where it failed, a message
    /// naming the server and quoting `psql`'s errors.
    fn run_psql(&self, url: &str, env: &[(&str, &str)], sql: &str) -> Result<String, String> {
        let mut psql = Command::new(self.programs.join("psql"));
        psql.arg(url)
            .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-f", "-"])
            // A server that takes the connection and never answers fails
            // the test rather than hanging it.
            .env("PGCONNECT_TIMEOUT", "10")
            .envs(env.iter().copied());
        run_client(psql, "psql", &self.server, sql)
    }

    /// [`stop`](Self::stop), answering its failure rather than panicking,
    /// for [`Drop`].
    fn shut_down(&self) -> Result<(), String> {
        let pid_file = self.pid_file();
        let pid = std::fs::read_to_string(&pid_file)
            .map_err(|error| format!("{} is not running: {}: {error}", self.server, pid_file.display()))?
            .lines()
            .next()
            .and_then(|line| line.trim().parse::<libc::pid_t>().ok())
            .ok_or_else(|| format!("{} is not running: no pid in {}", self.server, pid_file.display()))?;
        // SIGINT is Postgres's fast shutdown. The `Child` that started it
        // is gone (see `keep`), hence the pid from its own file.
        // SAFETY: kill only sends a signal.
        if unsafe { libc::kill(pid, libc::SIGINT) } != 0 {
            let error = std::io::Error::last_os_error();
            return Err(format!("{} (pid {pid}) could not be stopped: {error}", self.server));
        }
        let start = Instant::now();
        while TcpStream::connect((self.host(), self.port)).is_ok() || pid_file.exists() {
            if start.elapsed() > LIMIT {
                return Err(format!("{} (pid {pid}) did not stop within {} s", self.server, LIMIT.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Postgres {
    /// Stops a private server before its data goes (the shared ones live
    /// in statics, and end with the process instead).
    fn drop(&mut self) {
        if self.pid_file().exists() {
            // Failing here would abort a test that is already failing.
            let _ = self.shut_down();
        }
    }
}

/// The process's PostgreSQL server, started (and installed) on first use.
pub fn postgres() -> &'static Postgres {
    static POSTGRES: OnceLock<Postgres> = OnceLock::new();
    POSTGRES.get_or_init(|| set_up("postgres".to_string(), false))
}

/// The process's PostgreSQL server with TLS on, with a certificate for
/// `127.0.0.1` and `localhost` signed by the test CA
/// ([`tls_ca_file`](super::tls_ca_file)). It takes the role `tls_only`
/// (password `tls_only`) only over TLS, refusing it without, so that a
/// test can see a client's TLS at work; everyone else, the superuser too,
/// over either. Started (and installed) on first use.
pub fn postgres_tls() -> &'static Postgres {
    static TLS: OnceLock<Postgres> = OnceLock::new();
    TLS.get_or_init(|| set_up("postgres (TLS)".to_string(), true))
}

/// A PostgreSQL server of the test's own, on a port and data of its own,
/// for a test that stops and restarts it. Dropping it stops it and
/// removes its data.
pub fn start_postgres() -> Postgres {
    let port = free_port();
    set_up_on(format!("postgres (port {port})"), port, false)
}

fn set_up(server: String, tls: bool) -> Postgres {
    set_up_on(server, free_port(), tls)
}

/// Makes a cluster and starts its server on `port`, with the database
/// `celerity`, and with TLS and its role where `tls` says so.
fn set_up_on(server: String, port: u16, tls: bool) -> Postgres {
    let programs = installed_at("postgres", locate_programs, || apt_install("postgresql"));
    let owner = Owner::needed();
    let dir = DATA_DIRS.make(&server);
    let mut postgres = Postgres { server, port, programs, owner, settings: Vec::new(), dir };
    postgres.initdb();
    if tls {
        postgres.serve_tls();
    }
    postgres.start();
    // initdb makes only `postgres` and the templates.
    let create = format!("CREATE DATABASE {SUPERUSER}");
    postgres
        .run_psql(&postgres.url(SUPERUSER, SUPERUSER, "postgres"), &[], &create)
        .unwrap_or_else(|error| panic!("{error}"));
    if tls {
        postgres.psql(&format!("CREATE ROLE {TLS_ONLY} LOGIN PASSWORD '{TLS_ONLY}'"));
    }
    postgres
}

/// The directory of the newest PostgreSQL's programs: Debian's
/// `/usr/lib/postgresql/<version>/bin`, one for each version installed and
/// none of them on `PATH`, or else the directory `initdb` on `PATH` is
/// really in (`/usr/local/bin` may hold links to only some of them).
fn locate_programs() -> Option<PathBuf> {
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let version = name.to_str()?.split('.').map(|part| part.parse().ok()).collect::<Option<Vec<u32>>>()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort();
    let elsewhere = find(&["initdb"])
        .and_then(|initdb| std::fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf));
    versions
        .into_iter()
        .rev()
        .map(|(_, bin)| bin)
        .chain(elsewhere)
        .find(|bin| ["initdb", "postgres", "psql"].iter().all(|program| bin.join(program).is_file()))
}

/// The user a server runs as where it cannot run as this process's.
#[derive(Debug, Clone, Copy)]
struct Owner {
    uid: libc::uid_t,
    gid: libc::gid_t,
}

impl Owner {
    /// The `postgres` user (Debian's package makes it) where this process
    /// is root, which Postgres refuses to run as; otherwise nobody else.
    fn needed() -> Option<Owner> {
        // SAFETY: geteuid only reads this process's credentials.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let name = CString::new("postgres").expect("no NUL in a user's name");
        // SAFETY: a zeroed passwd is valid (integers and null pointers);
        // getpwnam_r fills it and points its strings into `buffer`, which
        // outlives their only use here, and is the reentrant getpwnam, as
        // several tests may look at once.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buffer = vec![0 as libc::c_char; 16 * 1024];
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let code =
            unsafe { libc::getpwnam_r(name.as_ptr(), &mut entry, buffer.as_mut_ptr(), buffer.len(), &mut found) };
        assert!(
            code == 0 && !found.is_null(),
            "postgres refuses to run as root, and this test runs as root with no `postgres` user to run it as"
        );
        Some(Owner { uid: entry.pw_uid, gid: entry.pw_gid })
    }

    fn chown(self, path: &Path) {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid))
            .unwrap_or_else(|error| panic!("postgres could not be set up: chown {}: {error}", path.display()));
    }
}

/// Removes the System V segment named in a killed server's pid file (its
/// seventh line: the key and the id), where the postmaster of the first
/// line made it and nothing uses it now.
fn remove_shared_memory(pid_file: &Path) {
    let Ok(contents) = std::fs::read_to_string(pid_file) else {
        return;
    };
    let lines: Vec<&str> = contents.lines().collect();
    let postmaster = lines.first().and_then(|line| line.trim().parse::<libc::pid_t>().ok());
    let id = lines.get(6).and_then(|line| line.split_whitespace().nth(1)).and_then(|id| id.parse::<libc::c_int>().ok());
    let (Some(postmaster), Some(id)) = (postmaster, id) else {
        return;
    };
    // SAFETY: a zeroed shmid_ds is valid; IPC_STAT fills it, and IPC_RMID
    // takes no buffer.
    unsafe {
        let mut status: libc::shmid_ds = std::mem::zeroed();
        if libc::shmctl(id, libc::IPC_STAT, &mut status) == 0 && status.shm_cpid == postmaster && status.shm_nattch == 0
        {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_server_keeps_its_data_across_a_restart_and_removes_it_when_dropped() {
        let started = Instant::now();
        let postgres = start_postgres();
        eprintln!("{} started in {:?}", postgres.server, started.elapsed());
        assert_eq!(postgres.psql("SELECT 1"), "1");
        assert_eq!(postgres.psql("SELECT current_database()"), "celerity");
        postgres.psql("CREATE TABLE kept (id int PRIMARY KEY, word text); INSERT INTO kept VALUES (1, 'still here');");

        let restarted = Instant::now();
        postgres.restart();
        eprintln!("{} restarted in {:?}", postgres.server, restarted.elapsed());
        assert_eq!(postgres.psql("SELECT id, word FROM kept"), "1|still here");

        let (dir, port) = (postgres.dir.path().to_path_buf(), postgres.port());
        drop(postgres);
        assert!(!dir.exists(), "{} outlived its server", dir.display());
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "the dropped server still answers on {port}");
    }

    #[test]
    fn a_psql_failure_names_the_server_and_quotes_its_error() {
        let failed = std::panic::catch_unwind(|| postgres().psql("SELECT * FROM no_such_table"));
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(message.starts_with("postgres refused \"SELECT * FROM no_such_table\""), "{message}");
        assert!(message.contains("relation \"no_such_table\" does not exist"), "{message}");
    }

    #[test]
    fn the_tls_server_takes_tls_only_over_tls_and_the_superuser_over_either() {
        let postgres = postgres_tls();
        let tls_only = postgres.url(TLS_ONLY, TLS_ONLY, SUPERUSER);
        let refused = postgres.run_psql(&tls_only, &[("PGSSLMODE", "disable")], "SELECT 1").unwrap_err();
        assert!(refused.contains("pg_hba.conf rejects connection"), "{refused}");
        let over_tls = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
        assert_eq!(postgres.run_psql(&tls_only, &[("PGSSLMODE", "require")], over_tls), Ok("t".to_string()));

        let superuser = postgres.superuser_url();
        assert_eq!(postgres.run_psql(&superuser, &[("PGSSLMODE", "disable")], over_tls), Ok("f".to_string()));
        assert_eq!(postgres.run_psql(&superuser, &[("PGSSLMODE", "require")], over_tls), Ok("t".to_string()));
    }
}
