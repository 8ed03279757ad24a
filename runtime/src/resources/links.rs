//! The resource links: which blueprint resource is of what kind, and under
//! which key of the `resources` namespace its deployed identifier is kept.
//!
//! Read from `__celerity_resource_links__.json` (at the path in
//! `CELERITY_RESOURCE_LINKS_PATH`, else in the working directory, else
//! beside the executable), or, where there is no file, from the JSON in
//! `CELERITY_RESOURCE_LINKS`. `__celerity_handler_scope__.json` beside the
//! links file narrows them to the resources of the handler named by
//! `CELERITY_HANDLER_ID`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ResourceKind;
use crate::config::ConfigError;
use crate::config::environment::Environment;

/// The links file's name.
pub const LINKS_FILE: &str = "__celerity_resource_links__.json";
/// The handler scope file's name, beside the links file.
pub const SCOPE_FILE: &str = "__celerity_handler_scope__.json";

/// One linked resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The blueprint resource's name.
    pub name: String,
    /// Its kind.
    pub kind: ResourceKind,
    /// The key of the `resources` namespace holding its deployed identifier
    /// (and, as `<key>_<field>`, its connection settings).
    pub config_key: String,
}

/// The application's resource links, by blueprint resource name, and where
/// they were read from.
///
/// ```
/// use celerity::resources::{Links, ResourceKind};
///
/// let links = Links::from_json(br#"{"ordersQueue": {"type": "queue", "configKey": "ordersQueue"},
///                                   "receipts": {"type": "bucket", "configKey": "receipts"}}"#, "a test")?;
/// assert_eq!(links.find(ResourceKind::Queue, "ordersQueue")?.config_key, "ordersQueue");
/// assert_eq!(links.only(ResourceKind::Bucket)?.name, "receipts");
///
/// let error = links.find(ResourceKind::Bucket, "ordersQueue").unwrap_err();
/// assert_eq!(error.to_string(), "the resource `ordersQueue` is a queue, and was asked for as a bucket");
/// # Ok::<_, celerity::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    links: BTreeMap<String, Link>,
    source: String,
    /// The handler the links are narrowed to, and its resources.
    scope: Option<(String, BTreeSet<String>)>,
}

#[derive(Deserialize)]
struct RawLink {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "configKey")]
    config_key: String,
}

impl Links {
    /// Links from the JSON object the deployment writes; `source` names
    /// where it came from in errors.
    pub fn from_json(raw: &[u8], source: &str) -> Result<Links, ConfigError> {
        let parsed: BTreeMap<String, RawLink> = serde_json::from_slice(raw).map_err(|error| {
            ConfigError::malformed(
                source,
                format!(
                    "the resource links are not a JSON object of {{\"type\", \"configKey\"}} by resource name ({error})"
                ),
            )
        })?;
        let links = parsed
            .into_iter()
            .map(|(name, raw)| {
                let link =
                    Link { name: name.clone(), kind: ResourceKind::parse(&raw.kind), config_key: raw.config_key };
                (name, link)
            })
            .collect();
        Ok(Links { links, source: source.to_string(), scope: None })
    }

    /// Links given in code, for tests and tools.
    pub fn from_links(links: impl IntoIterator<Item = Link>) -> Links {
        Links {
            links: links.into_iter().map(|link| (link.name.clone(), link)).collect(),
            source: "links given in code".to_string(),
            scope: None,
        }
    }

    /// These links and `more`, for resources these do not have.
    pub(crate) fn with(mut self, more: impl IntoIterator<Item = Link>) -> Links {
        for link in more {
            self.links.entry(link.name.clone()).or_insert(link);
        }
        self
    }

    /// Where the links were read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every link a lookup can reach (the handler's scope, when narrowed).
    pub fn iter(&self) -> impl Iterator<Item = &Link> {
        self.links.values().filter(|link| self.in_scope(&link.name))
    }

