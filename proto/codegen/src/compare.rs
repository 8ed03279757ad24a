//! Structural comparison of two compiled `.proto` descriptor sets.
//!
//! Used to check that our `proto/runtime.proto` is wire-identical to the
//! runtime's contract. Everything that shapes the wire or the generated API is
//! compared: package and syntax, services and methods (input/output types,
//! streaming flags), messages (nested ones and map entries included), fields
//! (name, number, label, type, type name, oneof membership by oneof name,
//! proto3 `optional`, `packed`, default value) and enums (value names and
//! numbers). Comments, source info and `json_name` are ignored, as is the
//! order of declarations.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorSet, ServiceDescriptorProto,
};

/// Flattens a descriptor set into `item -> properties` entries, one per file,
/// service, method, message, field, oneof, enum and enum value, keyed by full
/// name so that declaration order does not matter.
pub fn flatten(set: &FileDescriptorSet) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for file in &set.file {
        let package = file.package();
        let mut deps = file.dependency.clone();
        deps.sort();
        out.insert(
            format!("file {}", file.name()),
            format!("package={package:?} syntax={:?} imports={deps:?}", file.syntax()),
        );
        let scope = if package.is_empty() { String::new() } else { format!(".{package}") };
        for service in &file.service {
            flatten_service(&scope, service, &mut out);
        }
        for message in &file.message_type {
            flatten_message(&scope, message, &mut out);
        }
        for enumeration in &file.enum_type {
            flatten_enum(&scope, enumeration, &mut out);
        }
    }
    out
}

fn flatten_service(scope: &str, service: &ServiceDescriptorProto, out: &mut BTreeMap<String, String>) {
    let name = format!("{scope}.{}", service.name());
    out.insert(format!("service {name}"), String::new());
    for method in &service.method {
        out.insert(
            format!("method {name}/{}", method.name()),
            format!(
                "input={} output={} client_streaming={} server_streaming={}",
                method.input_type(),
                method.output_type(),
                method.client_streaming(),
                method.server_streaming()
            ),
        );
    }
}

fn flatten_message(scope: &str, message: &DescriptorProto, out: &mut BTreeMap<String, String>) {
    let name = format!("{scope}.{}", message.name());
    let map_entry = message.options.as_ref().is_some_and(|options| options.map_entry());
    out.insert(format!("message {name}"), format!("map_entry={map_entry}"));
    for oneof in &message.oneof_decl {
        out.insert(format!("oneof {name}.{}", oneof.name()), String::new());
    }
    for field in &message.field {
        out.insert(format!("field {name}.{}", field.name()), describe_field(message, field));
    }
    for nested in &message.nested_type {
        flatten_message(&name, nested, out);
    }
    for enumeration in &message.enum_type {
        flatten_enum(&name, enumeration, out);
    }
}

