//! The rules of `de`, and the messages a caller sees.

use super::*;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

fn params(pairs: &[(&str, &[&str])]) -> Params {
    let mut p = Params::new();
    for (name, values) in pairs {
        p.insert(*name, values.iter().map(|v| v.to_string()).collect());
    }
    p
}

fn path<T: DeserializeOwned>(pairs: &[(&str, &[&str])]) -> Result<T, ParamsError> {
    from_params(&params(pairs), ParamsKind::Path)
}

fn query<T: DeserializeOwned>(pairs: &[(&str, &[&str])]) -> Result<T, ParamsError> {
    from_params(&params(pairs), ParamsKind::Query)
}

#[track_caller]
fn assert_err(err: ParamsError, code: &str, path: &[&str], message: &str) {
    assert_eq!(err.code(), code, "code of {err:?}");
    assert_eq!(err.path(), path, "path of {err:?}");
    assert_eq!(err.message(), message, "message of {err:?}");
    assert_eq!(err.to_string(), message);
}

// --- structs and maps ---------------------------------------------------

#[derive(Debug, Deserialize, PartialEq)]
struct Search {
    q: String,
    page: u32,
    tags: Vec<String>,
    limit: Option<u64>,
    #[serde(default)]
    verbose: bool,
}

#[test]
fn struct_fields_by_name() {
    let s: Search = query(&[
        ("tags", &["a", "b"]),
        ("q", &["rust"]),
        ("page", &["2"]),
        ("limit", &["10"]),
        ("verbose", &["true"]),
        ("ignored", &["x", "y"]),
    ])
    .unwrap();
    assert_eq!(
        s,
        Search { q: "rust".into(), page: 2, tags: vec!["a".into(), "b".into()], limit: Some(10), verbose: true }
    );
}

#[test]
fn struct_optional_and_default_fields_may_be_missing() {
    let s: Search = query(&[("q", &["x"]), ("page", &["1"]), ("tags", &[])]).unwrap();
    assert_eq!(s.limit, None);
    assert!(!s.verbose);
    assert!(s.tags.is_empty());
}

#[test]
fn struct_missing_field() {
    let err = query::<Search>(&[("q", &["x"]), ("tags", &["t"])]).unwrap_err();
    assert_err(err, "missing", &["page"], "missing query parameter `page`");
}

#[test]
fn struct_scalar_with_several_values() {
    let err = query::<Search>(&[("q", &["x", "y"]), ("page", &["1"]), ("tags", &[])]).unwrap_err();
    assert_err(err, "invalid", &["q"], "query parameter `q` has 2 values, expected one");
}

#[test]
fn struct_scalar_with_no_value() {
    let err = query::<Search>(&[("q", &[]), ("page", &["1"]), ("tags", &[])]).unwrap_err();
    assert_err(err, "missing", &["q"], "query parameter `q` has no value");
}

#[test]
fn struct_option_with_no_value_is_none() {
    #[derive(Deserialize)]
    struct S {
        a: Option<u8>,
        b: Option<Vec<u8>>,
        c: Option<Vec<u8>>,
    }
    let s: S = query(&[("a", &[]), ("b", &[]), ("c", &["1", "2"])]).unwrap();
    assert_eq!(s.a, None);
    assert_eq!(s.b, None);
    assert_eq!(s.c, Some(vec![1, 2]));
}

#[test]
fn struct_field_invalid_type() {
    #[derive(Debug, Deserialize)]
    struct P {
        #[allow(dead_code)]
        id: u64,
    }
    let err = path::<P>(&[("id", &["abc"])]).unwrap_err();
    assert_err(err, "invalid_type", &["id"], "path parameter `id`: invalid digit found in string, expected u64");
}

#[test]
fn struct_seq_element_invalid_type_has_index() {
    #[derive(Debug, Deserialize)]
    struct Q {
        #[allow(dead_code)]
        ids: Vec<u32>,
    }
    let err = query::<Q>(&[("ids", &["1", "x", "3"])]).unwrap_err();
    assert_err(
        err,
        "invalid_type",
        &["ids", "1"],
        "query parameter `ids` at index 1: invalid digit found in string, expected u32",
    );
}

