//! The notes example's SQL database, end to end over the real protocol and
//! a real Postgres: `POST /notes` inserts a note through the writer pool of
//! the blueprint's `notesDatabase`, `GET /notes/{id}` reads it back through
//! the reader pool, and an id with no note is a `404`. `celerity-dev run`
//! gives the handler the session's Postgres as
//! `CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`, and its startup log says which:
//! the one that variable names, else one answering at the default place,
//! else one it starts for the session and stops with it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

use common::{Dev, PATIENCE, dev_command, example_binary, http, root, run_to_exit};

fn checked_in() -> PathBuf {
    root().join("examples/notes/app.blueprint.yaml")
}

/// `celerity-dev run notes` with the checked-in blueprint; the caller adds
/// where its Postgres is.
fn notes_command() -> Command {
    let mut command = dev_command(&example_binary("notes", "CELERITY_DEV_E2E_NOTES"));
    command
        .arg("--blueprint")
        .arg(checked_in())
        .env("RUST_LOG", "info")
        // The session's Postgres is what a test gives, not the machine's.
        .env_remove("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT")
        .env_remove("CELERITY_DEV_DEFAULT_POSTGRES");
    command
}

/// A database of the test's own in the test process's Postgres, so that
/// the tests of one process, which run at once, each have a `notes` table
/// of their own; its name and the URL of the user `celerity` on it.
fn own_database() -> (String, String) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let name = format!("notes_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let postgres = celerity_testkit::servers::postgres();
    postgres.psql(&format!("CREATE DATABASE {name}"));
    let url = postgres.url("celerity", "celerity", &name);
    (name, url)
}

/// A Postgres URL where none can answer, whatever the machine runs: a
/// socket in a folder that does not exist.
fn nowhere(dir: &Path) -> String {
    format!("postgres://celerity:celerity@/celerity?host={}", dir.join("no-postgres").display())
}

/// `POST /notes` with `text`, expecting a 201; the note.
fn post_note(dev: &Dev, text: &str) -> Value {
    let created = http(dev.port, "POST", "/notes", &json!({"text": text}).to_string());
    assert_eq!(created.status, 201, "{}\n{}", created.body, dev.text());
    let note = created.json();
    let id = note["id"].as_i64().unwrap_or_else(|| panic!("no id: {note}"));
    assert_eq!(note, json!({"id": id, "text": text}));
    assert_eq!(created.header("location"), Some(format!("/notes/{id}")), "{}", created.head);
    note
}

