//! A blueprint file's text as one JSON value, whichever format it is in:
//! JSON (a name ending `.json`) with `serde_json`, anything else as YAML
//! with `saphyr`. Everything after this reads the value, so YAML and JSON
//! blueprints are read by the same rules.
//!
//! YAML is resolved the way the runtime reads it: anchors and aliases
//! (`spec: &hspec` ... `spec: *hspec`) are expanded, core-schema scalars
//! become booleans, numbers and null, and a mapping key that is a number or
//! a boolean is taken as its text. What JSON cannot hold (a mapping key that
//! is itself a mapping, a float that is not finite) is refused, saying where.

use std::path::Path;

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use saphyr_parser::{Event, Parser};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Number, Value};

/// How deeply collections may nest. Far beyond any blueprint, and it keeps
/// a file of nested collections from exhausting the stack: the YAML tree is
/// built and dropped recursively, so the depth is checked on the parser's
/// events before any tree is built.
const MAX_DEPTH: usize = 128;

/// The format of a blueprint file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// YAML (which also reads JSON, but without `serde_json`'s messages).
    Yaml,
    /// JSON.
    Json,
}

impl Format {
    /// The format a file's name says: `.json` is JSON, anything else YAML.
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Why a text is not a blueprint document, and where when the parser says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The line (from 1), when known.
    pub line: Option<usize>,
    /// The column (from 1), when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl SyntaxError {
    fn at(line: usize, column: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError { line: Some(line), column: Some(column), message: message.into() }
    }

    fn nowhere(message: impl Into<String>) -> SyntaxError {
        SyntaxError { line: None, column: None, message: message.into() }
    }
}

/// A blueprint file read: its value, and the names of its resources in the
/// order the file declares them, which the value does not keep (its
/// mappings are ordered by key). The runtime registers a path's routes in
/// the file's order, and a 405's `allow` lists them so.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file as one JSON value.
    pub value: Value,
    /// The keys of `resources`, in the file's order.
    pub resource_order: Vec<String>,
}

/// Parses `text` in `format` into its value and the order of its resources.
pub fn read(text: &str, format: Format) -> Result<Document, SyntaxError> {
    match format {
        Format::Json => {
            let value: Value = serde_json::from_str(text).map_err(|e| {
                // serde_json's own text ends with "at line L column C"; the
                // position is given separately.
                let message = e.to_string();
                let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
                SyntaxError::at(e.line(), e.column(), message)
            })?;
            // The text is JSON: read again for the keys alone, in order. A
            // `resources` that is not an object has no order to keep, and
            // the rules say what is wrong with it.
            let resource_order = Keys { of_member: Some("resources") }
                .deserialize(&mut serde_json::Deserializer::from_str(text))
                .unwrap_or_default();
            Ok(Document { value, resource_order })
        }
        Format::Yaml => {
            check_depth(text)?;
            let documents = Yaml::load_from_str(text)
                .map_err(|e| SyntaxError::at(e.marker().line(), e.marker().col() + 1, e.info()))?;
            let mut documents = documents.into_iter().filter(|d| !d.is_badvalue());
            let Some(document) = documents.next() else {
                return Err(SyntaxError::nowhere("the file holds no YAML document"));
            };
            if documents.next().is_some() {
                return Err(SyntaxError::nowhere("the file holds more than one YAML document; a blueprint is one"));
            }
            let value = to_json(&document, &mut Vec::new())?;
            Ok(Document { value, resource_order: yaml_resource_order(&document) })
        }
    }
}

/// The keys of a YAML document's `resources` mapping, in order.
fn yaml_resource_order(document: &Yaml<'_>) -> Vec<String> {
    let Yaml::Mapping(root) = untagged(document) else { return Vec::new() };
    root.iter()
        .find(|(key, _)| key_text(key).as_deref() == Some("resources"))
        .and_then(|(_, resources)| match untagged(resources) {
            Yaml::Mapping(resources) => Some(resources.keys().filter_map(key_text).collect()),
            _ => None,
        })
        .unwrap_or_default()
}

fn untagged<'a, 'input>(node: &'a Yaml<'input>) -> &'a Yaml<'input> {
    match node {
        Yaml::Tagged(_, inner) => untagged(inner),
        other => other,
    }
}

/// Reads the keys of a JSON object in order, skipping the values; with
/// `of_member`, the keys of that member of the object instead.
struct Keys {
    of_member: Option<&'static str>,
}

impl<'de> DeserializeSeed<'de> for Keys {
    type Value = Vec<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<String>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Keys {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.of_member {
                Some(member) if key == member => keys = map.next_value_seed(Keys { of_member: None })?,
                Some(_) => {
                    map.next_value::<IgnoredAny>()?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
            }
        }
        Ok(keys)
    }
}

/// Refuses YAML whose collections nest more than [`MAX_DEPTH`] deep,
/// reading only the parser's event stream (which keeps no tree).
fn check_depth(text: &str) -> Result<(), SyntaxError> {
    let mut depth = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| SyntaxError::at(e.marker().line(), e.marker().col() + 1, e.info()))?;
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(SyntaxError::at(
                        span.start.line(),
                        span.start.col() + 1,
                        format!("collections are nested more than {MAX_DEPTH} levels deep"),
                    ));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// `where` for a message: the keys and indexes leading to a node.
fn location(path: &[String]) -> String {
    if path.is_empty() { "the top level".to_owned() } else { format!("`{}`", path.join(".")) }
}

