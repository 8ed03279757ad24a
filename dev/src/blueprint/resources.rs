//! What a blueprint declares beside its handlers that a handler reaches at
//! run time: its `celerity/config` stores and the resources the SDK links
//! (buckets, queues, topics, datastores, caches, SQL databases).
//!
//! - A `celerity/config` is a store: its id is `spec.name`, else the
//!   resource's name; its values are `spec.values` (text, numbers and
//!   booleans, as the blueprint gives them).
//! - A linked resource's link is `{"type": <kind>, "configKey": <name>}`
//!   where its name is its `spec.name`, else its resource name; the
//!   `resources` store holds that name at that key, as `celerity dev`
//!   records a local resource.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Problem;

/// A `celerity/config` store.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigStore {
    /// The blueprint resource's name.
    pub resource: String,
    /// The store's id: `spec.name`, else the resource's name.
    pub store_id: String,
    /// `spec.values`.
    pub values: Map<String, Value>,
}

/// A resource the SDK links a handler to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The blueprint resource's name, which handlers ask for.
    pub name: String,
    /// Its kind as the links file names it: `bucket`, `queue`, ...
    pub kind: &'static str,
    /// The key of the `resources` store holding its identifier, and that
    /// identifier: `spec.name`, else the resource's name.
    pub config_key: String,
    /// Its `spec`, for what a kind records beside the identifier.
    pub spec: Map<String, Value>,
}

/// The stores and linked resources of a blueprint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Declared {
    /// The `celerity/config` stores, by resource name.
    pub configs: Vec<ConfigStore>,
    /// The linked resources, by resource name.
    pub links: Vec<Linked>,
}

impl Declared {
    /// Whether the blueprint declares nothing a handler reaches.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty() && self.links.is_empty()
    }
}

/// The kind each linked resource type has in the links file.
const LINKED: [(&str, &str); 6] = [
    ("celerity/bucket", "bucket"),
    ("celerity/queue", "queue"),
    ("celerity/topic", "topic"),
    ("celerity/datastore", "datastore"),
    ("celerity/cache", "cache"),
    ("celerity/sqlDatabase", "sqlDatabase"),
];

/// Reads the stores and links of a blueprint's `resources`.
pub fn read(value: &Value) -> Result<Declared, Vec<Problem>> {
    let mut declared = Declared::default();
    let mut problems = Vec::new();
    let Some(resources) = value.get("resources").and_then(Value::as_object) else { return Ok(declared) };
    for (name, resource) in resources {
        let Some(kind) = resource.get("type").and_then(Value::as_str) else { continue };
        let empty = Map::new();
        let spec = resource.get("spec").and_then(Value::as_object).unwrap_or(&empty);
        let problem = |field: &str, message: &str| Problem {
            resource: Some(name.clone()),
            field: Some(field.to_owned()),
            line: None,
            column: None,
            message: message.to_owned(),
        };
        let id = match spec.get("name") {
            None => name.clone(),
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            Some(_) => {
                problems.push(problem("spec.name", "expected the resource's name, as text"));
                continue;
            }
        };
        if kind == "celerity/config" {
            let values = match spec.get("values") {
                None => Map::new(),
                Some(Value::Object(values)) => {
                    for (key, value) in values {
                        if !matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                            problems
                                .push(problem(&format!("spec.values.{key}"), "expected text, a number or a boolean"));
                        }
                    }
                    values.clone()
                }
                Some(_) => {
                    problems.push(problem("spec.values", "expected a mapping of keys to values"));
                    continue;
                }
            };
            declared.configs.push(ConfigStore { resource: name.clone(), store_id: id, values });
        } else if let Some((_, link)) = LINKED.iter().find(|(ty, _)| *ty == kind) {
            declared.links.push(Linked { name: name.clone(), kind: link, config_key: id, spec: spec.clone() });
        }
    }
    if problems.is_empty() { Ok(declared) } else { Err(problems) }
}

