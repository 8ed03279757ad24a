//! The application's blueprint, read the way the Celerity runtime reads it:
//! the handlers it declares, each with the tag, name, published name,
//! timeout and tracing the runtime puts in its `HandlerConfig`, and for a
//! schedule the expression and input every trigger carries.
//!
//! - [`document`] reads the file (YAML, or JSON for a name ending `.json`)
//!   into one value;
//! - [`rules`] turns that value into [`Handler`]s by the rules of
//!   `shared/contract/blueprints/README.md`.
//!
//! [`find`] is where `celerity-dev run` looks for a blueprint nobody named:
//! `app.blueprint.yaml` or `app.blueprint.json` in the example's crate
//! folder, then in the current directory.

pub mod document;
pub mod resources;
pub mod rules;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// The names a blueprint is found by, in the order they are tried.
pub const FILE_NAMES: [&str; 2] = ["app.blueprint.yaml", "app.blueprint.json"];

/// A blueprint larger than this is refused before it is parsed: real ones
/// are a few kilobytes.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// What a handler is triggered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `celerity.handler.http`, linked from a `celerity/api`.
    Http,
    /// `celerity.handler.websocket`, linked from a `celerity/api` serving WebSocket.
    WebSocket,
    /// `celerity.handler.consumer`, linked from a `celerity/consumer`.
    Consumer,
    /// `celerity.handler.schedule`, linked from a `celerity/schedule`.
    Schedule,
    /// No trigger annotation: invoked by name.
    Custom,
}

impl Kind {
    /// The word the manifest uses for this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Http => "http",
            Kind::WebSocket => "websocket",
            Kind::Consumer => "consumer",
            Kind::Schedule => "schedule",
            Kind::Custom => "custom",
        }
    }
}

/// What every trigger of a schedule carries.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// The schedule's `spec.schedule`, such as `cron(0 3 * * ? *)`.
    pub expression: String,
    /// The schedule's `spec.input`, sent as JSON; `None` when it sets none.
    pub input: Option<Value>,
}

/// One handler of the blueprint, as its `HandlerConfig` says.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// The handler's resource name.
    pub name: String,
    /// The handler's `spec.handlerName` (empty when unset).
    pub published_name: String,
    /// The tag.
    pub tag: String,
    /// What triggers it.
    pub kind: Kind,
    /// Its timeout.
    pub timeout: Duration,
    /// Whether it is traced.
    pub tracing_enabled: bool,
    /// For a schedule handler, what its triggers carry.
    pub schedule: Option<Schedule>,
}

/// A consumer handler the runtime feeds from a local queue: the Redis
/// stream `celerity:queue:{source_id}` it reads, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueFeed {
    /// The `celerity/queue` resources that link to the consumer.
    pub queues: Vec<String>,
    /// The `celerity/consumer` resource.
    pub consumer: String,
    /// The source the consumer reads: its `spec.sourceId`, else the one
    /// queue linking to it, by resource name. The stream is
    /// `celerity:queue:{source_id}`, and the tag's source part is this.
    pub source_id: String,
    /// The handler the consumer links to.
    pub handler: String,
    /// The handler's tag.
    pub tag: String,
    /// At most this many messages a batch (the consumer's `spec.batchSize`).
    pub batch_size: usize,
    /// How long one read waits for messages (`spec.waitTimeSeconds`).
    pub wait: Duration,
    /// How long a message handed to the handler stays unavailable before it
    /// is delivered again if it was not acknowledged
    /// (`spec.visibilityTimeout`).
    pub visibility_timeout: Duration,
}

impl QueueFeed {
    /// The Redis stream the runtime's local consumer reads.
    pub fn stream(&self) -> String {
        format!("celerity:queue:{}", self.source_id)
    }
}

/// Everything the dev runtime takes from a blueprint.
#[derive(Debug, Clone, PartialEq)]
pub struct Blueprint {
    /// The handlers, in the order the file declares them.
    pub handlers: Vec<Handler>,
    /// The JSON field a WebSocket text message is routed by.
    pub route_key: String,
    /// Handlers the dev runtime does not serve, with why (custom guards).
    pub skipped: Vec<(String, String)>,
    /// The configuration stores and linked resources.
    pub resources: resources::Declared,
    /// The consumers fed from a queue, in the order of their handlers.
    pub feeds: Vec<QueueFeed>,
    /// Queues that feed a consumer the dev runtime does not read them into,
    /// with why.
    pub unread: Vec<(String, String)>,
}