    /// The handler the links are narrowed to, if a scope file narrows them.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_ref().map(|(handler, _)| handler.as_str())
    }

    /// The resource `name`, which must be of `kind`.
    pub fn find(&self, kind: ResourceKind, name: &str) -> Result<&Link, ConfigError> {
        let Some(link) = self.links.get(name) else {
            let known = self.names_of(&kind);
            return Err(ConfigError::link(if known.is_empty() {
                format!("there is no {kind} named `{name}`: the application declares no {kind} ({})", self.source)
            } else {
                format!(
                    "there is no {kind} named `{name}`; the application's {}: {} ({})",
                    kind.plural(),
                    known.join(", "),
                    self.source
                )
            }));
        };
        if link.kind != kind {
            return Err(ConfigError::link(format!(
                "the resource `{name}` is a {}, and was asked for as a {kind}",
                link.kind
            )));
        }
        if !self.in_scope(name) {
            let (handler, names) = self
                .scope
                .as_ref()
                .map(|(h, n)| (h.as_str(), n.iter().cloned().collect::<Vec<_>>()))
                .unwrap_or_default();
            return Err(ConfigError::link(format!(
                "the {kind} `{name}` is not linked to the handler `{handler}`, whose resources are: {}",
                names.join(", ")
            )));
        }
        Ok(link)
    }

    /// The one resource of `kind`: the default handle of that kind.
    pub fn only(&self, kind: ResourceKind) -> Result<&Link, ConfigError> {
        let mut of_kind = self.iter().filter(|link| link.kind == kind);
        match (of_kind.next(), of_kind.next()) {
            (Some(link), None) => Ok(link),
            (None, _) => Err(ConfigError::link(format!(
                "the application declares no {kind}, so there is no default one ({})",
                self.source
            ))),
            (Some(_), Some(_)) => Err(ConfigError::link(format!(
                "the application has several {}, so there is no default one: name it ({})",
                kind.plural(),
                self.names_of(&kind).join(", ")
            ))),
        }
    }

    fn names_of(&self, kind: &ResourceKind) -> Vec<String> {
        self.iter().filter(|link| &link.kind == kind).map(|link| link.name.clone()).collect()
    }

    fn in_scope(&self, name: &str) -> bool {
        self.scope.as_ref().is_none_or(|(_, names)| names.contains(name))
    }

    /// Narrows the links to `handler`'s, as the scope file at `path` says;
    /// a missing file, or one that does not name the handler, narrows
    /// nothing.
    fn narrow(&mut self, path: &Path, handler: &str) {
        let Ok(raw) = std::fs::read(path) else { return };
        match serde_json::from_slice::<BTreeMap<String, Vec<String>>>(&raw) {
            Ok(mut scopes) => {
                if let Some(names) = scopes.remove(handler) {
                    self.scope = Some((handler.to_string(), names.into_iter().collect()));
                }
            }
            Err(error) => tracing::warn!(
                "the handler scope file {} is not a JSON object of resource names by handler ({error}): the links \
                 are not narrowed",
                path.display()
            ),
        }
    }
}

/// The links as the environment gives them, or why there are none.
#[derive(Debug, Clone)]
pub(crate) enum Loaded {
    Links(Links),
    /// No file and no variable: where it looked.
    Absent(Vec<PathBuf>),
    Malformed(ConfigError),
}

impl Loaded {
    pub(crate) fn get(&self) -> Result<&Links, ConfigError> {
        match self {
            Loaded::Links(links) => Ok(links),
            Loaded::Absent(looked) => Err(ConfigError::link(format!(
                "there are no resource links: no {} and no CELERITY_RESOURCE_LINKS (`celerity build` writes the file, \
                 `celerity dev` and `celerity-dev run` set the variable)",
                looked.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(" or ")
            ))),
            Loaded::Malformed(error) => Err(error.clone()),
        }
    }
}

impl fmt::Display for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loaded::Links(links) => write!(f, "{} resources from {}", links.links.len(), links.source),
            Loaded::Absent(_) => f.write_str("no resource links"),
            Loaded::Malformed(error) => write!(f, "{error}"),
        }
    }
}

