//! Every doc example and README snippet compiles in a crate that depends on
//! `celerity`, `serde` and `tokio` alone, as a user would paste it.
//!
//! The doctests compile against this crate's own dependencies, which are
//! more than an application has, so a snippet naming `http::` or
//! `serde_json::` would pass them and fail for the user. This reads every
//! Rust code block of the crate's docs and of the READMEs, and refuses a path
//! that starts with any other crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The crates an application's snippet may name, beside the standard ones.
const ALLOWED: [&str; 9] = ["celerity", "serde", "tokio", "std", "core", "alloc", "self", "super", "crate"];

/// A feature whose point is a crate the application uses with it: the docs
/// under its folder may name that crate too.
const FEATURE_CRATES: [(&str, &str); 4] = [
    ("runtime/src/validation/", "validator"),
    // Serving a tower service, or an axum `Router`, is for applications
    // that have one.
    ("runtime/src/http/service.rs", "tower"),
    ("runtime/src/http/service.rs", "axum"),
    ("runtime/src/app.rs", "axum"),
];

/// The crates the README's sections on tower and axum are about: their
/// snippets name them, and the examples that compile them for real
/// (`examples/gateway`, `examples/axum-router`) depend on them.
const README_INTEGRATIONS: [&str; 3] = ["tower", "tower_http", "axum"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The Rust code blocks of a Markdown text, with the line each starts on.
fn blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, bool, String)> = None;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match open.take() {
                Some((start, true, code)) => blocks.push((start, code)),
                Some((_, false, _)) => {}
                None => {
                    let info = info.trim();
                    let rust = info.is_empty()
                        || info.split(',').any(|part| {
                            matches!(part.trim(), "rust" | "no_run" | "ignore" | "should_panic" | "standalone_crate")
                        });
                    let other =
                        info.split(',').any(|part| matches!(part.trim(), "text" | "sh" | "json" | "yaml" | "toml"));
                    open = Some((number + 1, rust && !other, String::new()));
                }
            }
        } else if let Some((_, _, code)) = &mut open {
            code.push_str(line);
            code.push('\n');
        }
    }
    blocks
}

/// The doc comments of a source file, as Markdown, with the line each line
/// came from.
fn doc_text(source: &str) -> Vec<(usize, String)> {
    source
        .lines()
        .enumerate()
        .filter_map(|(number, line)| {
            let trimmed = line.trim_start();
            let doc = trimmed.strip_prefix("///").or_else(|| trimmed.strip_prefix("//!"))?;
            Some((number + 1, doc.strip_prefix(' ').unwrap_or(doc).to_string()))
        })
        .collect()
}

/// The names a `use` tree brings into scope: `a::b::c` gives `c`,
/// `a::{b, c as d}` gives `b` and `d`, `a::{self}` gives `a`.
fn imported(tree: &str, parent: &str, names: &mut BTreeSet<String>) {
    let tree = tree.trim().trim_end_matches(';').trim();
    if let Some(open) = tree.find('{') {
        let prefix = tree[..open].trim_end_matches("::");
        let parent = prefix.rsplit("::").next().unwrap_or(parent);
        let inner = tree[open + 1..].trim_end().trim_end_matches('}');
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    imported(&inner[start..i], parent, names);
                    start = i + 1;
                }
                _ => {}
            }
        }
        imported(&inner[start..], parent, names);
        return;
    }
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias.trim(),
        None => tree.rsplit("::").next().unwrap_or(tree).trim(),
    };
    match name {
        "" | "*" => {}
        "self" => {
            names.insert(parent.to_string());
        }
        name => {
            names.insert(name.to_string());
        }
    }
}

/// The names a snippet brings into scope itself: `use` imports and modules
/// (the lines hidden with `#` count too).
fn local_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut statement: Option<String> = None;
    for line in code.lines() {
        let line = line.trim_start().trim_start_matches('#').trim_start();
        if let Some(open) = &mut statement {
            open.push_str(line);
        } else if let Some(rest) = line.strip_prefix("use ").or_else(|| line.strip_prefix("pub use ")) {
            statement = Some(rest.to_string());
        } else if let Some(rest) = line.strip_prefix("mod ").or_else(|| line.strip_prefix("pub mod ")) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.insert(name);
        }
        if statement.as_ref().is_some_and(|s| s.trim_end().ends_with(';')) {
            let statement = statement.take().unwrap_or_default();
            if statement.trim_end_matches(';').trim() == "celerity::prelude::*" {
                names.extend(prelude_names().iter().cloned());
            }
            imported(&statement, "", &mut names);
        }
    }
    names
}

/// The names `celerity::prelude::*` brings into scope, read from the
/// prelude itself.
fn prelude_names() -> &'static BTreeSet<String> {
    static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
        let start = lib.find("pub mod prelude {").expect("the prelude module");
        let end = start + lib[start..].find("\n}").expect("the prelude's end");
        local_names(&lib[start + "pub mod prelude {".len()..end])
    })
}