fn to_json(node: &Yaml<'_>, path: &mut Vec<String>) -> Result<Value, SyntaxError> {
    if path.len() > MAX_DEPTH {
        return Err(SyntaxError::nowhere(format!("{} is nested more than {MAX_DEPTH} levels deep", location(path))));
    }
    match node {
        Yaml::Value(scalar) => scalar_to_json(scalar, path),
        Yaml::Representation(text, _, _) => Ok(Value::String(text.to_string())),
        Yaml::Tagged(_, inner) => to_json(inner, path),
        Yaml::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                path.push(index.to_string());
                out.push(to_json(item, path)?);
                path.pop();
            }
            Ok(Value::Array(out))
        }
        Yaml::Mapping(entries) => {
            let mut out = Map::new();
            for (key, value) in entries {
                let key = key_text(key)
                    .ok_or_else(|| SyntaxError::nowhere(format!("{} has a key that is not text", location(path))))?;
                path.push(key.clone());
                let value = to_json(value, path)?;
                path.pop();
                if out.insert(key.clone(), value).is_some() {
                    return Err(SyntaxError::nowhere(format!("{} has the key `{key}` twice", location(path))));
                }
            }
            Ok(Value::Object(out))
        }
        Yaml::Alias(_) | Yaml::BadValue => Err(SyntaxError::nowhere(format!(
            "{} holds a value YAML cannot resolve (an unknown alias, or a tag such as `!!int` on a value it does not fit)",
            location(path)
        ))),
    }
}

fn scalar_to_json(scalar: &Scalar<'_>, path: &[String]) -> Result<Value, SyntaxError> {
    Ok(match scalar {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Number((*i).into()),
        Scalar::FloatingPoint(f) => Value::Number(Number::from_f64(f.into_inner()).ok_or_else(|| {
            SyntaxError::nowhere(format!("{} is a number JSON cannot hold ({})", location(path), f.into_inner()))
        })?),
        Scalar::String(s) => Value::String(s.to_string()),
    })
}

/// A mapping key as text: a string as it is, another scalar as written
/// (`1`, `true`); `None` for a collection.
fn key_text(key: &Yaml<'_>) -> Option<String> {
    match key {
        Yaml::Value(Scalar::String(s)) => Some(s.to_string()),
        Yaml::Value(Scalar::Integer(i)) => Some(i.to_string()),
        Yaml::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        Yaml::Value(Scalar::FloatingPoint(f)) => Some(f.into_inner().to_string()),
        Yaml::Value(Scalar::Null) => Some("null".to_owned()),
        Yaml::Representation(text, _, _) => Some(text.to_string()),
        Yaml::Tagged(_, inner) => key_text(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str, format: Format) -> Result<Value, SyntaxError> {
        read(text, format).map(|document| document.value)
    }

    #[test]
    fn yaml_anchors_scalars_and_keys() {
        let value = parse(
            "a: &spec {timeout: 5, on: true, ratio: 0.5, none: ~, name: x}\nb: *spec\n1: one\nlist: [1, \"2\"]\n",
            Format::Yaml,
        )
        .unwrap();
        let spec = json!({"timeout": 5, "on": true, "ratio": 0.5, "none": null, "name": "x"});
        assert_eq!(value, json!({"a": spec, "b": spec, "1": "one", "list": [1, "2"]}));
    }

    #[test]
    fn json_is_read_as_json() {
        assert_eq!(parse(r#"{"a": [1, {"b": null}]}"#, Format::Json).unwrap(), json!({"a": [1, {"b": null}]}));
        assert_eq!(Format::of(Path::new("app.blueprint.JSON")), Format::Json);
        assert_eq!(Format::of(Path::new("app.blueprint.yaml")), Format::Yaml);
    }

    #[test]
    fn resources_keep_the_order_the_file_declares_them_in() {
        let yaml = "version: x\nresources:\n  zebra: {}\n  apple: {}\n  mango: {}\n";
        assert_eq!(read(yaml, Format::Yaml).unwrap().resource_order, ["zebra", "apple", "mango"]);
        let json = r#"{"resources": {"zebra": {"a": [1]}, "apple": {}, "mango": null}, "b": {"c": 1}}"#;
        assert_eq!(read(json, Format::Json).unwrap().resource_order, ["zebra", "apple", "mango"]);
        assert!(read(r#"{"resources": [1]}"#, Format::Json).unwrap().resource_order.is_empty());
        assert!(read("resources: 3\n", Format::Yaml).unwrap().resource_order.is_empty());
    }

    #[test]
    fn malformed_files_say_where() {
        let error = parse("resources:\n  a:\n    type: [x\n", Format::Yaml).unwrap_err();
        assert!(error.line.is_some_and(|l| l >= 3), "{error:?}");
        let error = parse("{\"a\": 1,\n \"b\": }", Format::Json).unwrap_err();
        assert_eq!((error.line, error.column), (Some(2), Some(7)), "{error:?}");
        assert!(!error.message.contains(" at line "), "{error:?}");
        let error = parse("a: 1\na: 2\n", Format::Yaml).unwrap_err();
        assert_eq!(error.line, Some(2), "{error:?}");
    }

    #[test]
    fn what_json_cannot_hold_is_refused() {
        let error = parse("a:\n  ? [1, 2]\n  : x\n", Format::Yaml).unwrap_err();
        assert!(error.message.contains("`a`") && error.message.contains("not text"), "{error:?}");
        let error = parse("a: .nan\n", Format::Yaml).unwrap_err();
        assert!(error.message.contains("`a`"), "{error:?}");
        let error = parse("a: !!int x\n", Format::Yaml).unwrap_err();
        assert!(error.message.contains("`a`"), "{error:?}");
        assert!(parse("", Format::Yaml).is_err());
        assert!(parse("a: 1\n---\nb: 2\n", Format::Yaml).is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep, Format::Yaml).is_err());
        let deep = format!("{}1", "- ".repeat(5000));
        assert!(parse(&deep, Format::Yaml).is_err());
    }
}
