//! Serving a blueprint's configuration stores and resource links to the
//! handler, as a local Celerity session does: the links in
//! `CELERITY_RESOURCE_LINKS`, each store described by the
//! `CELERITY_CONFIG_*` variables the SDK discovers, and the session's Redis,
//! which holds its queues, in `CELERITY_REDIS_ENDPOINT`.
//!
//! Where a Valkey is named (`CELERITY_CONFIG_VALKEY_HOST` and
//! `CELERITY_CONFIG_VALKEY_PORT` in the dev runtime's own environment) each
//! store is the JSON of its values at the key of its id there, as `celerity
//! dev` writes it. Otherwise, so that nothing needs to be installed, each
//! store is a JSON file in a folder of the session's own, described as a
//! store of kind `file`, which the SDK reads on any platform.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::blueprint::resources::{self, Declared};
use crate::queues::{ENV_REDIS_ENDPOINT, Redis};

/// What the handler process is given, and what the session says about it.
pub struct Provisioned {
    /// The variables to start the handler with.
    pub env: Vec<(String, String)>,
    /// One line per store and for the links, for the startup log.
    pub lines: Vec<String>,
    /// The folder of the store files, removed with the session.
    _dir: Option<tempfile::TempDir>,
}

/// Where stores are written.
enum Target {
    Valkey { host: String, port: String },
    Files(PathBuf),
}

/// Writes the stores and describes them, the links and the session's
/// Redis (where its queues are) to the handler.
pub fn provision(declared: &Declared, redis: Option<&Redis>) -> Result<Provisioned, String> {
    let mut env: Vec<(String, String)> = vec![("CELERITY_PLATFORM".into(), "local".into())];
    let mut lines = Vec::new();
    if let Some(redis) = redis {
        env.push((ENV_REDIS_ENDPOINT.into(), redis.url().to_owned()));
        lines.push(format!("the session's Redis, where its queues are: {}", redis.shown()));
    }
    if declared.is_empty() {
        return Ok(Provisioned { env, lines, _dir: None });
    }
    let valkey = std::env::var("CELERITY_CONFIG_VALKEY_HOST").ok().filter(|host| !host.is_empty());
    let (target, dir) = match valkey {
        Some(host) => {
            let port = std::env::var("CELERITY_CONFIG_VALKEY_PORT").unwrap_or_else(|_| "6379".into());
            env.push(("CELERITY_CONFIG_VALKEY_HOST".into(), host.clone()));
            env.push(("CELERITY_CONFIG_VALKEY_PORT".into(), port.clone()));
            (Target::Valkey { host, port }, None)
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("celerity-dev-config-")
                .tempdir()
                .map_err(|e| format!("could not make a folder for the configuration stores: {e}"))?;
            (Target::Files(dir.path().to_owned()), Some(dir))
        }
    };

    // Each store is described by name, its namespace being the store's
    // name, as `celerity dev` describes it.
    for store in &declared.configs {
        let prefix = format!("CELERITY_CONFIG_{}", store.store_id.to_uppercase());
        let values = as_text(&store.values);
        let (id, place) = write(&target, &store.store_id, &values)?;
        env.push((format!("{prefix}_STORE_ID"), id));
        if matches!(target, Target::Files(_)) {
            env.push((format!("{prefix}_STORE_KIND"), "file".into()));
        }
        env.push((format!("{prefix}_NAMESPACE"), store.store_id.clone()));
        lines.push(format!(
            "config store {} ({} values, namespace {}): {place}",
            store.resource,
            store.values.len(),
            store.store_id
        ));
    }

    if !declared.links.is_empty() {
        let mut recorded: Map<String, Value> = Map::new();
        for link in &declared.links {
            recorded.insert(link.config_key.clone(), Value::String(link.config_key.clone()));
            recorded.extend(link.recorded_fields().into_iter().map(|(key, value)| (key, Value::String(value))));
        }
        let (id, place) = write(&target, RESOURCES_STORE, &recorded)?;
        env.push(("CELERITY_CONFIG_RESOURCES_STORE_ID".into(), id));
        if matches!(target, Target::Files(_)) {
            env.push(("CELERITY_CONFIG_RESOURCES_STORE_KIND".into(), "file".into()));
        }
        env.push(("CELERITY_RESOURCE_LINKS".into(), resources::links_json(&declared.links)));
        let names: Vec<String> = declared.links.iter().map(|l| format!("{} ({})", l.name, l.kind)).collect();
        lines.push(format!("resource links: {}; their identifiers: {place}", names.join(", ")));
    }
    Ok(Provisioned { env, lines, _dir: dir })
}

