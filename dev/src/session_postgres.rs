//! Which Postgres holds the session's SQL databases, so that `celerity-dev
//! run notes` needs nothing but a Rust toolchain and a PostgreSQL install.
//!
//! A blueprint that declares a `celerity/sqlDatabase` is served with a
//! Postgres, found in this order, and the handler is given its URL as
//! `CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`, which the SDK connects a SQL
//! database with no host recorded to on the `local` platform:
//!
//! 1. the one the environment names (`CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`):
//!    the user asked for it, so one that does not answer stops the start;
//! 2. one that answers at `localhost:5432` (`CELERITY_DEV_DEFAULT_POSTGRES`
//!    names another), used with the user, password and database `celerity`
//!    that `celerity dev`'s Postgres has;
//! 3. a Postgres started for the session from the `initdb` and `postgres`
//!    found on `PATH` (else in the newest `/usr/lib/postgresql/*/bin`):
//!    a fresh cluster in a temporary folder, superuser `celerity` with
//!    password `celerity`, the database `celerity`, on a free loopback port,
//!    run as the `postgres` user when `celerity-dev` runs as root (Postgres
//!    refuses root), and ended, its data removed, with the session;
//! 4. none: the handler's queries fail, which one warning at the start
//!    says, with what to install.
//!
//! A blueprint without SQL databases is given nothing here (the handler
//! inherits whatever the environment names), and nothing is probed or
//! started for it.
//!
//! A Postgres "answers" when it replies to a startup message as Postgres
//! does: asking for a password, letting the user in, or refusing with an
//! error of its own. The dev runtime speaks just enough of the protocol for
//! that and for creating the started server's database, rather than
//! depending on a client library for two messages.

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::App;
use crate::log;
use crate::session_server::{Failure, Launch, Poll, ends_with_this_process, is_executable, linked, tail};

/// The variable naming the session's Postgres, read by the dev runtime and
/// given to the handler, whose SDK connects to it.
pub const ENV_SQL_ENDPOINT: &str = "CELERITY_LOCAL_SQL_DATABASE_ENDPOINT";

/// Names the Postgres tried when the environment names none, instead of
/// [`DEFAULT_URL`]: a `postgres://` URL, or `host:port` for the default
/// URL's credentials there. For a machine whose usual Postgres is
/// elsewhere, and for tests, which must not pick up a Postgres the machine
/// happens to run.
pub const ENV_DEFAULT_POSTGRES: &str = "CELERITY_DEV_DEFAULT_POSTGRES";

/// Where `celerity dev` runs its Postgres, with its credentials: what a
/// Postgres answering on `localhost:5432` is assumed to take.
pub const DEFAULT_URL: &str = "postgres://celerity:celerity@localhost:5432/celerity?sslmode=disable";

/// The user, password and database of a Postgres started for the session,
/// the ones `celerity dev`'s Postgres has.
const CELERITY: &str = "celerity";

/// Where Debian and Ubuntu install each PostgreSQL version's programs
/// (`<version>/bin`), which are not on `PATH`.
const INSTALLED: &str = "/usr/lib/postgresql";

/// The account a started server runs as when `celerity-dev` runs as root.
const SERVER_USER: &str = "postgres";

/// How long a Postgres named or found has to answer.
const PROBE: Duration = Duration::from_secs(2);
/// How long `initdb` may take, and then how long the started server has to
/// let its superuser in.
const START: Duration = Duration::from_secs(60);
/// How long a started server has to stop before it is killed.
const STOP: Duration = Duration::from_secs(5);

/// The session's Postgres, as found, and the server started for it, if any,
/// which ends when this is dropped.
pub struct SessionPostgres {
    /// What the handler is given as [`ENV_SQL_ENDPOINT`]: the Postgres
    /// found or started, or, when there is none, the URL where none
    /// answered, so that its queries fail as unreachable rather than as a
    /// database nothing describes.
    url: Option<String>,
    _server: Option<Server>,
}

impl SessionPostgres {
    /// What the handler's environment gets for the session's SQL databases.
    pub fn handler_env(&self) -> Vec<(&'static str, String)> {
        self.url.iter().map(|url| (ENV_SQL_ENDPOINT, url.clone())).collect()
    }
}