/// `code` with its string literals and comments blanked out: a tag such as
/// `source::orders-queue::process` is not a path.
fn without_literals(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            'r' if chars.get(i + 1).is_some_and(|c| *c == '"' || *c == '#')
                && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) =>
            {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                let mut j = i + 1 + hashes + 1;
                while j < chars.len()
                    && !(chars[j] == '"' && chars[j + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes)
                {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + 1 + hashes;
            }
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                i = j + 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `code` without its `use` statements, and the first segment of each: an
/// import is checked by the crate it starts at, and its other segments are
/// not paths of their own.
fn split_uses(code: &str) -> (String, Vec<String>) {
    let mut rest = String::with_capacity(code.len());
    let mut roots = Vec::new();
    let mut in_use = false;
    for line in code.lines() {
        let bare = line.trim_start().trim_start_matches('#').trim_start();
        let statement = bare.strip_prefix("use ").or_else(|| bare.strip_prefix("pub use "));
        if let Some(tree) = statement {
            let root: String =
                tree.trim_start_matches("::").chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            roots.push(root);
            in_use = !bare.trim_end().ends_with(';');
        } else if in_use {
            in_use = !bare.trim_end().ends_with(';');
        } else {
            rest.push_str(line);
        }
        rest.push('\n');
    }
    (rest, roots)
}

/// The paths of `code` that start with a crate the snippet may not name.
fn foreign_paths(code: &str) -> Vec<String> {
    let code = &without_literals(code);
    let local = local_names(code);
    let (code, roots) = split_uses(code);
    let code = &code;
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("::") {
        let end = i + at;
        let mut start = end;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            start -= 1;
        }
        let word = &code[start..end];
        let before = if start > 0 { bytes[start - 1] } else { b' ' };
        let path_start = !matches!(before, b':' | b'.' | b'\'' | b'"');
        let lower = word.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
        if path_start && lower && !ALLOWED.contains(&word) && !local.contains(word) {
            found.push(word.to_string());
        }
        i = end + 2;
    }
    for root in roots {
        if !ALLOWED.contains(&root.as_str()) && !local.contains(&root) {
            found.push(root);
        }
    }
    found
}

#[test]
fn snippets_name_only_celerity_serde_tokio_and_std() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let mut problems = Vec::new();

    let mut sources = Vec::new();
    rust_files(&root.join("runtime/src"), &mut sources);
    rust_files(&root.join("macros/src"), &mut sources);
    for file in sources {
        let source = std::fs::read_to_string(&file).unwrap();
        let docs = doc_text(&source);
        let markdown: String = docs.iter().map(|(_, line)| format!("{line}\n")).collect();
        let relative = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        let feature_crates: Vec<&str> =
            FEATURE_CRATES.iter().filter(|(folder, _)| relative.starts_with(folder)).map(|(_, name)| *name).collect();
        for (start, code) in blocks(&markdown) {
            for path in foreign_paths(&code) {
                if feature_crates.contains(&path.as_str()) {
                    continue;
                }
                let line = docs[start - 1].0;
                problems.push(format!("{}:{line}: `{path}::`", file.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    // An example's README may name the example's own crate: its snippets
    // show that application's code.
    for (readme, own) in [
        ("README.md", None),
        ("examples/orders/README.md", Some("orders")),
        ("dev/README.md", None),
        ("testkit/README.md", None),
    ] {
        let Ok(text) = std::fs::read_to_string(root.join(readme)) else { continue };
        for (start, code) in blocks(&text) {
            let named = foreign_paths(&code).into_iter();
            for path in named.filter(|path| !README_INTEGRATIONS.contains(&path.as_str()) && own != Some(path.as_str()))
            {
                problems.push(format!("{readme}:{start}: `{path}::`"));
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "these snippets name a crate an application need not depend on (use what `celerity` re-exports):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_finds_a_foreign_path_and_lets_imports_and_methods_be() {
    assert!(prelude_names().contains("header") && prelude_names().contains("StatusCode"), "{:?}", prelude_names());
    assert_eq!(foreign_paths("use celerity::prelude::*;\nlet n = header::LOCATION;"), Vec::<String>::new());
    assert_eq!(foreign_paths("let n = header::LOCATION;"), ["header"]);
    assert_eq!(foreign_paths("let v: serde_json::Value = x;"), ["serde_json"]);
    assert_eq!(foreign_paths("fn f() -> http::StatusCode { todo!() }"), ["http"]);
    assert!(foreign_paths("use celerity::http::{header, response};\nlet _ = header::LOCATION;").is_empty());
    assert_eq!(foreign_paths("use celerity::http::HttpError;\nlet s = http::StatusCode::OK;"), ["http"]);
    assert!(foreign_paths("use celerity::{http::{self, Json}, Context};\nlet s = http::StatusCode::OK;").is_empty());
    assert!(foreign_paths("use celerity::proto::v1::{Ack, result::Outcome};\nlet _ = Outcome::Schedule;").is_empty());
    assert_eq!(foreign_paths("use serde_json::json;\nlet v = json!({});"), ["serde_json"]);
    assert!(foreign_paths("let v = record.json::<Order>()?; let s = std::mem::take(&mut x);").is_empty());
    assert!(foreign_paths("#[derive(serde::Deserialize)] struct S; celerity::http::Json(1);").is_empty());
    assert_eq!(blocks("a\n```rust\nlet x = 1;\n```\n```text\nnot::rust\n```\n").len(), 1);
    assert!(foreign_paths(r##"f("source::orders-queue::go"); g(r#"{"a::b": 1}"#); // http::x"##).is_empty());
}