#[test]
fn struct_tuple_field() {
    #[derive(Debug, Deserialize)]
    struct Q {
        range: (u8, u8),
    }
    let q: Q = query(&[("range", &["1", "5"])]).unwrap();
    assert_eq!(q.range, (1, 5));
    let err = query::<Q>(&[("range", &["1", "5", "9"])]).unwrap_err();
    assert_err(err, "invalid", &["range"], "query parameter `range` has 3 values, expected 2");
    let err = query::<Q>(&[("range", &["1", "300"])]).unwrap_err();
    assert_err(
        err,
        "invalid_type",
        &["range", "1"],
        "query parameter `range` at index 1: number too large to fit in target type, expected u8",
    );
}

#[test]
fn struct_renamed_fields() {
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Q {
        page_size: u16,
    }
    let q: Q = query(&[("pageSize", &["50"])]).unwrap();
    assert_eq!(q.page_size, 50);
    let err = query::<Q>(&[]).unwrap_err();
    assert_err(err, "missing", &["pageSize"], "missing query parameter `pageSize`");
}

#[test]
fn struct_deny_unknown_fields() {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Q {
        #[allow(dead_code)]
        a: Option<u8>,
        #[allow(dead_code)]
        b: Option<u8>,
    }
    assert!(query::<Q>(&[("a", &["1"])]).is_ok());
    let err = query::<Q>(&[("a", &["1"]), ("zzz", &["2"])]).unwrap_err();
    assert_err(err, "invalid", &["zzz"], "unknown query parameter `zzz`, expected `a` or `b`");
}

#[test]
fn struct_level_custom_error_has_no_path() {
    #[derive(Debug, Deserialize)]
    #[serde(try_from = "RawRange")]
    struct Range {
        #[allow(dead_code)]
        from: u32,
    }
    #[derive(Deserialize)]
    struct RawRange {
        from: u32,
        to: u32,
    }
    impl TryFrom<RawRange> for Range {
        type Error = String;
        fn try_from(r: RawRange) -> Result<Self, String> {
            if r.from <= r.to { Ok(Range { from: r.from }) } else { Err("`from` must not exceed `to`".into()) }
        }
    }
    assert!(query::<Range>(&[("from", &["1"]), ("to", &["2"])]).is_ok());
    let err = query::<Range>(&[("from", &["3"]), ("to", &["2"])]).unwrap_err();
    assert_err(err, "invalid", &[], "invalid query parameters: `from` must not exceed `to`");
}

#[test]
fn duplicate_field_via_alias() {
    #[derive(Debug, Deserialize)]
    struct Q {
        #[serde(alias = "n")]
        #[allow(dead_code)]
        name: String,
    }
    let err = query::<Q>(&[("name", &["a"]), ("n", &["b"])]).unwrap_err();
    assert_err(err, "invalid", &["name"], "query parameter `name` is given more than once");
}

#[test]
fn maps() {
    let m: HashMap<String, String> = query(&[("a", &["1"]), ("b", &["2"])]).unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m["a"], "1");
    let m: BTreeMap<String, Vec<String>> = query(&[("a", &["1", "2"]), ("b", &[])]).unwrap();
    assert_eq!(m["a"], ["1", "2"]);
    assert!(m["b"].is_empty());
    let m: BTreeMap<u32, bool> = query(&[("7", &["true"])]).unwrap();
    assert!(m[&7]);

    let err = query::<HashMap<String, String>>(&[("a", &["1", "2"])]).unwrap_err();
    assert_err(err, "invalid", &["a"], "query parameter `a` has 2 values, expected one");
    let err = query::<BTreeMap<u32, String>>(&[("x", &["1"])]).unwrap_err();
    assert_err(err, "invalid_type", &["x"], "query parameter `x`: invalid digit found in string, expected u32");
}

