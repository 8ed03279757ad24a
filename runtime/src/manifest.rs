//! The handler manifest: every handler the binary serves, as JSON, printed
//! instead of serving when `CELERITY_EXTRACT_MANIFEST` is set or `--manifest`
//! is passed.
//!
//! ```json
//! {
//!   "sdk": "celerity-rs",
//!   "sdkVersion": "0.1.0",
//!   "protocolVersion": "1.0",
//!   "handlers": [
//!     {
//!       "tag": "GET::/orders/{id}",
//!       "kind": "http",
//!       "handlerId": "orders::get_order",
//!       "function": "orders::get_order",
//!       "file": "src/orders.rs",
//!       "line": 12,
//!       "maxConcurrent": 8,
//!       "guards": ["jwt"]
//!     },
//!     {
//!       "name": "processOrders",
//!       "kind": "consumer",
//!       "handlerId": "orders::process",
//!       "function": "orders::process",
//!       "file": "src/orders.rs",
//!       "line": 30,
//!       "maxConcurrent": null,
//!       "guards": []
//!     }
//!   ]
//! }
//! ```
//!
//! A handler bound by tag has `"tag"`, one bound by blueprint handler name has
//! `"name"`. `"handlerId"` is what a blueprint handler's `spec.handler` is set
//! to for a deployment to name this handler (its function's path; on AWS
//! Lambda the deployment passes it as `CELERITY_HANDLER_ID`). Handlers are sorted: by tag, then by name, then by function and
//! source location, so the output is the same from build to build.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};

use serde::Serialize;

use crate::error::Error;
use crate::registry::{HandlerKey, Registration};
use crate::version::{PROTOCOL_MAJOR, PROTOCOL_MINOR, SDK_VERSION};

/// The environment variable that asks for the manifest.
pub(crate) const ENV: &str = "CELERITY_EXTRACT_MANIFEST";

/// The command-line flag that asks for the manifest.
pub(crate) const FLAG: &str = "--manifest";

/// Whether the process was asked to print its manifest and exit:
/// `CELERITY_EXTRACT_MANIFEST` set (to anything but empty, `0` or `false`),
/// or `--manifest` among the arguments.
pub(crate) fn requested() -> bool {
    requested_by(std::env::var_os(ENV).as_deref(), std::env::args_os().skip(1))
}

fn requested_by(env: Option<&OsStr>, args: impl IntoIterator<Item = OsString>) -> bool {
    let by_env = env.is_some_and(|value| {
        let value = value.to_string_lossy();
        let value = value.trim();
        !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
    });
    by_env || args.into_iter().any(|arg| arg == FLAG)
}

/// The manifest of `registrations`, as pretty-printed JSON.
pub(crate) fn render(registrations: &[Registration]) -> String {
    let mut sorted: Vec<&Registration> = registrations.iter().collect();
    sorted.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    let manifest = Manifest {
        sdk: "celerity-rs",
        sdk_version: SDK_VERSION,
        protocol_version: format!("{PROTOCOL_MAJOR}.{PROTOCOL_MINOR}"),
        handlers: sorted.into_iter().map(Entry::of).collect(),
    };
    // Serializing strings and numbers cannot fail.
    serde_json::to_string_pretty(&manifest).unwrap_or_default()
}

/// Writes the manifest of `registrations` to stdout. A reader that stops
/// early, as `--manifest | head` does, is not an error: what it read is
/// all it wanted.
pub(crate) fn print(registrations: &[Registration]) -> Result<(), Error> {
    write_to(&mut std::io::stdout().lock(), registrations)
}

fn write_to(out: &mut impl Write, registrations: &[Registration]) -> Result<(), Error> {
    match writeln!(out, "{}", render(registrations)).and_then(|()| out.flush()) {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            Err(Error::typed("ManifestError", format!("the manifest could not be written to stdout: {error}")))
        }
        _ => Ok(()),
    }
}

fn sort_key(registration: &Registration) -> (u8, &str, &str, &str, u32) {
    let (rank, key) = match &registration.key {
        HandlerKey::Tag(tag) => (0, tag.as_str()),
        HandlerKey::Name(name) => (1, name.as_str()),
    };
    (rank, key, registration.origin.function, registration.origin.file, registration.origin.line)
}

/// The manifest, with its fields in the order they are printed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Manifest<'a> {
    sdk: &'static str,
    sdk_version: &'static str,
    protocol_version: String,
    handlers: Vec<Entry<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    kind: &'static str,
    /// What a blueprint's `spec.handler` names it by.
    handler_id: &'static str,
    function: &'static str,
    file: &'static str,
    line: u32,
    max_concurrent: Option<u32>,
    /// The guards protecting it, by name, in order.
    guards: &'a [String],
}

