//! A MariaDB server on loopback, the process's shared one, for the tests
//! of what reaches MySQL and MariaDB.
//!
//! It is a fresh data directory (`mariadb-install-db`) of its own, with
//! the user `celerity` (password `celerity`, every privilege) and a
//! database `celerity`, run without durability: a test's data need not
//! outlive the test. MariaDB runs as root only when told to, so a test
//! process that is root tells it (`--user=root`).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::database::{DataDirs, HOST, LIMIT, run_client, url};
use super::{apt_install, find, free_port, installed_at, keep, run, wait_until};

/// The server's name in failures and in its log's name.
const SERVER: &str = "mariadb";

/// The user every test connects as, also its password and the name of the
/// database made for the tests.
const USER: &str = "celerity";

/// The server's data directories: a killed server leaves nothing beyond
/// its own.
static DATA_DIRS: DataDirs = DataDirs::new("celerity-test-mariadb-", |_| {});

/// A MariaDB server on loopback, reached over TCP on 127.0.0.1 with
/// passwords, and by the kit itself as root over its unix socket.
#[derive(Debug)]
pub struct MariaDb {
    port: u16,
    /// The `mariadb` client.
    client: PathBuf,
    /// Holds the data directory (`data`), with the socket and pid file in
    /// it.
    dir: tempfile::TempDir,
}

impl MariaDb {
    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        HOST
    }

    /// `mysql://<user>:<password>@127.0.0.1:<port>/<database>`, with each
    /// part percent-encoded where a URL needs it.
    pub fn url(&self, user: &str, password: &str, database: &str) -> String {
        url("mysql", self.port, user, password, database)
    }

    /// Runs `statements` with the `mariadb` client as root over the
    /// server's unix socket, on the database `celerity`, stopping at the
    /// first error, and returns what it printed, trimmed: rows without
    /// headers, one a line, columns split by tabs (`SELECT 1` answers
    /// `1`). For setting up and checking data without a client of the
    /// test's own. A statement that fails fails the test, naming the server
    /// and quoting the client's errors.
    pub fn sql(&self, statements: &str) -> String {
        self.sql_on(USER, statements)
    }

    /// [`sql`](Self::sql) on `database` instead: for checking what a test
    /// wrote to a database of its own.
    pub fn sql_on(&self, database: &str, statements: &str) -> String {
        self.as_root(Some(database), statements).unwrap_or_else(|error| panic!("{error}"))
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn socket(&self) -> PathBuf {
        self.data().join("mariadb.sock")
    }

    /// [`sql`](Self::sql) on `database` (none: no database chosen),
    /// answering a failure rather than panicking.
    fn as_root(&self, database: Option<&str>, statements: &str) -> Result<String, String> {
        let socket = self.socket();
        let mut args = vec!["--user=root".to_string(), format!("--socket={}", socket.display())];
        args.extend(database.map(|database| format!("--database={database}")));
        self.client(&args, &[], statements)
    }

    /// Runs the `mariadb` client with `args` (beyond reading no option
    /// files, in batch mode without column names) and `env`, giving it
    /// `statements`, answering what it printed, trimmed, or, where it
    /// failed, a message naming the server and quoting the client's errors.
    fn client(&self, args: &[String], env: &[(&str, &str)], statements: &str) -> Result<String, String> {
        let mut client = Command::new(&self.client);
        client
            // First: the client reads no option file, the machine's own
            // server's socket and users included.
            .arg("--no-defaults")
            .args(["-N", "-B"])
            // A server that takes the connection and never answers fails
            // the test rather than hanging it.
            .arg("--connect-timeout=10")
            .args(args)
            .env_remove("MYSQL_PWD")
            .env_remove("MYSQL_HOST")
            .env_remove("MYSQL_TCP_PORT")
            .env_remove("MYSQL_UNIX_PORT")
            .envs(env.iter().copied());
        run_client(client, "the mariadb client", SERVER, statements)
    }

    /// Runs `statements` as `user` with `password` over TCP, as a test's
    /// client connects, on `database`.
    #[cfg(test)]
    fn over_tcp(&self, user: &str, password: &str, database: &str, statements: &str) -> Result<String, String> {
        let args = [
            "--protocol=TCP".to_string(),
            format!("--host={}", self.host()),
            format!("--port={}", self.port),
            format!("--user={user}"),
            format!("--database={database}"),
        ];
        // From the environment, so that it is in no process's arguments.
        self.client(&args, &[("MYSQL_PWD", password)], statements)
    }

    /// Whether the server listens on its port and runs a query for root
    /// over its socket: it listens a while before it takes sessions.
    fn answers(&self) -> Option<()> {
        TcpStream::connect((self.host(), self.port)).ok()?;
        (self.as_root(None, "SELECT 1").ok()? == "1").then_some(())
    }
}