#[test]
fn struct_field_that_wants_a_map_is_invalid_type() {
    #[derive(Debug, Deserialize)]
    struct Q {
        #[allow(dead_code)]
        filter: HashMap<String, String>,
    }
    let err = query::<Q>(&[("filter", &["x"])]).unwrap_err();
    assert_err(
        err,
        "invalid_type",
        &["filter"],
        "query parameter `filter`: invalid type: string \"x\", expected a map",
    );
}

// --- single scalars -----------------------------------------------------

#[test]
fn single_scalar() {
    assert_eq!(path::<u64>(&[("id", &["42"])]).unwrap(), 42);
    assert_eq!(path::<String>(&[("slug", &["hello world"])]).unwrap(), "hello world");
    assert!(path::<bool>(&[("flag", &["true"])]).unwrap());
    assert_eq!(path::<Option<u64>>(&[("id", &["5"])]).unwrap(), Some(5));
    assert_eq!(path::<Option<u64>>(&[]).unwrap(), None);
}

#[test]
fn single_scalar_with_no_parameters() {
    let err = path::<u64>(&[]).unwrap_err();
    assert_err(err, "missing", &[], "expected exactly one path parameter, found none");
}

#[test]
fn single_scalar_with_several_parameters() {
    let err = path::<String>(&[("a", &["1"]), ("b", &["2"])]).unwrap_err();
    assert_err(err, "invalid", &[], "expected exactly one path parameter, found 2");
}

#[test]
fn single_scalar_with_several_values() {
    let err = path::<String>(&[("a", &["1", "2", "3"])]).unwrap_err();
    assert_err(err, "invalid", &["a"], "path parameter `a` has 3 values, expected one");
}

#[test]
fn single_scalar_invalid_type() {
    let err = path::<u64>(&[("id", &["-1"])]).unwrap_err();
    assert_err(err, "invalid_type", &["id"], "path parameter `id`: invalid digit found in string, expected u64");
}

/// A type that deserializes from a string through `FromStr`, like `Uuid`.
#[derive(Debug, PartialEq)]
struct Hex(u32);

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Hex;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a hex string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Hex, E> {
                u32::from_str_radix(v, 16).map(Hex).map_err(|e| E::custom(format_args!("hex parsing failed: {e}")))
            }
        }
        d.deserialize_str(V)
    }
}

#[test]
fn from_str_types() {
    assert_eq!(path::<Hex>(&[("id", &["ff"])]).unwrap(), Hex(255));
    let err = path::<Hex>(&[("id", &["zz"])]).unwrap_err();
    assert_err(err, "invalid_type", &["id"], "path parameter `id`: hex parsing failed: invalid digit found in string");

    #[derive(Debug, Deserialize)]
    struct S {
        ids: Vec<Hex>,
    }
    let s: S = query(&[("ids", &["a", "b"])]).unwrap();
    assert_eq!(s.ids, [Hex(10), Hex(11)]);
    let err = query::<S>(&[("ids", &["a", "g"])]).unwrap_err();
    assert_err(
        err,
        "invalid_type",
        &["ids", "1"],
        "query parameter `ids` at index 1: hex parsing failed: invalid digit found in string",
    );
}