/// Posts a note, reads it back, and asks for one that is not there.
fn write_and_read_back(dev: &Dev) -> Value {
    let note = post_note(dev, "buy milk");
    let id = note["id"].as_i64().unwrap();
    let read = http(dev.port, "GET", &format!("/notes/{id}"), "");
    assert_eq!(read.status, 200, "{}\n{}", read.body, dev.text());
    assert_eq!(read.json(), note);

    let second = post_note(dev, "and bread");
    assert!(second["id"].as_i64().unwrap() > id, "{second}");

    let missing = http(dev.port, "GET", "/notes/987654321", "");
    assert_eq!(missing.status, 404, "{}\n{}", missing.body, dev.text());
    assert_eq!(missing.json()["message"], "no note 987654321", "{}", missing.body);
    let empty = http(dev.port, "POST", "/notes", r#"{"text": "  "}"#);
    assert_eq!(empty.status, 400, "{}", empty.body);
    note
}

#[test]
fn a_note_written_over_http_is_read_back_from_the_postgres_the_environment_names() {
    let (database, url) = own_database();
    let mut command = notes_command();
    command.env("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT", &url);
    let mut dev = Dev::spawn(command);
    let port = celerity_testkit::servers::postgres().port();
    let line = dev.wait_for("using the Postgres CELERITY_LOCAL_SQL_DATABASE_ENDPOINT names", PATIENCE);
    assert!(
        line.contains(&format!("postgres://celerity:***@127.0.0.1:{port}/{database}"))
            && line.contains("for the SQL database(s) `notesDatabase`"),
        "{line}"
    );
    assert!(!dev.text().contains("celerity:celerity@"), "the password is not logged:\n{}", dev.text());

    let note = write_and_read_back(&dev);
    // In the database itself, as the handler wrote it.
    let stored = celerity_testkit::servers::postgres()
        .psql(&format!("\\c {database}\nSELECT text, created_at <= now() FROM notes WHERE id = {}", note["id"]));
    assert_eq!(stored, "buy milk|t");
    assert!(!dev.text().contains("warning:"), "{}", dev.text());
}

#[test]
fn a_postgres_answering_at_the_default_place_is_used_when_none_is_named() {
    let (database, url) = own_database();
    // The test's Postgres stands for one on localhost:5432.
    let mut command = notes_command();
    command.env("CELERITY_DEV_DEFAULT_POSTGRES", &url);
    let mut dev = Dev::spawn(command);
    let port = celerity_testkit::servers::postgres().port();
    let line = dev.wait_for("using the Postgres that answers at ", PATIENCE);
    assert!(
        line.contains(&format!("answers at 127.0.0.1:{port} for the SQL database(s) `notesDatabase`"))
            && line.contains(&format!("as postgres://celerity:***@127.0.0.1:{port}/{database}"))
            && line.contains("(CELERITY_LOCAL_SQL_DATABASE_ENDPOINT names none)"),
        "{line}"
    );
    write_and_read_back(&dev);
}

/// The folder with the PostgreSQL server's programs, installed by the test
/// kit if missing.
fn programs() -> PathBuf {
    celerity_testkit::servers::postgres();
    let mut installed: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .collect();
    installed.sort_by_key(|bin| {
        let version = bin.parent().and_then(Path::file_name).map(|v| v.to_string_lossy().into_owned());
        version.and_then(|v| v.split('.').next().and_then(|major| major.parse::<u32>().ok())).unwrap_or(0)
    });
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain(installed.into_iter().rev())
        .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file())
        .expect("initdb and postgres, installed by the test kit, are nowhere")
}

#[test]
fn with_none_named_or_answering_the_session_starts_its_own_postgres_and_stops_it() {
    let folder = programs();
    let dir = tempfile::tempdir().unwrap();
    let mut command = notes_command();
    command.env("CELERITY_DEV_DEFAULT_POSTGRES", nowhere(dir.path())).env("PATH", &folder);
    let mut dev = Dev::spawn(command);
    let needle = format!("started {}", folder.join("postgres").display());
    let started = dev.wait_for(&needle, PATIENCE);
    let pid: u32 = common::number_after(&started, "as pid ");
    assert!(
        started.contains("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT names no Postgres and none answers at ")
            && started.contains(" on postgres://celerity:***@127.0.0.1:")
            && started.contains("/celerity?sslmode=disable for the SQL database(s) `notesDatabase`")
            && started.contains("it stops with the session"),
        "{started}"
    );
    let data = started.split("its data in ").nth(1).and_then(|rest| rest.split(';').next()).unwrap().to_owned();
    assert!(Path::new(&data).join("PG_VERSION").is_file(), "no cluster in {data}: {started}");

    write_and_read_back(&dev);
    assert!(!dev.text().contains("warning:"), "{}", dev.text());

    // The server ends with the session, and its data goes with it.
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { libc::kill(dev.child.id() as libc::pid_t, libc::SIGTERM) };
    dev.wait_for(&format!("stopped the session's Postgres, pid {pid}"), PATIENCE);
    let deadline = Instant::now() + PATIENCE;
    while dev.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "celerity-dev did not exit:\n{}", dev.text());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the session's Postgres outlived it");
    assert!(!Path::new(&data).exists(), "the session's cluster outlived it: {data}");
}

#[test]
fn a_named_postgres_that_does_not_answer_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = notes_command();
    command.env("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT", nowhere(dir.path()));
    let (status, log) = run_to_exit(command);
    assert!(!status.success(), "{log}");
    let shown = nowhere(dir.path()).replace("celerity:celerity@", "celerity:***@");
    assert!(
        log.contains(&format!(
            "could not reach the Postgres at {shown} that CELERITY_LOCAL_SQL_DATABASE_ENDPOINT names"
        )),
        "{log}"
    );
    assert!(!log.contains("started "), "nothing is started without the Postgres: {log}");
}