/// Finds (or starts) the session's Postgres for `app`, saying on the log
/// which it is. Fails when a Postgres the environment names does not
/// answer, or a server started for the session never does.
pub async fn open(app: &App) -> Result<SessionPostgres, String> {
    let databases = linked(app, "sqlDatabase");
    if databases.is_empty() {
        return Ok(SessionPostgres { url: None, _server: None });
    }
    let databases = databases.join(", ");
    let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let default = default_url(var(ENV_DEFAULT_POSTGRES).as_deref());
    let named = var(ENV_SQL_ENDPOINT);

    if let Some(url) = &named {
        let target = Target::parse(url).map_err(|why| format!("{ENV_SQL_ENDPOINT} {}: {why}", shown(url)))?;
        let answer = probe_async(target).await.map_err(|why| {
            format!("could not reach the Postgres at {} that {ENV_SQL_ENDPOINT} names: {why}", shown(url))
        })?;
        log::line(&format!(
            "using the Postgres {ENV_SQL_ENDPOINT} names, {}, for the SQL database(s) {databases}{}",
            shown(url),
            answer.remark()
        ));
        return Ok(SessionPostgres { url: named, _server: None });
    }

    let target = Target::parse(&default).map_err(|why| format!("{ENV_DEFAULT_POSTGRES} {}: {why}", shown(&default)))?;
    let place = target.place.to_string();
    let probed = probe_async(target).await;
    let path = std::env::var_os("PATH");
    let choice = choose(
        probed,
        || find_binaries(path.as_deref(), Path::new(INSTALLED)),
        // SAFETY: geteuid(2) has no preconditions.
        || run_as(unsafe { libc::geteuid() }, || account(SERVER_USER)),
    );
    match choice {
        Choice::Found(answer) => {
            log::line(&format!(
                "using the Postgres that answers at {place} for the SQL database(s) {databases}, as {} \
                 ({ENV_SQL_ENDPOINT} names none){}",
                shown(&default),
                answer.remark()
            ));
            Ok(SessionPostgres { url: Some(default), _server: None })
        }
        Choice::Start { unanswered, bin, account } => {
            let server = Server::start(&bin, account).await?;
            let user = if account.is_some() { format!(" as the user {SERVER_USER}") } else { String::new() };
            log::line(&format!(
                "{ENV_SQL_ENDPOINT} names no Postgres and none answers at {place} ({unanswered}): started {}{user} \
                 as pid {} on {} for the SQL database(s) {databases}, its data in {}; it stops with the session, \
                 and its data goes with it",
                bin.join("postgres").display(),
                server.pid(),
                shown(&server.url),
                server.data.display(),
            ));
            Ok(SessionPostgres { url: Some(server.url.clone()), _server: Some(server) })
        }
        Choice::Off { unanswered, why } => {
            log::line(&warning(&databases, &place, &unanswered, &why));
            Ok(SessionPostgres { url: Some(default), _server: None })
        }
    }
}

/// The one warning a session without a Postgres gives: what fails, why,
/// and what to do about it.
fn warning(databases: &str, place: &str, unanswered: &str, why: &Off) -> String {
    let (missing, remedy) = match why {
        Off::NotInstalled => (
            format!("and neither initdb and postgres are on PATH nor in {INSTALLED}/*/bin"),
            "Install PostgreSQL's server (the postgresql package; Homebrew's postgresql)".to_owned(),
        ),
        Off::NoAccount(bin) => (
            format!(
                "and the initdb and postgres in {} cannot be run: celerity-dev runs as root, which Postgres \
                 refuses, and there is no user {SERVER_USER} to run them as",
                bin.display()
            ),
            format!("Create that user (useradd --system {SERVER_USER}) or run celerity-dev as another user"),
        ),
    };
    format!(
        "warning: the SQL database(s) {databases} cannot be reached, and the handler's queries to them fail: \
         {ENV_SQL_ENDPOINT} names no Postgres, none answers at {place} ({unanswered}), {missing}. {remedy}, or \
         start a Postgres at {place} with the user, password and database {CELERITY}, or set {ENV_SQL_ENDPOINT} to \
         a Postgres URL, and run again; everything else is served"
    )
}

/// The Postgres tried when the environment names none: [`DEFAULT_URL`], or
/// what [`ENV_DEFAULT_POSTGRES`] gives instead (a URL as it is; `host:port`
/// with the default URL's credentials and database).
fn default_url(named: Option<&str>) -> String {
    match named {
        None => DEFAULT_URL.to_owned(),
        Some(url) if url.contains("://") => url.to_owned(),
        Some(place) => DEFAULT_URL.replacen("localhost:5432", place, 1),
    }
}

/// What is done for the session's SQL databases, once no Postgres is named.
#[derive(Debug, PartialEq, Eq)]
enum Choice {
    /// A Postgres answers at the default place: it is used.
    Found(Answer),
    /// None does (`unanswered` says why), and one can be started from the
    /// programs in `bin`, as `account` when not as this process's user.
    Start { unanswered: String, bin: PathBuf, account: Option<Account> },
    /// None does, and none can be started.
    Off { unanswered: String, why: Off },
}

/// Why no Postgres can be started.
#[derive(Debug, PartialEq, Eq)]
enum Off {
    /// No `initdb` and `postgres` were found.
    NotInstalled,
    /// They were found, in this folder, and there is no one to run them as.
    NoAccount(PathBuf),
}

/// Chooses from the default place's answer, looking for the programs (and
/// the account to run them as) only when nothing answers there: a machine
/// with a Postgres of its own is never searched.
fn choose(
    probed: Result<Answer, String>,
    binaries: impl FnOnce() -> Option<PathBuf>,
    account: impl FnOnce() -> Result<Option<Account>, ()>,
) -> Choice {
    let unanswered = match probed {
        Ok(answer) => return Choice::Found(answer),
        Err(why) => why,
    };
    match binaries() {
        None => Choice::Off { unanswered, why: Off::NotInstalled },
        Some(bin) => match account() {
            Ok(account) => Choice::Start { unanswered, bin, account },
            Err(()) => Choice::Off { unanswered, why: Off::NoAccount(bin) },
        },
    }
}