#[test]
fn integers_and_floats() {
    fn one<T: DeserializeOwned>(v: &str) -> Result<T, ParamsError> {
        query(&[("v", &[v])])
    }
    // The field's own type is named, not the one it is read as.
    #[derive(Debug, serde::Deserialize)]
    struct Page {
        #[allow(dead_code)]
        limit: Option<usize>,
    }
    let err = query::<Page>(&[("limit", &["x"])]).unwrap_err();
    assert_eq!(err.message(), "query parameter `limit`: invalid digit found in string, expected usize");
    assert_eq!(one::<i8>("-128").unwrap(), i8::MIN);
    assert_eq!(one::<i16>("-300").unwrap(), -300);
    assert_eq!(one::<i32>("+7").unwrap(), 7);
    assert_eq!(one::<i64>(&i64::MIN.to_string()).unwrap(), i64::MIN);
    assert_eq!(one::<i128>(&i128::MAX.to_string()).unwrap(), i128::MAX);
    assert_eq!(one::<u8>("255").unwrap(), 255);
    assert_eq!(one::<u16>("65535").unwrap(), u16::MAX);
    assert_eq!(one::<u32>("0").unwrap(), 0);
    assert_eq!(one::<u64>(&u64::MAX.to_string()).unwrap(), u64::MAX);
    assert_eq!(one::<u128>(&u128::MAX.to_string()).unwrap(), u128::MAX);
    assert_eq!(one::<usize>("3").unwrap(), 3);
    assert_eq!(one::<f32>("1.5").unwrap(), 1.5);
    assert_eq!(one::<f64>("-2.25e3").unwrap(), -2250.0);

    assert_err(
        one::<u8>("256").unwrap_err(),
        "invalid_type",
        &["v"],
        "query parameter `v`: number too large to fit in target type, expected u8",
    );
    assert_err(
        one::<i32>("").unwrap_err(),
        "invalid_type",
        &["v"],
        "query parameter `v`: cannot parse integer from empty string, expected i32",
    );
    assert_err(
        one::<f64>("1.2.3").unwrap_err(),
        "invalid_type",
        &["v"],
        "query parameter `v`: invalid float literal, expected f64",
    );
}

#[test]
fn bools() {
    assert!(query::<bool>(&[("v", &["true"])]).unwrap());
    assert!(!query::<bool>(&[("v", &["false"])]).unwrap());
    for bad in ["1", "TRUE", "yes", ""] {
        assert_err(
            query::<bool>(&[("v", &[bad])]).unwrap_err(),
            "invalid_type",
            &["v"],
            "query parameter `v`: provided string was not `true` or `false`, expected a boolean",
        );
    }
}

#[test]
fn chars() {
    assert_eq!(path::<char>(&[("c", &["é"])]).unwrap(), 'é');
    assert_err(
        path::<char>(&[("c", &["ab"])]).unwrap_err(),
        "invalid_type",
        &["c"],
        "path parameter `c`: expected a single character, found 2 characters",
    );
    assert_err(
        path::<char>(&[("c", &[""])]).unwrap_err(),
        "invalid_type",
        &["c"],
        "path parameter `c`: expected a single character, found 0 characters",
    );
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
    Blue,
}

#[test]
fn unit_enums() {
    assert_eq!(path::<Color>(&[("c", &["green"])]).unwrap(), Color::Green);

    #[derive(Debug, Deserialize)]
    struct Q {
        colors: Vec<Color>,
        primary: Option<Color>,
    }
    let q: Q = query(&[("colors", &["red", "blue"]), ("primary", &["red"])]).unwrap();
    assert_eq!(q.colors, [Color::Red, Color::Blue]);
    assert_eq!(q.primary, Some(Color::Red));

    assert_err(
        path::<Color>(&[("c", &["pink"])]).unwrap_err(),
        "invalid_type",
        &["c"],
        "path parameter `c`: unknown variant `pink`, expected one of `red`, `green`, `blue`",
    );
    assert_err(
        query::<Q>(&[("colors", &["red", "pink"])]).unwrap_err(),
        "invalid_type",
        &["colors", "1"],
        "query parameter `colors` at index 1: unknown variant `pink`, expected one of `red`, `green`, `blue`",
    );
}

#[test]
fn non_unit_enum_variants_are_rejected() {
    #[derive(Debug, Deserialize)]
    enum E {
        #[allow(dead_code)]
        A(u32),
    }
    assert_err(
        path::<E>(&[("e", &["A"])]).unwrap_err(),
        "invalid_type",
        &["e"],
        "path parameter `e`: invalid type: unit variant, expected newtype variant",
    );
}