impl<'a> Entry<'a> {
    fn of(registration: &'a Registration) -> Self {
        let (tag, name) = match &registration.key {
            HandlerKey::Tag(tag) => (Some(tag.as_str()), None),
            HandlerKey::Name(name) => (None, Some(name.as_str())),
        };
        Entry {
            tag,
            name,
            kind: registration.kind.as_str(),
            handler_id: registration.origin.function,
            function: registration.origin.function,
            file: registration.origin.file,
            line: registration.origin.line,
            max_concurrent: registration.max_concurrent,
            guards: &registration.guards,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Origin;
    use serde_json::{Value, json};

    async fn handler() -> &'static str {
        "ok"
    }

    fn registration(key: HandlerKey, function: &'static str, line: u32) -> Registration {
        Registration::http(key, handler).origin(Origin { function, file: "src/main.rs", line })
    }

    #[test]
    fn renders_every_field_sorted() {
        let registrations = vec![
            registration(HandlerKey::Name("getOrder".into()), "app::get_order", 30).max_concurrent(4),
            registration(HandlerKey::Tag("POST::/orders".into()), "app::create", 20).guard("jwt").guard("admin"),
            registration(HandlerKey::Tag("GET::/orders".into()), "app::list", 10),
        ];
        let manifest: Value = serde_json::from_str(&render(&registrations)).unwrap();
        assert_eq!(manifest["sdk"], "celerity-rs");
        assert_eq!(manifest["sdkVersion"], SDK_VERSION);
        assert_eq!(manifest["protocolVersion"], "1.0");
        assert_eq!(
            manifest["handlers"],
            json!([
                {"tag": "GET::/orders", "kind": "http", "handlerId": "app::list", "function": "app::list", "file": "src/main.rs", "line": 10, "maxConcurrent": null, "guards": []},
                {"tag": "POST::/orders", "kind": "http", "handlerId": "app::create", "function": "app::create", "file": "src/main.rs", "line": 20, "maxConcurrent": null, "guards": ["jwt", "admin"]},
                {"name": "getOrder", "kind": "http", "handlerId": "app::get_order", "function": "app::get_order", "file": "src/main.rs", "line": 30, "maxConcurrent": 4, "guards": []},
            ])
        );
    }

    #[test]
    fn order_does_not_depend_on_registration_order() {
        let a = registration(HandlerKey::Tag("GET::/a".into()), "app::a", 1);
        let b = registration(HandlerKey::Tag("GET::/b".into()), "app::b", 2);
        let c = registration(HandlerKey::Tag("GET::/a".into()), "app::c", 3);
        let one = render(&[a.clone(), b.clone(), c.clone()]);
        assert_eq!(one, render(&[c.clone(), b.clone(), a.clone()]));
        assert_eq!(one, render(&[b, c, a]));
    }

    #[test]
    fn fields_are_printed_in_a_fixed_order() {
        let text = render(&[registration(HandlerKey::Tag("GET::/a".into()), "app::a", 1)]);
        let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap_or_else(|| panic!("{key} missing:\n{text}"));
        let top = ["sdk", "sdkVersion", "protocolVersion", "handlers"].map(at);
        assert!(top.is_sorted(), "{text}");
        let entry = ["tag", "kind", "handlerId", "function", "file", "line", "maxConcurrent"].map(at);
        assert!(entry.is_sorted(), "{text}");
        assert!(!text.contains("\"name\""), "{text}");
    }

    #[test]
    fn empty_manifest() {
        let manifest: Value = serde_json::from_str(&render(&[])).unwrap();
        assert_eq!(manifest["handlers"], json!([]));
    }

    #[test]
    fn requested_by_env_or_flag() {
        let none = || Vec::<OsString>::new();
        assert!(!requested_by(None, none()));
        assert!(requested_by(Some(OsStr::new("1")), none()));
        assert!(requested_by(Some(OsStr::new("true")), none()));
        assert!(!requested_by(Some(OsStr::new("")), none()));
        assert!(!requested_by(Some(OsStr::new("0")), none()));
        assert!(!requested_by(Some(OsStr::new("FALSE")), none()));
        assert!(requested_by(None, vec![OsString::from("--manifest")]));
        assert!(!requested_by(None, vec![OsString::from("--manifest=x"), OsString::from("manifest")]));
    }

    /// A writer that fails every write with `kind`.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_reader_that_stops_early_is_not_an_error_but_a_failing_stdout_is() {
        let registrations = vec![registration(HandlerKey::Tag("GET::/orders".into()), "app::list", 10)];
        let mut out = Vec::new();
        write_to(&mut out, &registrations).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), render(&registrations) + "\n");
        assert!(write_to(&mut Failing(io::ErrorKind::BrokenPipe), &registrations).is_ok());
        let error = write_to(&mut Failing(io::ErrorKind::StorageFull), &registrations).unwrap_err();
        assert!(error.to_string().contains("the manifest could not be written to stdout"), "{error}");
    }
}