/// The id of the store of resource identifiers, as `celerity dev` names it.
const RESOURCES_STORE: &str = "resources";

/// The values as text, as a local session writes them.
fn as_text(values: &Map<String, Value>) -> Map<String, Value> {
    values
        .iter()
        .map(|(key, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (key.clone(), Value::String(text))
        })
        .collect()
}

/// Writes one store, giving the id the handler reads it by and where it is.
fn write(target: &Target, store_id: &str, values: &Map<String, Value>) -> Result<(String, String), String> {
    let json = Value::Object(values.clone()).to_string();
    match target {
        Target::Files(dir) => {
            let path = dir.join(format!("{}.json", file_name(store_id)));
            std::fs::write(&path, json).map_err(|e| format!("could not write {}: {e}", path.display()))?;
            Ok((path.display().to_string(), format!("the file {}", path.display())))
        }
        Target::Valkey { host, port } => {
            let client = redis::Client::open(format!("redis://{host}:{port}/"))
                .map_err(|e| format!("the Valkey at {host}:{port}: {e}"))?;
            let mut connection =
                client.get_connection().map_err(|e| format!("could not reach the Valkey at {host}:{port}: {e}"))?;
            redis::cmd("SET")
                .arg(store_id)
                .arg(json)
                .query::<()>(&mut connection)
                .map_err(|e| format!("could not write {store_id} to the Valkey at {host}:{port}: {e}"))?;
            Ok((store_id.to_owned(), format!("the Valkey at {host}:{port}, key {store_id}")))
        }
    }
}

/// A store id as a file name: what is not a letter, digit, `-` or `_` is `_`.
fn file_name(store_id: &str) -> String {
    store_id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::document::{self, Format};

    fn declared(yaml: &str) -> Declared {
        resources::read(&document::read(yaml, Format::Yaml).unwrap().value).unwrap()
    }

    fn var<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn stores_are_named_by_their_store_and_links_come_with_their_identifiers() {
        let declared = declared(
            "resources:
  appConfig: { type: celerity/config, spec: { name: ordersConfig, values: { CURRENCY: GBP, LIMIT: 5 } } }
  paymentsConfig: { type: celerity/config, spec: { values: { B: true } } }
  ordersQueue: { type: celerity/queue, spec: { name: orders } }
",
        );
        let redis = Redis::at("redis://127.0.0.1:6379/3");
        let provisioned = provision(&declared, Some(&redis)).unwrap();
        let env = &provisioned.env;
        assert_eq!(var(env, "CELERITY_PLATFORM"), Some("local"));
        assert_eq!(var(env, "CELERITY_CONFIG_ORDERSCONFIG_NAMESPACE"), Some("ordersConfig"));
        assert_eq!(var(env, "CELERITY_CONFIG_ORDERSCONFIG_STORE_KIND"), Some("file"));
        let store = std::fs::read_to_string(var(env, "CELERITY_CONFIG_ORDERSCONFIG_STORE_ID").unwrap()).unwrap();
        assert_eq!(store, r#"{"CURRENCY":"GBP","LIMIT":"5"}"#);
        assert_eq!(var(env, "CELERITY_CONFIG_PAYMENTSCONFIG_NAMESPACE"), Some("paymentsConfig"));
        let recorded = std::fs::read_to_string(var(env, "CELERITY_CONFIG_RESOURCES_STORE_ID").unwrap()).unwrap();
        assert_eq!(recorded, r#"{"orders":"orders"}"#);
        assert_eq!(
            var(env, "CELERITY_RESOURCE_LINKS"),
            Some(r#"{"ordersQueue":{"configKey":"orders","type":"queue"}}"#)
        );
        assert_eq!(var(env, "CELERITY_REDIS_ENDPOINT"), Some("redis://127.0.0.1:6379/3"));
        assert_eq!(provisioned.lines.len(), 4);
    }
}