/// A user and group id to run the server as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Account {
    uid: u32,
    gid: u32,
}

/// Whom the server runs as, given this process's effective user: itself
/// (`None`) unless that is root, which Postgres refuses; then the account
/// `lookup` finds, and `Err` when it finds none.
fn run_as(euid: u32, lookup: impl FnOnce() -> Option<Account>) -> Result<Option<Account>, ()> {
    if euid != 0 {
        return Ok(None);
    }
    lookup().map(Some).ok_or(())
}

/// The user `name`'s ids, if there is such a user.
fn account(name: &str) -> Option<Account> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: a zeroed passwd is a valid out-parameter; getpwnam_r fills it
    // with pointers into `buffer`, which outlives every read of it here.
    unsafe {
        let mut entry: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let mut buffer = vec![0 as libc::c_char; 16 * 1024];
        let status = libc::getpwnam_r(name.as_ptr(), &mut entry, buffer.as_mut_ptr(), buffer.len(), &mut found);
        (status == 0 && !found.is_null()).then_some(Account { uid: entry.pw_uid, gid: entry.pw_gid })
    }
}

/// The folder holding both `initdb` and `postgres`: the first on `path`
/// (the `PATH` variable's value), else the newest version's under
/// `installed`.
fn find_binaries(path: Option<&std::ffi::OsStr>, installed: &Path) -> Option<PathBuf> {
    let both = |dir: &Path| is_executable(&dir.join("initdb")) && is_executable(&dir.join("postgres"));
    let on_path: Vec<PathBuf> = path.map(|path| std::env::split_paths(path).collect()).unwrap_or_default();
    if let Some(dir) = on_path.into_iter().find(|dir| both(dir)) {
        return Some(dir);
    }
    let mut versions: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(installed)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            // "17", "9.6": compared as numbers, so that 10 is newer than 9.6.
            let version = name.split('.').map(str::parse).collect::<Result<Vec<u32>, _>>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| both(bin))
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// A URL with its password, if any, as `***`: for the log, which says which
/// Postgres is used without saying how to get into it.
fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| if pair.starts_with("password=") { "password=***".to_owned() } else { pair.to_owned() })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// Where a Postgres URL points, and whom it connects as: what the probe
/// needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    place: Place,
    user: String,
    database: String,
}

/// A server's address.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Tcp {
        host: String,
        port: u16,
    },
    /// The server's Unix socket (`<folder>/.s.PGSQL.<port>`).
    Socket(PathBuf),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Place::Tcp { host, port } => write!(f, "{host}:{port}"),
            Place::Socket(path) => write!(f, "{}", path.display()),
        }
    }
}

impl Target {
    /// Reads a `postgres://` (or `postgresql://`) URL as libpq does, as far
    /// as a probe needs: `user:password@host:port/database`, where the
    /// query's `host`, `port`, `user` and `dbname` win, a `host` that is a
    /// folder is a Unix socket's, and the first of several hosts is taken.
    fn parse(url: &str) -> Result<Target, String> {
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or("not a postgres:// URL")?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hosts) = authority.rsplit_once('@').unwrap_or(("", authority));
        let decode = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
        let mut user = decode(userinfo.split_once(':').map_or(userinfo, |(user, _)| user));
        let mut database = decode(database);
        let first = hosts.split(',').next().unwrap_or_default();
        let (mut host, mut port) = match first.strip_prefix('[') {
            Some(v6) => {
                let (host, after) = v6.split_once(']').ok_or("an IPv6 host without its closing `]`")?;
                (host.to_owned(), after.strip_prefix(':').unwrap_or_default().to_owned())
            }
            None => match first.rsplit_once(':') {
                Some((host, port)) => (decode(host), port.to_owned()),
                None => (decode(first), String::new()),
            },
        };
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            match key {
                "host" => host = value.split(',').next().unwrap_or_default().to_owned(),
                "port" => port = value.split(',').next().unwrap_or_default().to_owned(),
                "user" => user = value,
                "dbname" => database = value,
                _ => {}
            }
        }
        let port: u16 = if port.is_empty() { 5432 } else { port.parse().map_err(|_| format!("port {port:?}"))? };
        // libpq's defaults: the user the URL names none of is the process's,
        // for which `celerity dev`'s is the one that makes sense here.
        if user.is_empty() {
            user = CELERITY.to_owned();
        }
        if database.is_empty() {
            database = user.clone();
        }
        let place = if host.starts_with('/') {
            Place::Socket(Path::new(&host).join(format!(".s.PGSQL.{port}")))
        } else {
            Place::Tcp { host: if host.is_empty() { "localhost".to_owned() } else { host }, port }
        };
        Ok(Target { place, user, database })
    }
}

/// How a Postgres answered a startup message.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// It asked for a password (or let the user in): it takes connections.
    Takes,
    /// It refused the user or database, with this error of its own.
    Refuses(String),
}

impl Answer {
    /// What the log line choosing it adds.
    fn remark(&self) -> String {
        match self {
            Answer::Takes => String::new(),
            Answer::Refuses(why) => {
                format!("; it refused the probe ({why}), so the handler's queries fail until it takes them")
            }
        }
    }
}