/// The process's MariaDB server, started (and installed) on first use.
pub fn mariadb() -> &'static MariaDb {
    static MARIADB: OnceLock<MariaDb> = OnceLock::new();
    MARIADB.get_or_init(set_up)
}

/// Makes the data directory, starts the server on a free port, and makes
/// the user `celerity` and its database.
fn set_up() -> MariaDb {
    let server = installed_at(SERVER, locate_server, || apt_install("mariadb-server"));
    let install_db = program(&["mariadb-install-db", "mysql_install_db"]);
    let client = program(&["mariadb", "mysql"]);
    let dir = DATA_DIRS.make(SERVER);
    let mariadb = MariaDb { port: free_port(), client, dir };
    // SAFETY: geteuid only reads this process's credentials.
    let root = unsafe { libc::geteuid() } == 0;

    // Root by password, none yet (`normal`, rather than only the socket's
    // owner), and no test database or anonymous users.
    let mut install = Command::new(install_db);
    install
        .arg("--no-defaults")
        .arg(format!("--datadir={}", mariadb.data().display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
        .current_dir(mariadb.dir.path());
    if root {
        install.arg("--user=root");
    }
    run(&mut install).unwrap_or_else(|error| panic!("{SERVER} could not be set up: {error}"));

    let data = mariadb.data();
    let mut mariadbd = Command::new(server);
    mariadbd
        // First: it reads no option file, the machine's own server's
        // included.
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", mariadb.socket().display()))
        .arg(format!("--pid-file={}", data.join("mariadbd.pid").display()))
        .arg(format!("--port={}", mariadb.port))
        .arg(format!("--bind-address={}", mariadb.host()))
        .args(["--innodb-buffer-pool-size=16M", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0"])
        .current_dir(mariadb.dir.path());
    if root {
        // It refuses root unless told, and root is who owns the data.
        mariadbd.arg("--user=root");
    }
    let log = keep(mariadbd, SERVER);
    wait_until(SERVER, &log, LIMIT, || mariadb.answers());

    // `%` for TCP; `localhost` too, which is what 127.0.0.1 resolves to
    // and which an anonymous `''@localhost` would otherwise take first.
    let set_up = format!(
        "CREATE USER '{USER}'@'%' IDENTIFIED BY '{USER}';\n\
         CREATE USER '{USER}'@'localhost' IDENTIFIED BY '{USER}';\n\
         GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%' WITH GRANT OPTION;\n\
         GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'localhost' WITH GRANT OPTION;\n\
         CREATE DATABASE {USER};\n"
    );
    mariadb.as_root(None, &set_up).unwrap_or_else(|error| panic!("{error}"));
    mariadb
}

/// The server, where its client and `mariadb-install-db` are too (Debian's
/// `mariadb-server` brings all three).
fn locate_server() -> Option<PathBuf> {
    let server = find(&["mariadbd", "mysqld"])?;
    find(&["mariadb-install-db", "mysql_install_db"])?;
    find(&["mariadb", "mysql"])?;
    Some(server)
}

/// One of the programs [`locate_server`] found.
fn program(names: &[&str]) -> PathBuf {
    find(names).unwrap_or_else(|| panic!("{SERVER} is installed without {}", names[0]))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn the_server_takes_root_over_its_socket_and_celerity_over_tcp() {
        let started = Instant::now();
        let mariadb = mariadb();
        eprintln!("{SERVER} ready in {:?}", started.elapsed());
        assert_eq!(mariadb.sql("SELECT 1"), "1");
        assert_eq!(mariadb.sql("SELECT DATABASE()"), "celerity");
        let dir = mariadb.dir.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(dir.starts_with(&format!("celerity-test-mariadb-{}-", std::process::id())), "{dir}");

        let who = mariadb.over_tcp(USER, USER, USER, "SELECT CURRENT_USER(), DATABASE()").unwrap();
        assert!(who.starts_with("celerity@") && who.ends_with("\tcelerity"), "{who}");
        let refused = mariadb.over_tcp(USER, "not-the-password", USER, "SELECT 1").unwrap_err();
        assert!(refused.contains("ERROR 1045 (28000): Access denied for user 'celerity'"), "{refused}");
    }

    #[test]
    fn a_statement_that_fails_names_the_server_and_quotes_its_error() {
        let failed = std::panic::catch_unwind(|| mariadb().sql("SELECT * FROM no_such_table"));
        let message = *failed.unwrap_err().downcast::<String>().unwrap();
        assert!(message.starts_with("mariadb refused \"SELECT * FROM no_such_table\""), "{message}");
        assert!(message.contains("Table 'celerity.no_such_table' doesn't exist"), "{message}");
    }
}