fn describe_field(message: &DescriptorProto, field: &FieldDescriptorProto) -> String {
    let label = Label::try_from(field.label.unwrap_or_default())
        .map(|label| label.as_str_name().to_owned())
        .unwrap_or_else(|_| format!("{:?}", field.label));
    let kind = Type::try_from(field.r#type.unwrap_or_default())
        .map(|kind| kind.as_str_name().to_owned())
        .unwrap_or_else(|_| format!("{:?}", field.r#type));
    let oneof = field
        .oneof_index
        .and_then(|index| message.oneof_decl.get(usize::try_from(index).ok()?))
        .map_or("-", |oneof| oneof.name());
    let mut text =
        format!("number={} label={label} type={kind} type_name={} oneof={oneof}", field.number(), field.type_name(),);
    if field.proto3_optional() {
        text.push_str(" proto3_optional");
    }
    if let Some(packed) = field.options.as_ref().and_then(|options| options.packed) {
        let _ = write!(text, " packed={packed}");
    }
    if let Some(default) = &field.default_value {
        let _ = write!(text, " default={default:?}");
    }
    text
}

fn flatten_enum(scope: &str, enumeration: &EnumDescriptorProto, out: &mut BTreeMap<String, String>) {
    let name = format!("{scope}.{}", enumeration.name());
    out.insert(format!("enum {name}"), String::new());
    for value in &enumeration.value {
        out.insert(format!("enum value {name}.{}", value.name()), format!("number={}", value.number()));
    }
}

/// Lists every structural difference between `ours` and `contract`, one
/// human-readable line each; empty when the two are wire-identical.
pub fn diff(ours: &FileDescriptorSet, contract: &FileDescriptorSet) -> Vec<String> {
    let ours = flatten(ours);
    let contract = flatten(contract);
    let mut differences = Vec::new();
    for (item, contract_value) in &contract {
        match ours.get(item) {
            None => differences.push(format!("missing from ours: {item} ({contract_value})")),
            Some(our_value) if our_value != contract_value => {
                differences.push(format!("{item}: ours has {our_value}, contract has {contract_value}"))
            }
            Some(_) => {}
        }
    }
    for (item, our_value) in &ours {
        if !contract.contains_key(item) {
            differences.push(format!("not in contract: {item} ({our_value})"));
        }
    }
    differences
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
        syntax = "proto3";
        package demo.v1;
        message Values { repeated string values = 1; }
        message Frame {
          string id = 1;
          map<string, Values> headers = 2;
          oneof body {
            string text = 10;
            bytes data = 11;
          }
          uint32 count = 12;
          enum Kind {
            KIND_UNSPECIFIED = 0;
            KIND_A = 1;
          }
          Kind kind = 13;
        }
        service Demo { rpc Stream(stream Frame) returns (stream Frame); }
    "#;

    fn compile(source: &str) -> FileDescriptorSet {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("demo.proto"), source).unwrap();
        crate::compile_descriptors(dir.path(), "demo.proto", false).unwrap()
    }

    fn diff_against_base(changed: &str) -> Vec<String> {
        assert_ne!(changed, BASE, "the edit did not apply");
        diff(&compile(changed), &compile(BASE))
    }

    #[test]
    fn identical_files_have_no_difference() {
        assert_eq!(diff(&compile(BASE), &compile(BASE)), Vec::<String>::new());
    }

    #[test]
    fn comments_order_and_json_name_are_ignored() {
        let reordered = r#"
            // A comment.
            syntax = "proto3";
            package demo.v1;
            service Demo { rpc Stream(stream Frame) returns (stream Frame); }
            message Frame {
              /* reordered */
              uint32 count = 12;
              enum Kind {
                KIND_UNSPECIFIED = 0;
                // A comment on a value.
                KIND_A = 1;
              }
              oneof body {
                bytes data = 11;
                string text = 10;
              }
              Kind kind = 13;
              map<string, Values> headers = 2;
              string id = 1 [json_name = "ident"];
            }
            message Values { repeated string values = 1; }
        "#;
        assert_eq!(diff(&compile(reordered), &compile(BASE)), Vec::<String>::new());
    }

    #[test]
    fn catches_changed_field_number() {
        let differences = diff_against_base(&BASE.replace("uint32 count = 12;", "uint32 count = 14;"));
        assert_eq!(differences.len(), 1, "{differences:#?}");
        assert!(differences[0].starts_with("field .demo.v1.Frame.count:"), "{differences:#?}");
        assert!(differences[0].contains("number=14"), "{differences:#?}");
        assert!(differences[0].contains("number=12"), "{differences:#?}");
    }

    #[test]
    fn catches_renamed_field() {
        let differences = diff_against_base(&BASE.replace("string id = 1;", "string ident = 1;"));
        assert_eq!(
            differences,
            vec![
                "missing from ours: field .demo.v1.Frame.id (number=1 label=LABEL_OPTIONAL type=TYPE_STRING type_name= oneof=-)",
                "not in contract: field .demo.v1.Frame.ident (number=1 label=LABEL_OPTIONAL type=TYPE_STRING type_name= oneof=-)",
            ]
        );
    }

    #[test]
    fn catches_field_moved_into_oneof() {
        let moved = BASE
            .replace("    uint32 count = 12;\n", "\n")
            .replace("bytes data = 11;", "bytes data = 11;\n uint32 count = 12;");
        let differences = diff_against_base(&moved);
        assert_eq!(differences.len(), 1, "{differences:#?}");
        assert!(differences[0].starts_with("field .demo.v1.Frame.count:"), "{differences:#?}");
        assert!(
            differences[0].contains("ours has number=12 label=LABEL_OPTIONAL type=TYPE_UINT32 type_name= oneof=body"),
            "{differences:#?}"
        );
        assert!(differences[0].ends_with("oneof=-"), "{differences:#?}");
    }

    #[test]
    fn catches_field_moved_out_of_oneof() {
        let moved = BASE
            .replace("    string text = 10;\n", "\n")
            .replace("uint32 count = 12;", "uint32 count = 12;\n string text = 10;");
        let differences = diff_against_base(&moved);
        assert_eq!(differences.len(), 1, "{differences:#?}");
        assert!(differences[0].starts_with("field .demo.v1.Frame.text:"), "{differences:#?}");
    }

    #[test]
    fn catches_changed_enum_value() {
        let differences = diff_against_base(&BASE.replace("KIND_A = 1;", "KIND_A = 2;"));
        assert_eq!(
            differences,
            vec!["enum value .demo.v1.Frame.Kind.KIND_A: ours has number=2, contract has number=1"]
        );
    }

    #[test]
    fn catches_changed_types_labels_maps_and_streaming() {
        let cases = [
            ("uint32 count = 12;", "int32 count = 12;", "field .demo.v1.Frame.count:"),
            ("uint32 count = 12;", "repeated uint32 count = 12;", "field .demo.v1.Frame.count:"),
            ("map<string, Values>", "map<string, string>", "field .demo.v1.Frame.HeadersEntry.value:"),
            ("returns (stream Frame)", "returns (Frame)", "method .demo.v1.Demo/Stream:"),
            ("package demo.v1;", "package demo.v2;", "file demo.proto:"),
        ];
        for (from, to, expected) in cases {
            let differences = diff_against_base(&BASE.replace(from, to));
            assert!(
                differences.iter().any(|line| line.starts_with(expected)),
                "{from} -> {to}: expected a line starting {expected:?}, got {differences:#?}"
            );
        }
    }
}