/// [`probe`] off the runtime's threads, within [`PROBE`] for each address.
async fn probe_async(target: Target) -> Result<Answer, String> {
    tokio::task::spawn_blocking(move || probe(&target, PROBE))
        .await
        .unwrap_or_else(|e| Err(format!("the probe failed: {e}")))
}

/// Sends `target`'s server a startup message as its user for its database,
/// and reads how it answers; `Err` says why it does not answer as Postgres.
fn probe(target: &Target, within: Duration) -> Result<Answer, String> {
    let mut wire = Wire::connect(&target.place, within)?;
    wire.startup(&target.user, &target.database)
}

/// A connection speaking the little of the Postgres protocol (version 3)
/// this module needs: the startup, a simple query, and the goodbye.
struct Wire {
    stream: Box<dyn Stream>,
}

/// A byte stream to a server: TCP or a Unix socket.
trait Stream: std::io::Read + std::io::Write + Send {}
impl<T: std::io::Read + std::io::Write + Send> Stream for T {}

impl Wire {
    /// Connects to `place`, each read and write bounded by `within`.
    fn connect(place: &Place, within: Duration) -> Result<Wire, String> {
        let stream: Box<dyn Stream> = match place {
            Place::Socket(path) => {
                let stream = std::os::unix::net::UnixStream::connect(path).map_err(|e| e.to_string())?;
                stream
                    .set_read_timeout(Some(within))
                    .and_then(|()| stream.set_write_timeout(Some(within)))
                    .map_err(|e| e.to_string())?;
                Box::new(stream)
            }
            Place::Tcp { host, port } => {
                use std::net::ToSocketAddrs as _;
                let addresses = (host.as_str(), *port).to_socket_addrs().map_err(|e| format!("{host}: {e}"))?;
                let mut last = format!("{host} has no address");
                let mut connected = None;
                for address in addresses {
                    match std::net::TcpStream::connect_timeout(&address, within) {
                        Ok(stream) => {
                            connected = Some(stream);
                            break;
                        }
                        Err(error) => last = error.to_string(),
                    }
                }
                let stream = connected.ok_or(last)?;
                stream
                    .set_read_timeout(Some(within))
                    .and_then(|()| stream.set_write_timeout(Some(within)))
                    .map_err(|e| e.to_string())?;
                Box::new(stream)
            }
        };
        Ok(Wire { stream })
    }

    /// Sends the startup message, and reads until the server asks for a
    /// password, is ready, or refuses. Leaves the connection ready for a
    /// query when it let the user in.
    fn startup(&mut self, user: &str, database: &str) -> Result<Answer, String> {
        let mut body = 196_608_u32.to_be_bytes().to_vec(); // protocol 3.0
        for (key, value) in [("user", user), ("database", database)] {
            for text in [key, value] {
                body.extend_from_slice(text.as_bytes());
                body.push(0);
            }
        }
        body.push(0);
        let mut message = ((body.len() + 4) as u32).to_be_bytes().to_vec();
        message.extend(body);
        self.stream.write_all(&message).map_err(|e| e.to_string())?;
        loop {
            let (kind, body) = self.read().map_err(|why| match why {
                // A server that closes the connection at once is not one
                // that takes it, whatever it is.
                Read::Closed => "it closed the connection without answering".to_owned(),
                Read::Error(why) => why,
            })?;
            match kind {
                // Authentication: 0 is "in", anything else asks for proof.
                b'R' if body.get(..4) == Some(&[0, 0, 0, 0]) => continue,
                b'R' => return Ok(Answer::Takes),
                b'E' => return Ok(Answer::Refuses(error_text(&body))),
                b'Z' => return Ok(Answer::Takes),
                // Parameter status, the cancel key, notices.
                b'S' | b'K' | b'N' => continue,
                other => return Err(format!("it answered, but not as Postgres does (message {:?})", other as char)),
            }
        }
    }

    /// Runs `sql` as a simple query, failing with the server's error.
    fn query(&mut self, sql: &str) -> Result<(), String> {
        let mut message = vec![b'Q'];
        message.extend(((sql.len() + 5) as u32).to_be_bytes());
        message.extend_from_slice(sql.as_bytes());
        message.push(0);
        self.stream.write_all(&message).map_err(|e| e.to_string())?;
        let mut failed = None;
        loop {
            match self.read() {
                Ok((b'E', body)) => failed = Some(error_text(&body)),
                Ok((b'Z', _)) => return failed.map_or(Ok(()), Err),
                Ok(_) => continue,
                Err(Read::Closed) => return Err("the server closed the connection".to_owned()),
                Err(Read::Error(why)) => return Err(why),
            }
        }
    }