#[test]
fn newtypes_are_transparent() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct UserId(u64);
    #[derive(Debug, Deserialize, PartialEq)]
    struct Segments(Vec<String>);
    #[derive(Debug, Deserialize)]
    struct P {
        user: UserId,
        rest: Segments,
    }
    assert_eq!(path::<UserId>(&[("id", &["9"])]).unwrap(), UserId(9));
    let p: P = path(&[("user", &["1"]), ("rest", &["a", "b"])]).unwrap();
    assert_eq!(p.user, UserId(1));
    assert_eq!(p.rest, Segments(vec!["a".into(), "b".into()]));
    assert_err(
        path::<P>(&[("user", &["x"]), ("rest", &[])]).unwrap_err(),
        "invalid_type",
        &["user"],
        "path parameter `user`: invalid digit found in string, expected u64",
    );
}

#[test]
fn deserialize_any_yields_strings() {
    #[derive(Debug, Deserialize)]
    struct Q {
        one: serde_json::Value,
        many: serde_json::Value,
    }
    let q: Q = query(&[("one", &["42"]), ("many", &["a", "b"])]).unwrap();
    assert_eq!(q.one, serde_json::json!("42"));
    assert_eq!(q.many, serde_json::json!(["a", "b"]));

    let v: serde_json::Value = query(&[("x", &["1"]), ("y", &["2", "3"])]).unwrap();
    assert_eq!(v, serde_json::json!({"x": "1", "y": ["2", "3"]}));
}

#[test]
fn unit_ignores_parameters() {
    path::<()>(&[("a", &["1"])]).unwrap();
    path::<()>(&[]).unwrap();
}

// --- tuples ---------------------------------------------------------------

#[test]
fn tuples_take_parameters_in_order() {
    let (org, id): (String, u32) = path(&[("org", &["acme"]), ("id", &["7"])]).unwrap();
    assert_eq!((org.as_str(), id), ("acme", 7));

    let (id, rest): (u8, Vec<String>) = path(&[("id", &["1"]), ("path", &["a", "b", "c"])]).unwrap();
    assert_eq!(id, 1);
    assert_eq!(rest, ["a", "b", "c"]);

    #[derive(Debug, Deserialize, PartialEq)]
    struct Pair(String, i64);
    assert_eq!(path::<Pair>(&[("a", &["x"]), ("b", &["-1"])]).unwrap(), Pair("x".into(), -1));
}

#[test]
fn tuple_count_mismatch() {
    assert_err(
        path::<(String, u32)>(&[("a", &["1"]), ("b", &["2"]), ("c", &["3"])]).unwrap_err(),
        "invalid",
        &[],
        "expected 2 path parameters, found 3",
    );
    assert_err(path::<(String,)>(&[]).unwrap_err(), "invalid", &[], "expected 1 path parameter, found 0");
}

#[test]
fn tuple_element_errors() {
    assert_err(
        path::<(String, u32)>(&[("a", &["1"]), ("b", &["2", "3"])]).unwrap_err(),
        "invalid",
        &["b"],
        "path parameter `b` has 2 values, expected one",
    );
    assert_err(
        path::<(String, u32)>(&[("a", &["1"]), ("b", &["x"])]).unwrap_err(),
        "invalid_type",
        &["b"],
        "path parameter `b`: invalid digit found in string, expected u32",
    );
    assert_err(
        path::<(String, Vec<u8>)>(&[("a", &["1"]), ("b", &["1", "x"])]).unwrap_err(),
        "invalid_type",
        &["b", "1"],
        "path parameter `b` at index 1: invalid digit found in string, expected u8",
    );
}

// --- sequences ------------------------------------------------------------

#[test]
fn sequence_from_one_parameter() {
    let segs: Vec<String> = path(&[("path", &["docs", "a b", "c.txt"])]).unwrap();
    assert_eq!(segs, ["docs", "a b", "c.txt"]);
    let nums: Vec<u16> = query(&[("n", &["1", "2"])]).unwrap();
    assert_eq!(nums, [1, 2]);
    let none: Vec<String> = path(&[("path", &[])]).unwrap();
    assert!(none.is_empty());
}