/// Reads the links as the contract says.
pub(crate) fn load(env: &Environment) -> Loaded {
    let candidates: Vec<PathBuf> = match env.get("CELERITY_RESOURCE_LINKS_PATH") {
        Some(path) => vec![PathBuf::from(path)],
        None => {
            let mut paths = vec![PathBuf::from(LINKS_FILE)];
            if let Some(dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
                let beside = dir.join(LINKS_FILE);
                if std::env::current_dir().ok().map(|cwd| cwd.join(LINKS_FILE)) != Some(beside.clone()) {
                    paths.push(beside);
                }
            }
            paths
        }
    };
    for path in &candidates {
        let Ok(raw) = std::fs::read(path) else { continue };
        let mut links = match Links::from_json(&raw, &format!("the file {}", path.display())) {
            Ok(links) => links,
            Err(error) => return Loaded::Malformed(error),
        };
        if let Some(handler) = env.get("CELERITY_HANDLER_ID") {
            let scope = path.parent().unwrap_or(Path::new("")).join(SCOPE_FILE);
            links.narrow(&scope, handler);
        }
        return Loaded::Links(links);
    }
    match env.get("CELERITY_RESOURCE_LINKS") {
        Some(inline) => match Links::from_json(inline.as_bytes(), "CELERITY_RESOURCE_LINKS") {
            Ok(links) => Loaded::Links(links),
            Err(error) => Loaded::Malformed(error),
        },
        None => Loaded::Absent(candidates),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links() -> Links {
        Links::from_json(
            br#"{
                "ordersQueue": {"type": "queue", "configKey": "ordersQueue"},
                "refundsQueue": {"type": "queue", "configKey": "refundsQueue"},
                "receipts": {"type": "bucket", "configKey": "receiptsBucket"},
                "ledger": {"type": "ledgerV2", "configKey": "ledger"}
            }"#,
            "the file links.json",
        )
        .unwrap()
    }

    #[test]
    fn a_lookup_is_checked_by_kind() {
        let links = links();
        assert_eq!(links.find(ResourceKind::Bucket, "receipts").unwrap().config_key, "receiptsBucket");
        assert_eq!(
            links.find(ResourceKind::Queue, "orders").unwrap_err().to_string(),
            "there is no queue named `orders`; the application's queues: ordersQueue, refundsQueue (the file links.json)"
        );
        assert_eq!(
            links.find(ResourceKind::Topic, "events").unwrap_err().to_string(),
            "there is no topic named `events`: the application declares no topic (the file links.json)"
        );
        assert_eq!(
            links.find(ResourceKind::Bucket, "ordersQueue").unwrap_err().to_string(),
            "the resource `ordersQueue` is a queue, and was asked for as a bucket"
        );
        assert_eq!(links.find(ResourceKind::Other("ledgerV2".into()), "ledger").unwrap().name, "ledger");
    }

    #[test]
    fn the_one_resource_of_a_kind_is_its_default() {
        let links = links();
        assert_eq!(links.only(ResourceKind::Bucket).unwrap().name, "receipts");
        assert_eq!(
            links.only(ResourceKind::Queue).unwrap_err().to_string(),
            "the application has several queues, so there is no default one: name it (ordersQueue, refundsQueue)"
        );
        assert!(links.only(ResourceKind::Cache).unwrap_err().to_string().contains("declares no cache"));
    }

    #[test]
    fn malformed_links_name_their_source() {
        for raw in [&b"not json"[..], b"[]", br#"{"q": {"type": "queue"}}"#] {
            let error = Links::from_json(raw, "CELERITY_RESOURCE_LINKS").unwrap_err();
            assert!(error.to_string().contains("CELERITY_RESOURCE_LINKS"), "{error}");
        }
    }

    #[test]
    fn the_file_comes_before_the_variable_and_a_scope_narrows_it() {
        let dir = std::env::temp_dir().join(format!("celerity-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(LINKS_FILE);
        std::fs::write(
            &file,
            br#"{"ordersQueue": {"type": "queue", "configKey": "q1"}, "refundsQueue": {"type": "queue", "configKey": "q2"}}"#,
        )
        .unwrap();
        std::fs::write(dir.join(SCOPE_FILE), br#"{"placeOrder": ["ordersQueue"]}"#).unwrap();
        let path = file.to_str().unwrap();
        let inline = r#"{"other": {"type": "topic", "configKey": "t"}}"#;

        let env =
            Environment::from_pairs([("CELERITY_RESOURCE_LINKS_PATH", path), ("CELERITY_RESOURCE_LINKS", inline)]);
        let loaded = load(&env);
        let links = loaded.get().unwrap();
        assert_eq!(links.iter().count(), 2, "the file wins, unnarrowed without a handler id");

        let env =
            Environment::from_pairs([("CELERITY_RESOURCE_LINKS_PATH", path), ("CELERITY_HANDLER_ID", "placeOrder")]);
        let loaded = load(&env);
        let links = loaded.get().unwrap();
        assert_eq!(links.scope(), Some("placeOrder"));
        assert_eq!(links.only(ResourceKind::Queue).unwrap().name, "ordersQueue", "the default within the scope");
        assert_eq!(
            links.find(ResourceKind::Queue, "refundsQueue").unwrap_err().to_string(),
            "the queue `refundsQueue` is not linked to the handler `placeOrder`, whose resources are: ordersQueue"
        );

        let missing = dir.join("missing.json");
        let env = Environment::from_pairs([
            ("CELERITY_RESOURCE_LINKS_PATH", missing.to_str().unwrap()),
            ("CELERITY_RESOURCE_LINKS", inline),
        ]);
        assert_eq!(load(&env).get().unwrap().source(), "CELERITY_RESOURCE_LINKS");

        let env = Environment::from_pairs([("CELERITY_RESOURCE_LINKS_PATH", missing.to_str().unwrap())]);
        let error = load(&env).get().unwrap_err().to_string();
        assert!(error.contains("missing.json") && error.contains("CELERITY_RESOURCE_LINKS"), "{error}");

        std::fs::write(&file, b"{").unwrap();
        let env = Environment::from_pairs([("CELERITY_RESOURCE_LINKS_PATH", path)]);
        let error = load(&env).get().unwrap_err().to_string();
        assert!(error.contains(path), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