impl Linked {
    /// What a local session records for the resource beside its
    /// identifier, as `(<configKey>_<field>, value)`: for a datastore, the
    /// key attributes its blueprint declares (`spec.keys.partitionKey` and
    /// `sortKey`) and their DynamoDB types, `S`, `N` or `B`, from
    /// `spec.schema.fields` (text where the schema does not say), which a
    /// datastore kept in a file has no table to read them from.
    pub fn recorded_fields(&self) -> Vec<(String, String)> {
        let mut fields = Vec::new();
        if self.kind != "datastore" {
            return fields;
        }
        let keys = self.spec.get("keys");
        let schema = self.spec.get("schema").and_then(|schema| schema.get("fields"));
        for (role, field) in [("partitionKey", "_partitionKey"), ("sortKey", "_sortKey")] {
            let Some(name) = keys.and_then(|keys| keys.get(role)).and_then(Value::as_str) else { continue };
            let declared = schema.and_then(|fields| fields.get(name));
            let declared = declared.and_then(|field| field.as_str().or_else(|| field.get("type")?.as_str()));
            let kind = match declared.map(str::to_ascii_lowercase).as_deref() {
                Some("number" | "integer" | "int" | "float" | "decimal") => "N",
                Some("binary" | "bytes") => "B",
                _ => "S",
            };
            fields.push((format!("{}{field}", self.config_key), name.to_owned()));
            fields.push((format!("{}{field}Type", self.config_key), kind.to_owned()));
        }
        fields
    }
}

/// The links file's JSON for `links`.
pub fn links_json(links: &[Linked]) -> String {
    let links: BTreeMap<&str, Value> = links
        .iter()
        .map(|link| (link.name.as_str(), serde_json::json!({"type": link.kind, "configKey": link.config_key})))
        .collect();
    serde_json::to_string(&links).unwrap_or_else(|_| "{}".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::document::{self, Format};

    fn declared(yaml: &str) -> Result<Declared, Vec<Problem>> {
        read(&document::read(yaml, Format::Yaml).unwrap().value)
    }

    #[test]
    fn a_datastore_records_its_key_attributes_and_their_types() {
        let declared = declared(
            "resources:
  orders:
    type: celerity/datastore
    spec:
      name: orders-table
      keys: { partitionKey: customerId, sortKey: placedAt }
      schema: { fields: { customerId: string, placedAt: number } }
  sessions: { type: celerity/datastore, spec: { keys: { partitionKey: id } } }
  receipts: { type: celerity/bucket }
",
        )
        .unwrap();
        let fields = |name: &str| declared.links.iter().find(|link| link.name == name).unwrap().recorded_fields();
        let pairs = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert_eq!(
            fields("orders"),
            pairs(&[
                ("orders-table_partitionKey", "customerId"),
                ("orders-table_partitionKeyType", "S"),
                ("orders-table_sortKey", "placedAt"),
                ("orders-table_sortKeyType", "N"),
            ])
        );
        assert_eq!(fields("sessions"), pairs(&[("sessions_partitionKey", "id"), ("sessions_partitionKeyType", "S")]));
        assert!(fields("receipts").is_empty());
    }

    #[test]
    fn config_stores_and_linked_resources_are_read() {
        let declared = declared(
            "resources:
  appConfig:
    type: celerity/config
    spec: { name: orders-config, values: { CURRENCY: GBP, MAX_ITEMS: 20, TRACE: true } }
  ordersQueue: { type: celerity/queue, spec: { name: orders } }
  receipts: { type: celerity/bucket }
  getOrder: { type: celerity/handler, spec: { handler: get_order } }
",
        )
        .unwrap();
        assert_eq!(declared.configs.len(), 1);
        assert_eq!(declared.configs[0].store_id, "orders-config");
        assert_eq!(declared.configs[0].values["MAX_ITEMS"], serde_json::json!(20));
        let links: Vec<(&str, &str, &str)> =
            declared.links.iter().map(|l| (l.name.as_str(), l.kind, l.config_key.as_str())).collect();
        assert_eq!(links, [("ordersQueue", "queue", "orders"), ("receipts", "bucket", "receipts")]);
        assert_eq!(
            links_json(&declared.links),
            r#"{"ordersQueue":{"configKey":"orders","type":"queue"},"receipts":{"configKey":"receipts","type":"bucket"}}"#
        );
    }

    #[test]
    fn values_that_are_not_scalars_are_named() {
        let problems =
            declared("resources:\n  c: { type: celerity/config, spec: { values: { A: [1] } } }\n").unwrap_err();
        assert_eq!(
            problems[0].to_string(),
            "resource `c`, field `spec.values.A`: expected text, a number or a boolean"
        );
    }
}