/// One thing wrong with a blueprint: where, as precisely as known, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The resource at fault.
    pub resource: Option<String>,
    /// The field at fault, inside the resource (or the file when there is
    /// no resource), such as `spec.sourceId`.
    pub field: Option<String>,
    /// The line (from 1), when the parser gives one.
    pub line: Option<usize>,
    /// The column (from 1), when the parser gives one.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut place = Vec::new();
        if let Some(line) = self.line {
            place.push(match self.column {
                Some(column) => format!("line {line}, column {column}"),
                None => format!("line {line}"),
            });
        }
        if let Some(resource) = &self.resource {
            place.push(format!("resource `{resource}`"));
        }
        if let Some(field) = &self.field {
            place.push(format!("field `{field}`"));
        }
        if place.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", place.join(", "), self.message) }
    }
}

/// A blueprint that cannot be used, with every problem found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The file.
    pub file: PathBuf,
    /// What is wrong, in the order found.
    pub problems: Vec<Problem>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "blueprint {}:", self.file.display())?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

/// Reads the blueprint at `path`.
pub fn load(path: &Path) -> Result<Blueprint, Invalid> {
    let invalid = |message: String| Invalid {
        file: path.to_owned(),
        problems: vec![Problem { resource: None, field: None, line: None, column: None, message }],
    };
    let size = std::fs::metadata(path).map_err(|e| invalid(format!("cannot be read: {e}")))?.len();
    if size > MAX_FILE_BYTES {
        return Err(invalid(format!("is {size} bytes; a blueprint over {MAX_FILE_BYTES} bytes is refused")));
    }
    let text = std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot be read: {e}")))?;
    parse(&text, document::Format::of(path)).map_err(|problems| Invalid { file: path.to_owned(), problems })
}

/// Reads a blueprint from its text.
pub fn parse(text: &str, format: document::Format) -> Result<Blueprint, Vec<Problem>> {
    let document = document::read(text, format).map_err(|e| {
        vec![Problem { resource: None, field: None, line: e.line, column: e.column, message: e.message }]
    })?;
    let mut blueprint = rules::handlers(&document.value)?;
    blueprint.resources = resources::read(&document.value)?;
    let order = &document.resource_order;
    blueprint.handlers.sort_by_key(|handler| order.iter().position(|name| *name == handler.name));
    blueprint.feeds.sort_by_key(|feed| order.iter().position(|name| *name == feed.handler));
    Ok(blueprint)
}

/// The blueprint to read when none was named: the first of [`FILE_NAMES`]
/// in `crate_dir` (the example's own folder), then in `cwd`.
pub fn find(crate_dir: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    crate_dir
        .into_iter()
        .chain(std::iter::once(cwd))
        .flat_map(|dir| FILE_NAMES.iter().map(move |name| dir.join(name)))
        .find(|path| path.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_folder_is_looked_in_before_the_current_directory() {
        let (krate, cwd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(find(Some(krate.path()), cwd.path()), None);
        std::fs::write(cwd.path().join("app.blueprint.json"), "{}").unwrap();
        assert_eq!(find(Some(krate.path()), cwd.path()), Some(cwd.path().join("app.blueprint.json")));
        std::fs::write(cwd.path().join("app.blueprint.yaml"), "").unwrap();
        assert_eq!(find(None, cwd.path()), Some(cwd.path().join("app.blueprint.yaml")));
        std::fs::write(krate.path().join("app.blueprint.json"), "{}").unwrap();
        assert_eq!(find(Some(krate.path()), cwd.path()), Some(krate.path().join("app.blueprint.json")));
    }

    #[test]
    fn problems_name_the_line_the_resource_and_the_field() {
        let problem = Problem {
            resource: Some("getOrder".into()),
            field: Some("spec.timeout".into()),
            line: None,
            column: None,
            message: "expected seconds".into(),
        };
        assert_eq!(problem.to_string(), "resource `getOrder`, field `spec.timeout`: expected seconds");
        let invalid =
            Invalid { file: "app.blueprint.yaml".into(), problems: parse("a: [", document::Format::Yaml).unwrap_err() };
        let text = invalid.to_string();
        assert!(text.starts_with("blueprint app.blueprint.yaml:\n  line "), "{text}");
    }

    #[test]
    fn unreadable_files_are_problems_too() {
        let dir = tempfile::tempdir().unwrap();
        let error = load(&dir.path().join("missing.yaml")).unwrap_err();
        assert!(error.to_string().contains("cannot be read"), "{error}");
    }
}
