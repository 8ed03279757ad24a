//! What the SQL database tests share: a deployment that recorded a
//! database, and a pool expected not to connect. Not every test file uses
//! every item.
#![allow(dead_code)]

use celerity::config::{Configuration, Values};
use celerity::resources::Links;
use celerity::resources::ResourceError;
use celerity::resources::sql::SqlDatabase;

const LINKS: &[u8] = br#"{"ledger": {"type": "sqlDatabase", "configKey": "ledgerDb"}}"#;

/// The configuration of a deployment that recorded `values` for the
/// database `ledger` (under the key `ledgerDb`, each value's name its
/// suffix), on `platform`, with `env` set.
pub fn configuration(platform: &str, values: &[(&str, &str)], env: &[(&str, &str)]) -> Configuration {
    let links = Links::from_json(LINKS, "the test's links").unwrap();
    let values: Vec<(String, String)> =
        values.iter().map(|(name, value)| (format!("ledgerDb{name}"), value.to_string())).collect();
    let mut builder = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs(values))
        .env("CELERITY_PLATFORM", platform);
    for (name, value) in env {
        builder = builder.env(name, value);
    }
    builder.build()
}

/// The database `database` of `engine` on the test server at `port`, as an
/// AWS deployment records it (user and password `celerity`, no TLS), with
/// `extra` settings over those.
pub fn recorded(engine: &str, port: u16, database: &str, extra: &[(&str, &str)]) -> SqlDatabase {
    let port = port.to_string();
    let mut values = vec![
        ("_engine", engine),
        ("_host", "127.0.0.1"),
        ("_port", port.as_str()),
        ("_user", "celerity"),
        ("_password", "celerity"),
        ("_database", database),
        ("_ssl", "false"),
    ];
    for (name, value) in extra {
        values.retain(|(existing, _)| existing != name);
        values.push((name, value));
    }
    configuration("aws", &values, &[]).resources().handle::<SqlDatabase>(None).unwrap()
}

/// The error of a pool expected not to connect.
pub fn refused<P>(result: Result<P, ResourceError>) -> ResourceError {
    match result {
        Ok(_) => panic!("the pool connected, and was expected not to"),
        Err(error) => error,
    }
}