    /// One message: its type and body.
    fn read(&mut self) -> Result<(u8, Vec<u8>), Read> {
        let mut head = [0; 5];
        match self.stream.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(Read::Closed),
            Err(e) => return Err(Read::Error(e.to_string())),
        }
        let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        // A length Postgres never sends for these messages: not Postgres.
        if !(4..=1 << 20).contains(&length) {
            return Err(Read::Error(format!("it answered, but not as Postgres does (a length of {length})")));
        }
        let mut body = vec![0; length - 4];
        self.stream.read_exact(&mut body).map_err(|e| Read::Error(e.to_string()))?;
        Ok((head[0], body))
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // Terminate, so that the server does not log a lost connection.
        let _ = self.stream.write_all(&[b'X', 0, 0, 0, 4]);
    }
}

/// Why no message was read.
enum Read {
    Closed,
    Error(String),
}

/// An `ErrorResponse`'s message and SQLSTATE: `message (SQLSTATE code)`.
fn error_text(body: &[u8]) -> String {
    let mut message = String::new();
    let mut code = String::new();
    for field in body.split(|&b| b == 0).filter(|field| !field.is_empty()) {
        let text = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'M' => message = text,
            b'C' => code = text,
            _ => {}
        }
    }
    format!("{message} (SQLSTATE {code})")
}

/// The SQLSTATE of "the database system is starting up".
const STARTING_UP: &str = "(SQLSTATE 57P03)";

/// A Postgres started for the session: stopped when dropped, and by the
/// kernel should `celerity-dev` die first; its folder (cluster, socket,
/// output) removed after it has stopped.
struct Server {
    child: Child,
    /// What the handler connects to.
    url: String,
    /// The cluster's folder, for the log.
    data: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Makes a cluster with `bin`'s `initdb`, starts `bin`'s `postgres` on
    /// it on a free loopback port (as `account`, when given), waits until
    /// it lets its superuser in, and creates the database `celerity`.
    async fn start(bin: &Path, account: Option<Account>) -> Result<Server, String> {
        let postgres = bin.join("postgres");
        let temp = std::env::temp_dir();
        remove_abandoned(&temp);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{DIR_PREFIX}{}-", std::process::id()))
            .tempdir_in(&temp)
            .map_err(|e| format!("could not make a folder for {}: {e}", postgres.display()))?;
        if let Some(Account { uid, gid }) = account {
            // The server's user writes the cluster and its socket here.
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| format!("could not give {} to the user {SERVER_USER}: {e}", dir.path().display()))?;
        }
        let data = dir.path().join("data");
        let output = dir.path().join("output.log");
        initdb(bin, dir.path(), &data, &output, account).await?;

        let launch = Launch {
            program: &postgres,
            serves: "SQL databases",
            answering: "taking connections",
            answer: "take connections",
            within: START,
            output: &output,
        };
        let (port, child) =
            launch.on_a_free_port(async |port| spawn(&launch, dir.path(), &data, port, account).await).await?;
        let socket = dir.path().join(format!(".s.PGSQL.{port}"));
        let url = format!("postgres://{CELERITY}:{CELERITY}@127.0.0.1:{port}/{CELERITY}?sslmode=disable");
        let server = Server { child, url, data, _dir: dir };
        // As the superuser, over the socket initdb trusts.
        let create = move || {
            let mut wire = Wire::connect(&Place::Socket(socket), START)?;
            match wire.startup(CELERITY, "postgres")? {
                Answer::Refuses(why) => Err(why),
                Answer::Takes => wire.query(&format!("CREATE DATABASE {CELERITY}")),
            }
            .map(|()| server)
        };
        tokio::task::spawn_blocking(create)
            .await
            .map_err(|e| e.to_string())
            .and_then(|created| created)
            .map_err(|why| format!("could not create the database {CELERITY} in the session's Postgres: {why}"))
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGQUIT: the immediate shutdown, which ends the server's own
        // processes too; nothing is kept, so nothing needs a clean stop.
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) has no memory-safety preconditions.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGQUIT) };
        }
        let deadline = Instant::now() + STOP;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        log::line(&format!("stopped the session's Postgres, pid {}", self.child.id()));
    }
}

/// How the name of a started server's folder begins, before the id of the
/// `celerity-dev` that made it: how a later session knows a folder left by
/// one that was killed (nothing removes it then, and a cluster is tens of
/// megabytes).
const DIR_PREFIX: &str = "celerity-dev-postgres-";