#[test]
fn sequence_errors() {
    assert_err(
        path::<Vec<String>>(&[("a", &["1"]), ("b", &["2"])]).unwrap_err(),
        "invalid",
        &[],
        "expected exactly one path parameter, found 2",
    );
    assert_err(
        path::<Vec<String>>(&[]).unwrap_err(),
        "missing",
        &[],
        "expected exactly one path parameter, found none",
    );
    assert_err(
        query::<Vec<u8>>(&[("n", &["1", "x"])]).unwrap_err(),
        "invalid_type",
        &["n", "1"],
        "query parameter `n` at index 1: invalid digit found in string, expected u8",
    );
}

// --- the error type -------------------------------------------------------

#[test]
fn error_traits() {
    let err: ParamsError = de::Error::custom("boom");
    assert_eq!(err.code(), "invalid");
    assert!(err.path().is_empty());
    assert_eq!(err.message(), "boom");
    let clone = err.clone();
    assert_eq!(clone, err);
    let dyn_err: &dyn std::error::Error = &err;
    assert_eq!(dyn_err.to_string(), "boom");

    let worded = err.in_context(ParamsKind::Query, None, false);
    assert_eq!(worded.message(), "invalid query parameters: boom");
    // Wording is applied once only.
    let again = worded.clone().in_context(ParamsKind::Path, Some(("x", None)), true);
    assert_eq!(again, worded);

    let new = ParamsError::new(vec!["a".into()], "invalid", "m");
    assert_eq!((new.path(), new.code(), new.message()), (&["a".to_string()][..], "invalid", "m"));
}

#[test]
fn kind_display() {
    assert_eq!(ParamsKind::Path.to_string(), "path");
    assert_eq!(ParamsKind::Query.to_string(), "query");
}

// --- properties -----------------------------------------------------------

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Mixed {
    a: Option<u64>,
    b: Vec<String>,
}

fn arb_params() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    prop::collection::vec(
        (
            prop_oneof![Just("a".to_string()), Just("b".to_string()), any::<String>()],
            prop::collection::vec(any::<String>(), 0..4),
        ),
        0..4,
    )
}

fn build(entries: &[(String, Vec<String>)]) -> Params {
    let mut p = Params::new();
    for (name, values) in entries {
        p.insert(name.clone(), values.clone());
    }
    p
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(name in any::<String>(), value in any::<String>()) {
        let p = build(&[(name, vec![value])]);
        for kind in [ParamsKind::Path, ParamsKind::Query] {
            let _ = from_params::<u32>(&p, kind);
            let s = from_params::<String>(&p, kind);
            prop_assert_eq!(s.as_deref().ok(), p.iter().next().map(|(_, v)| v[0].as_str()));
            let _ = from_params::<Mixed>(&p, kind);
            let _ = from_params::<(u32, Vec<String>)>(&p, kind);
            let _ = from_params::<Color>(&p, kind);
            let _ = from_params::<char>(&p, kind);
        }
    }

    #[test]
    fn arbitrary_params_never_panic(entries in arb_params()) {
        let p = build(&entries);
        for kind in [ParamsKind::Path, ParamsKind::Query] {
            let results = [
                from_params::<u32>(&p, kind).err(),
                from_params::<String>(&p, kind).err(),
                from_params::<Mixed>(&p, kind).err(),
                from_params::<Vec<String>>(&p, kind).err(),
                from_params::<(String, u8)>(&p, kind).err(),
                from_params::<HashMap<String, Vec<String>>>(&p, kind).err(),
                from_params::<serde_json::Value>(&p, kind).err(),
            ];
            for err in results.into_iter().flatten() {
                prop_assert!(["invalid", "invalid_type", "missing"].contains(&err.code()));
                prop_assert!(!err.message().is_empty());
                prop_assert!(err.pending.is_none());
            }
        }
    }

    #[test]
    fn u64_round_trips(n in any::<u64>()) {
        let p = build(&[("id".to_string(), vec![n.to_string()])]);
        prop_assert_eq!(from_params::<u64>(&p, ParamsKind::Path), Ok(n));
        prop_assert_eq!(from_params::<(u64,)>(&p, ParamsKind::Path), Ok((n,)));
    }
}