/// Removes the folders in `temp` that sessions which have ended left.
fn remove_abandoned(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = abandoned_by(&name.to_string_lossy()) else { continue };
        // A process of that id, whoever it is now, may still use it.
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The id of the `celerity-dev` whose folder `name` is, if it is one.
fn abandoned_by(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(DIR_PREFIX)?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok()
}

/// Runs `initdb` for a cluster in `data` whose superuser is `celerity`
/// with the password `celerity`: password (SCRAM) authentication over TCP,
/// as a deployed database asks, and trust over the socket in `dir`, which
/// only this session's user (and the server's) can reach.
async fn initdb(bin: &Path, dir: &Path, data: &Path, output: &Path, account: Option<Account>) -> Result<(), String> {
    let initdb = bin.join("initdb");
    let pwfile = dir.join("pwfile");
    std::fs::write(&pwfile, format!("{CELERITY}\n"))
        .map_err(|e| format!("could not write {}: {e}", pwfile.display()))?;
    if let Some(Account { uid, gid }) = account {
        std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid))
            .map_err(|e| format!("could not give {} to the user {SERVER_USER}: {e}", pwfile.display()))?;
    }
    let file = std::fs::File::create(output).map_err(|e| format!("could not write {}: {e}", output.display()))?;
    let mut command = Command::new(&initdb);
    command
        .arg("-D")
        .arg(data)
        .arg(format!("--username={CELERITY}"))
        .arg(format!("--pwfile={}", pwfile.display()))
        .args(["--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C"])
        // The cluster is thrown away with the session: not worth an fsync.
        .arg("--no-sync")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file);
    as_account(&mut command, account);
    ends_with_this_process(&mut command, libc::SIGKILL);
    let mut child = command.spawn().map_err(|e| format!("could not run {}: {e}", initdb.display()))?;
    let deadline = Instant::now() + START;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} did not finish within {} s; its output:\n{}",
                initdb.display(),
                START.as_secs(),
                tail(output)
            ));
        }
        // initdb takes a second or two: this is how often it is looked at.
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let _ = std::fs::remove_file(&pwfile);
    if !status.success() {
        return Err(format!(
            "{}, run for the session's SQL databases, failed ({status}); its output:\n{}",
            initdb.display(),
            tail(output)
        ));
    }
    Ok(())
}

/// Runs `command` as `account`, when given: Postgres refuses to run as root.
fn as_account(command: &mut Command, account: Option<Account>) {
    if let Some(Account { uid, gid }) = account {
        // Setting the uid as root also drops the supplementary groups.
        command.uid(uid).gid(gid);
    }
}

/// Starts the launch's `postgres` on the cluster in `data`, listening on
/// 127.0.0.1:`port` and a socket in `dir`, its output appended to the
/// launch's (after initdb's), and polls the socket until the server lets
/// its superuser in.
async fn spawn(
    launch: &Launch<'_>,
    dir: &Path,
    data: &Path,
    port: u16,
    account: Option<Account>,
) -> Result<Child, Failure> {
    let output = std::fs::OpenOptions::new().append(true).create(true).open(launch.output).map_err(Failure::Spawn)?;
    let mut command = Command::new(launch.program);
    command
        .arg("-D")
        .arg(data)
        .args(["-p", &port.to_string(), "-h", "127.0.0.1", "-k"])
        .arg(dir)
        // Nothing is kept: durability is not worth the disk writes.
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
        .current_dir(dir);
    as_account(&mut command, account);
    let socket = Place::Socket(dir.join(format!(".s.PGSQL.{port}")));
    // SIGQUIT, as on drop: the postmaster then ends its own processes.
    launch
        .spawn(command, output, libc::SIGQUIT, || {
            match Wire::connect(&socket, PROBE).and_then(|mut wire| wire.startup(CELERITY, "postgres")) {
                Ok(Answer::Takes) => Poll::Ready,
                // Not yet: a server still starting up, or no socket.
                Ok(Answer::Refuses(why)) if why.ends_with(STARTING_UP) => Poll::NotYet(why),
                Ok(Answer::Refuses(why)) => Poll::Failed(why),
                Err(why) => Poll::NotYet(why),
            }
        })
        .await
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;
    use crate::session_server::PORT_ATTEMPTS;
    use crate::session_server::free_port;
    use crate::session_server::testing::{script, started};

    #[test]
    fn the_default_place_is_localhost_unless_another_is_named() {
        assert_eq!(default_url(None), DEFAULT_URL);
        assert_eq!(
            default_url(Some("127.0.0.1:6543")),
            "postgres://celerity:celerity@127.0.0.1:6543/celerity?sslmode=disable"
        );
        assert_eq!(default_url(Some("postgres://u:p@db:1/x")), "postgres://u:p@db:1/x");
    }

    #[test]
    fn urls_are_read_as_libpq_reads_them() {
        let tcp = |host: &str, port| Place::Tcp { host: host.to_owned(), port };
        let target = Target::parse(DEFAULT_URL).unwrap();
        assert_eq!(
            target,
            Target { place: tcp("localhost", 5432), user: "celerity".into(), database: "celerity".into() }
        );
        let target = Target::parse("postgresql://ada%40x:s%3Acret@[::1]:6000,other:7000/my%20db").unwrap();
        assert_eq!(target, Target { place: tcp("::1", 6000), user: "ada@x".into(), database: "my db".into() });
        assert_eq!(target.place.to_string(), "[::1]:6000");
        let target = Target::parse("postgres://u@h/d?host=%2Frun%2Fpg&port=5433&dbname=e&user=v").unwrap();
        assert_eq!(target.place, Place::Socket(PathBuf::from("/run/pg/.s.PGSQL.5433")));
        assert_eq!((target.user.as_str(), target.database.as_str()), ("v", "e"));
        // No user: `celerity dev`'s; no database: the user's.
        let target = Target::parse("postgres://").unwrap();
        assert_eq!(
            target,
            Target { place: tcp("localhost", 5432), user: "celerity".into(), database: "celerity".into() }
        );
        assert_eq!(Target::parse("postgres://h:x/d").unwrap_err(), "port \"x\"");
        assert_eq!(Target::parse("mysql://h/d").unwrap_err(), "not a postgres:// URL");
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(shown(DEFAULT_URL), "postgres://celerity:***@localhost:5432/celerity?sslmode=disable");
        assert_eq!(shown("postgres://a:b@c@h/d"), "postgres://a:***@h/d");
        assert_eq!(shown("postgres://u@h?password=x&sslmode=require"), "postgres://u@h?password=***&sslmode=require");
        assert_eq!(shown("postgres://h:1/d"), "postgres://h:1/d");
    }

    fn no_search() -> Option<PathBuf> {
        panic!("looked for programs although a Postgres answers")
    }

    fn no_lookup() -> Result<Option<Account>, ()> {
        panic!("looked for an account without programs to run")
    }

    #[test]
    fn a_postgres_that_answers_is_used_before_anything_is_looked_for() {
        assert_eq!(choose(Ok(Answer::Takes), no_search, no_lookup), Choice::Found(Answer::Takes));
        let refusal = Answer::Refuses("role \"celerity\" does not exist (SQLSTATE 28000)".into());
        assert_eq!(choose(Ok(refusal.clone()), no_search, no_lookup), Choice::Found(refusal));
    }

    #[test]
    fn otherwise_one_is_started_from_the_programs_found_else_sql_is_off() {
        let bin = PathBuf::from("/usr/lib/postgresql/17/bin");
        let refused = || Err("connection refused".to_owned());
        let account = Account { uid: 101, gid: 104 };
        assert_eq!(
            choose(refused(), || Some(bin.clone()), || Ok(Some(account))),
            Choice::Start { unanswered: "connection refused".into(), bin: bin.clone(), account: Some(account) }
        );
        assert_eq!(
            choose(refused(), || None, no_lookup),
            Choice::Off { unanswered: "connection refused".into(), why: Off::NotInstalled }
        );
        assert_eq!(
            choose(refused(), || Some(bin.clone()), || Err(())),
            Choice::Off { unanswered: "connection refused".into(), why: Off::NoAccount(bin) }
        );
    }

    #[test]
    fn without_a_postgres_the_warning_says_what_fails_and_what_to_install() {
        let not_installed = warning("`notesDatabase`", "localhost:5432", "connection refused", &Off::NotInstalled);
        assert_eq!(
            not_installed,
            "warning: the SQL database(s) `notesDatabase` cannot be reached, and the handler's queries to them \
             fail: CELERITY_LOCAL_SQL_DATABASE_ENDPOINT names no Postgres, none answers at localhost:5432 \
             (connection refused), and neither initdb and postgres are on PATH nor in /usr/lib/postgresql/*/bin. \
             Install PostgreSQL's server (the postgresql package; Homebrew's postgresql), or start a Postgres at \
             localhost:5432 with the user, password and database celerity, or set \
             CELERITY_LOCAL_SQL_DATABASE_ENDPOINT to a Postgres URL, and run again; everything else is served"
        );
        let bin = PathBuf::from("/usr/lib/postgresql/17/bin");
        let no_account = warning("`a`, `b`", "localhost:5432", "refused", &Off::NoAccount(bin));
        assert!(
            no_account.contains(
                "the initdb and postgres in /usr/lib/postgresql/17/bin cannot be run: celerity-dev runs as root"
            ) && no_account.contains("Create that user (useradd --system postgres)"),
            "{no_account}"
        );
    }

    #[test]
    fn root_runs_the_server_as_another_user_and_anyone_else_as_themselves() {
        let account = Account { uid: 101, gid: 104 };
        assert_eq!(run_as(1000, || panic!("no lookup for a user who is not root")), Ok(None));
        assert_eq!(run_as(0, || Some(account)), Ok(Some(account)));
        assert_eq!(run_as(0, || None), Err(()));
    }

    #[test]
    fn the_postgres_account_is_looked_up() {
        assert_eq!(account("root"), Some(Account { uid: 0, gid: 0 }));
        assert_eq!(account("no-such-user-of-celerity-dev"), None);
    }

    fn make(path: &Path, mode: u32) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn the_programs_are_found_on_path_else_the_newest_installed() {
        let dir = tempfile::tempdir().unwrap();
        let (on_path, installed) = (dir.path().join("bin"), dir.path().join("lib"));
        let path = std::env::join_paths([&on_path]).unwrap();
        assert_eq!(find_binaries(Some(&path), &installed), None);
        // Versions compare as numbers: 10 is newer than 9.6.
        for version in ["9.6", "10"] {
            make(&installed.join(version).join("bin/initdb"), 0o755);
            make(&installed.join(version).join("bin/postgres"), 0o755);
        }
        // Without its server, a version is not one to run; nor is a folder
        // that is not a version.
        make(&installed.join("17/bin/initdb"), 0o755);
        make(&installed.join("latest/bin/initdb"), 0o755);
        make(&installed.join("latest/bin/postgres"), 0o755);
        assert_eq!(find_binaries(Some(&path), &installed), Some(installed.join("10/bin")));
        assert_eq!(find_binaries(None, &installed), Some(installed.join("10/bin")));
        // Not executable: not a program.
        make(&on_path.join("initdb"), 0o755);
        make(&on_path.join("postgres"), 0o644);
        assert_eq!(find_binaries(Some(&path), &installed), Some(installed.join("10/bin")));
        make(&on_path.join("postgres"), 0o755);
        assert_eq!(find_binaries(Some(&path), &installed), Some(on_path));
    }

    /// A server on loopback that reads the startup message and answers
    /// `answer`; its address.
    fn answering(answer: &'static [u8]) -> Target {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut length = [0; 4];
            stream.read_exact(&mut length).unwrap();
            let mut rest = vec![0; u32::from_be_bytes(length) as usize - 4];
            stream.read_exact(&mut rest).unwrap();
            assert_eq!(&rest[4..], b"user\0celerity\0database\0notes\0\0");
            stream.write_all(answer).unwrap();
        });
        Target {
            place: Place::Tcp { host: "127.0.0.1".into(), port },
            user: "celerity".into(),
            database: "notes".into(),
        }
    }

    #[test]
    fn a_server_answers_when_it_answers_as_postgres() {
        // AuthenticationSASL: it asks for proof.
        let sasl = answering(b"R\0\0\0\x17\0\0\0\x0aSCRAM-SHA-256\0\0");
        assert_eq!(probe(&sasl, PROBE), Ok(Answer::Takes));
        // Trust: in, then parameters, then ready.
        let trust = answering(b"R\0\0\0\x08\0\0\0\0S\0\0\0\x08a\0b\0Z\0\0\0\x05I");
        assert_eq!(probe(&trust, PROBE), Ok(Answer::Takes));
        let refusal = answering(b"E\0\0\0\x34SFATAL\0C3D000\0Mdatabase \"notes\" does not exist\0\0");
        assert_eq!(
            probe(&refusal, PROBE),
            Ok(Answer::Refuses("database \"notes\" does not exist (SQLSTATE 3D000)".into()))
        );
        let http = answering(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        assert!(probe(&http, PROBE).unwrap_err().contains("not as Postgres does"));
        let silent = answering(b"");
        assert_eq!(probe(&silent, PROBE), Err("it closed the connection without answering".into()));
        let free = free_port().unwrap();
        let nobody = Target { place: Place::Tcp { host: "127.0.0.1".into(), port: free }, ..silent };
        assert!(probe(&nobody, PROBE).unwrap_err().contains("refused"));
    }

    #[test]
    fn folders_are_known_by_the_session_that_made_them() {
        assert_eq!(abandoned_by("celerity-dev-postgres-4242-AbC123"), Some(4242));
        assert_eq!(abandoned_by("celerity-dev-postgres-AbC123"), None);
        assert_eq!(abandoned_by("celerity-dev-redis-4242-AbC123"), None);
        let temp = tempfile::tempdir().unwrap();
        let mine = temp.path().join(format!("{DIR_PREFIX}{}-x", std::process::id()));
        // No process has the largest pid there is: an ended session's.
        let ended = temp.path().join(format!("{DIR_PREFIX}{}-x", u32::MAX));
        let other = temp.path().join("something-else");
        for dir in [&mine, &ended, &other] {
            std::fs::create_dir_all(dir.join("data")).unwrap();
        }
        remove_abandoned(temp.path());
        assert!(mine.exists() && other.exists() && !ended.exists());
    }

    /// A folder with `initdb` and `postgres` scripts.
    fn programs(dir: &Path, initdb: &str, postgres: &str) -> PathBuf {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for (name, body) in [("initdb", initdb), ("postgres", postgres)] {
            script(&bin.join(name), body);
        }
        bin
    }

    fn start(bin: &Path) -> Result<Server, String> {
        started(async || Server::start(bin, None).await)
    }

    #[test]
    fn an_initdb_that_fails_is_an_error_quoting_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let bin = programs(dir.path(), "echo 'initdb: error: invalid locale settings'; exit 1", "exit 0");
        let error = start(&bin).err().expect("a cluster initdb failed to make is not used");
        assert!(error.contains("initdb, run for the session's SQL databases, failed (exit status: 1)"), "{error}");
        assert!(error.ends_with("its output:\ninitdb: error: invalid locale settings"), "{error}");
    }

    #[test]
    fn a_server_that_exits_is_an_error_quoting_its_output_and_one_that_cannot_bind_is_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let bin = programs(dir.path(), "exit 0", "echo 'FATAL:  data directory has wrong ownership'; exit 1");
        let error = start(&bin).err().expect("a server that exits is not used");
        assert!(error.contains("exited (exit status: 1) before taking connections"), "{error}");
        assert!(error.ends_with("its output:\nFATAL:  data directory has wrong ownership"), "{error}");

        let attempts = dir.path().join("attempts");
        let script = format!(
            "echo x >> '{}'; echo 'LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use'; exit 1",
            attempts.display()
        );
        let bin = programs(dir.path(), "exit 0", &script);
        let error = start(&bin).err().expect("a server that exits is not used");
        assert!(error.ends_with("Address already in use"), "{error}");
        assert_eq!(std::fs::read_to_string(&attempts).unwrap().lines().count(), PORT_ATTEMPTS);
    }
}
