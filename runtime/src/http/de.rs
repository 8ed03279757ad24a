//! A serde [`Deserializer`](serde::Deserializer) over [`Params`], used by the
//! `Path<T>` and `Query<T>` extractors.
//!
//! Rules, by the shape of the target type:
//!
//! - **struct or map**: each field is looked up by name. A sequence-typed
//!   field (`Vec<U>`, tuples, ...) gets all of the parameter's values; any
//!   other field gets the single value, and a parameter with several values
//!   is an error. Missing fields follow serde's usual rules (`Option` is
//!   `None`, `#[serde(default)]` applies, anything else is an error).
//! - **single scalar**: exactly one parameter with exactly one value.
//! - **tuple or tuple struct**: the parameters in order, one element each.
//! - **sequence**: the values of the one parameter (e.g. the segments of a
//!   catch-all path parameter).
//!
//! Scalars are parsed from the string value; unit enum variants are matched
//! by name.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

use super::params::Params;
use crate::excerpt::{excerpt, quoted};

const INVALID: &str = "invalid";
const INVALID_TYPE: &str = "invalid_type";
const MISSING: &str = "missing";

/// Which kind of parameters are being deserialized; used only to word error
/// messages ("path parameter `id`" vs "query parameter `page`").
///
/// Displays as `path` or `query`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamsKind {
    /// Parameters captured from the route path.
    Path,
    /// Parameters from the query string.
    Query,
}

impl fmt::Display for ParamsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParamsKind::Path => "path",
            ParamsKind::Query => "query",
        })
    }
}

/// Deserializes `T` from `params` following the rules in the module docs.
pub(crate) fn from_params<T: DeserializeOwned>(params: &Params, kind: ParamsKind) -> Result<T, ParamsError> {
    T::deserialize(ParamsDeserializer { params, kind }).map_err(|e| e.in_context(kind, None, false))
}

/// An error extracting typed values from path or query parameters.
///
/// Carries the location of the problem ([`path`](Self::path)), a short
/// machine-readable [`code`](Self::code) and a [`message`](Self::message)
/// meant to be shown to the API caller, such as
/// ``path parameter `id`: invalid digit found in string, expected u64``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsError {
    path: Vec<String>,
    code: &'static str,
    message: String,
    /// `Some` while the error has not been worded yet: `message` then holds
    /// only the detail, and the full message is built once the parameter
    /// kind and name are known.
    pending: Option<Pending>,
}

/// How an error that is still being propagated is to be worded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// `"{subject}: {detail}"`.
    Detail,
    /// Like `Detail`, from [`de::Error::custom`]; raised while visiting a
    /// single value it means the value did not parse, so it becomes
    /// `invalid_type`.
    Custom,
    /// `"missing {kind} parameter `{name}`"`.
    Missing,
    /// `"unknown {kind} parameter `{name}`{detail}"`.
    Unknown,
    /// `"{kind} parameter `{name}` is given more than once"`.
    Duplicate,
}

impl ParamsError {
    /// A fully worded error.
    pub(crate) fn new(path: Vec<String>, code: &'static str, message: impl Into<String>) -> Self {
        ParamsError { path, code, message: message.into(), pending: None }
    }

    fn pending(code: &'static str, pending: Pending, path: Vec<String>, detail: String) -> Self {
        ParamsError { path, code, message: detail, pending: Some(pending) }
    }

    /// Where the problem is: the parameter (or field) name, followed by the
    /// index of the value for an element of a sequence. Empty when the
    /// problem concerns the parameters as a whole (e.g. a count mismatch).
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// A short machine-readable code: `"invalid_type"` for a value that does
    /// not parse as the expected type, `"missing"` for a missing parameter
    /// and `"invalid"` for any other problem.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// A human-readable description, suitable for the API caller.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Words a pending error now that its context is known; an error that is
    /// already worded is returned unchanged. `at` is the parameter name and
    /// value index, used when the error carries no path of its own. `value`
    /// is true when the error was raised while visiting a single value.
    fn in_context(mut self, kind: ParamsKind, at: Option<(&str, Option<usize>)>, value: bool) -> Self {
        let Some(pending) = self.pending.take() else {
            return self;
        };
        if self.path.is_empty()
            && let Some((name, index)) = at
        {
            self.path = location(name, index);
        }
        if value && pending == Pending::Custom {
            self.code = INVALID_TYPE;
        }
        let detail = std::mem::take(&mut self.message);
        self.message = match (pending, self.path.first()) {
            (Pending::Missing, Some(name)) => format!("missing {kind} parameter `{name}`"),
            (Pending::Unknown, Some(name)) => format!("unknown {kind} parameter `{name}`{detail}"),
            (Pending::Duplicate, Some(name)) => {
                format!("{kind} parameter `{name}` is given more than once")
            }
            (_, Some(_)) => format!("{}: {detail}", subject(kind, &self.path)),
            (_, None) => format!("invalid {kind} parameters: {detail}"),
        };
        self
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParamsError {}

// Every value and name a request sent is echoed through `excerpt`: a
// parameter may be as long as the request, and the message goes back to the
// caller, twice (as the error and as its detail).
impl de::Error for ParamsError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        // A type's own message may quote the value it refused.
        Self::pending(INVALID, Pending::Custom, Vec::new(), excerpt(&msg.to_string()).into_owned())
    }

    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        let unexp = unexpected(unexp);
        Self::pending(INVALID_TYPE, Pending::Detail, Vec::new(), format!("invalid type: {unexp}, expected {exp}"))
    }

    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        let unexp = unexpected(unexp);
        Self::pending(INVALID_TYPE, Pending::Detail, Vec::new(), format!("invalid value: {unexp}, expected {exp}"))
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        Self::pending(INVALID, Pending::Detail, Vec::new(), format!("invalid length {len}, expected {exp}"))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::pending(
            INVALID_TYPE,
            Pending::Detail,
            Vec::new(),
            format!("unknown variant `{}`, {}", excerpt(variant), one_of(expected)),
        )
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let detail = if expected.is_empty() { String::new() } else { format!(", {}", one_of(expected)) };
        Self::pending(INVALID, Pending::Unknown, vec![excerpt(field).into_owned()], detail)
    }

    fn missing_field(field: &'static str) -> Self {
        Self::pending(MISSING, Pending::Missing, vec![field.to_owned()], String::new())
    }

    fn duplicate_field(field: &'static str) -> Self {
        Self::pending(INVALID, Pending::Duplicate, vec![field.to_owned()], String::new())
    }
}

/// An unexpected value as serde words it, with a string the request sent cut.
fn unexpected(unexp: de::Unexpected<'_>) -> String {
    match unexp {
        de::Unexpected::Str(text) => format!("string {}", quoted(text)),
        de::Unexpected::Other(text) => excerpt(text).into_owned(),
        other => other.to_string(),
    }
}

fn location(name: &str, index: Option<usize>) -> Vec<String> {
    let mut path = vec![excerpt(name).into_owned()];
    if let Some(i) = index {
        path.push(i.to_string());
    }
    path
}

/// "query parameter `ids`" or "query parameter `ids` at index 1".
fn subject(kind: ParamsKind, path: &[String]) -> String {
    match path {
        [] => format!("{kind} parameters"),
        [name] => format!("{kind} parameter `{name}`"),
        [name, index, ..] => format!("{kind} parameter `{name}` at index {index}"),
    }
}

fn one_of(names: &[&str]) -> String {
    match names {
        [] => "there are none".to_owned(),
        [a] => format!("expected `{a}`"),
        [a, b] => format!("expected `{a}` or `{b}`"),
        _ => {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("expected one of {}", list.join(", "))
        }
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// Where a value deserializer is: which parameter, and which of its values.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    kind: ParamsKind,
    name: &'a str,
    index: Option<usize>,
}

impl Ctx<'_> {
    fn path(&self) -> Vec<String> {
        location(self.name, self.index)
    }

    /// `"{subject}: {detail}"`.
    fn error(&self, code: &'static str, detail: impl fmt::Display) -> ParamsError {
        let path = self.path();
        let message = format!("{}: {detail}", subject(self.kind, &path));
        ParamsError::new(path, code, message)
    }

    /// `"{subject} {phrase}"`.
    fn error_phrase(&self, code: &'static str, phrase: impl fmt::Display) -> ParamsError {
        let path = self.path();
        let message = format!("{} {phrase}", subject(self.kind, &path));
        ParamsError::new(path, code, message)
    }

    fn wrap(&self, e: ParamsError) -> ParamsError {
        e.in_context(self.kind, Some((self.name, self.index)), false)
    }

    fn wrap_value(&self, e: ParamsError) -> ParamsError {
        e.in_context(self.kind, Some((self.name, self.index)), true)
    }
}

// ---------------------------------------------------------------------------
// One value.

/// Deserializes a single string value (or a parameter name, as a map key).
#[derive(Clone, Copy)]
struct ValueDeserializer<'de> {
    value: &'de str,
    ctx: Ctx<'de>,
}

macro_rules! parse_value {
    ($($method:ident => $visit:ident($ty:ty)),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            // The visitor names the field's own type (`usize` reads as a
            // `u64`, but says `usize`).
            let parsed: $ty = match self.value.parse() {
                Ok(parsed) => parsed,
                Err(e) => {
                    let expected = &visitor as &dyn de::Expected;
                    return Err(self.ctx.error(INVALID_TYPE, format_args!("{e}, expected {expected}")));
                }
            };
            visitor.$visit(parsed).map_err(|e| self.ctx.wrap_value(e))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDeserializer<'de> {
    type Error = ParamsError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_borrowed_str(self.value).map_err(|e| self.ctx.wrap_value(e))
    }

    parse_value! {
        deserialize_bool => visit_bool(bool),
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_i128 => visit_i128(i128),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
        deserialize_u128 => visit_u128(u128),
        deserialize_f32 => visit_f32(f32),
        deserialize_f64 => visit_f64(f64),
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let mut chars = self.value.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => visitor.visit_char(c).map_err(|e| self.ctx.wrap_value(e)),
            _ => Err(self.ctx.error(
                INVALID_TYPE,
                format_args!("expected a single character, found {}", count(self.value.chars().count(), "character")),
            )),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_borrowed_bytes(self.value.as_bytes()).map_err(|e| self.ctx.wrap_value(e))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_some(self).map_err(|e| self.ctx.wrap(e))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_unit().map_err(|e| self.ctx.wrap(e))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_newtype_struct(self).map_err(|e| self.ctx.wrap(e))
    }

    /// A single value read as a sequence is a sequence of one.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let mut seq = OneValue { value: Some(self) };
        let out = visitor.visit_seq(&mut seq).map_err(|e| self.ctx.wrap(e))?;
        match seq.value {
            None => Ok(out),
            Some(_) => Err(self.ctx.error_phrase(INVALID, "has 1 value, expected none")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ParamsError> {
        if len != 1 {
            return Err(self.ctx.error_phrase(INVALID, format_args!("has 1 value, expected {len}")));
        }
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_tuple(len, visitor)
    }

    /// A string is not a map; the visitor reports the type mismatch.
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_any(visitor)
    }

    /// Only unit variants, named by the value.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_enum(self).map_err(|e| self.ctx.wrap_value(e))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }
}

impl<'de> EnumAccess<'de> for ValueDeserializer<'de> {
    type Error = ParamsError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), ParamsError> {
        let variant = seed.deserialize(self)?;
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for ValueDeserializer<'de> {
    type Error = ParamsError;

    fn unit_variant(self) -> Result<(), ParamsError> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, _seed: S) -> Result<S::Value, ParamsError> {
        Err(self.non_unit_variant("newtype variant"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, ParamsError> {
        Err(self.non_unit_variant("tuple variant"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ParamsError> {
        Err(self.non_unit_variant("struct variant"))
    }
}

impl ValueDeserializer<'_> {
    fn non_unit_variant(&self, expected: &str) -> ParamsError {
        self.ctx.error(INVALID_TYPE, format_args!("invalid type: unit variant, expected {expected}"))
    }
}

/// A sequence holding one value.
struct OneValue<'de> {
    value: Option<ValueDeserializer<'de>>,
}

impl<'de> SeqAccess<'de> for OneValue<'de> {
    type Error = ParamsError;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        match self.value.take() {
            Some(value) => seed.deserialize(value).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.value.is_some()))
    }
}

// ---------------------------------------------------------------------------
// All the values of one parameter.

/// Deserializes all the values of one parameter: a sequence gets them all,
/// a scalar requires exactly one.
#[derive(Clone, Copy)]
struct ValuesDeserializer<'de> {
    values: &'de [String],
    ctx: Ctx<'de>,
}

impl<'de> ValuesDeserializer<'de> {
    fn single(self) -> Result<ValueDeserializer<'de>, ParamsError> {
        match self.values {
            [value] => Ok(ValueDeserializer { value, ctx: self.ctx }),
            [] => Err(self.ctx.error_phrase(MISSING, "has no value")),
            values => {
                Err(self.ctx.error_phrase(INVALID, format_args!("has {}, expected one", count(values.len(), "value"))))
            }
        }
    }

    fn check_len(self, len: usize) -> Result<(), ParamsError> {
        if self.values.len() == len {
            Ok(())
        } else {
            Err(self
                .ctx
                .error_phrase(INVALID, format_args!("has {}, expected {len}", count(self.values.len(), "value"))))
        }
    }
}

macro_rules! forward_to_single {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.single()?.$method(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValuesDeserializer<'de> {
    type Error = ParamsError;

    /// One value is a string; otherwise a sequence of strings.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.values {
            [_] => self.single()?.deserialize_any(visitor),
            _ => self.deserialize_seq(visitor),
        }
    }

    forward_to_single! {
        deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
        deserialize_char deserialize_str deserialize_string deserialize_identifier
        deserialize_bytes deserialize_byte_buf
        deserialize_map
    }

    /// Present with values is `Some`; a parameter with no values is `None`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if self.values.is_empty() {
            visitor.visit_none().map_err(|e| self.ctx.wrap(e))
        } else {
            visitor.visit_some(self).map_err(|e| self.ctx.wrap(e))
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_unit().map_err(|e| self.ctx.wrap(e))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_newtype_struct(self).map_err(|e| self.ctx.wrap(e))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        let mut seq = ValuesSeq { values: self.values.iter().enumerate(), ctx: self.ctx };
        let out = visitor.visit_seq(&mut seq).map_err(|e| self.ctx.wrap(e))?;
        let consumed = self.values.len() - seq.values.len();
        if consumed == self.values.len() {
            Ok(out)
        } else {
            Err(self
                .ctx
                .error_phrase(INVALID, format_args!("has {}, expected {consumed}", count(self.values.len(), "value"))))
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ParamsError> {
        self.check_len(len)?;
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.single()?.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.single()?.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_unit(visitor)
    }
}

/// The values of one parameter as a sequence.
struct ValuesSeq<'de> {
    values: std::iter::Enumerate<std::slice::Iter<'de, String>>,
    ctx: Ctx<'de>,
}

impl<'de> SeqAccess<'de> for ValuesSeq<'de> {
    type Error = ParamsError;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        let Some((index, value)) = self.values.next() else {
            return Ok(None);
        };
        let ctx = Ctx { index: Some(index), ..self.ctx };
        seed.deserialize(ValueDeserializer { value, ctx }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.values.len())
    }
}

// ---------------------------------------------------------------------------
// All the parameters.

/// Deserializes the whole set of parameters.
#[derive(Clone, Copy)]
struct ParamsDeserializer<'de> {
    params: &'de Params,
    kind: ParamsKind,
}

impl<'de> ParamsDeserializer<'de> {
    /// The one parameter, for a target that is a scalar or a sequence.
    fn only(self) -> Result<ValuesDeserializer<'de>, ParamsError> {
        let mut iter = self.params.iter();
        match (iter.next(), iter.len()) {
            (Some((name, values)), 0) => Ok(ValuesDeserializer { values, ctx: self.ctx(name) }),
            (None, _) => Err(ParamsError::new(
                Vec::new(),
                MISSING,
                format!("expected exactly one {} parameter, found none", self.kind),
            )),
            (Some(_), _) => Err(ParamsError::new(
                Vec::new(),
                INVALID,
                format!("expected exactly one {} parameter, found {}", self.kind, self.params.len()),
            )),
        }
    }

    fn ctx(self, name: &'de str) -> Ctx<'de> {
        Ctx { kind: self.kind, name, index: None }
    }
}

macro_rules! forward_to_only {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.only()?.$method(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ParamsDeserializer<'de> {
    type Error = ParamsError;

    /// The parameters as a whole are a map.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_map(visitor)
    }

    forward_to_only! {
        deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
        deserialize_char deserialize_str deserialize_string deserialize_identifier
        deserialize_bytes deserialize_byte_buf
        deserialize_seq
    }

    /// No parameters is `None`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if self.params.is_empty() { visitor.visit_none() } else { visitor.visit_some(self) }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_newtype_struct(self)
    }

    /// The parameters in order, one per element.
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, ParamsError> {
        let found = self.params.len();
        if found != len {
            return Err(ParamsError::new(
                Vec::new(),
                INVALID,
                format!("expected {}, found {found}", count(len, &format!("{} parameter", self.kind))),
            ));
        }
        visitor.visit_seq(ParamsSeq { iter: self.params.iter(), de: self })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_map(ParamsMap { iter: self.params.iter(), value: None, de: self })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        self.only()?.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_unit()
    }
}

/// The parameters as a map from name to values.
struct ParamsMap<'de, I> {
    iter: I,
    value: Option<ValuesDeserializer<'de>>,
    de: ParamsDeserializer<'de>,
}

impl<'de, I> MapAccess<'de> for ParamsMap<'de, I>
where
    I: ExactSizeIterator<Item = (&'de str, &'de [String])>,
{
    type Error = ParamsError;

    fn next_key_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        let Some((name, values)) = self.iter.next() else {
            return Ok(None);
        };
        let ctx = self.de.ctx(name);
        self.value = Some(ValuesDeserializer { values, ctx });
        seed.deserialize(ValueDeserializer { value: name, ctx }).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, ParamsError> {
        match self.value.take() {
            Some(values) => seed.deserialize(values),
            None => Err(de::Error::custom("a value was requested before its name")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// The parameters as a sequence, for tuples.
struct ParamsSeq<'de, I> {
    iter: I,
    de: ParamsDeserializer<'de>,
}

impl<'de, I> SeqAccess<'de> for ParamsSeq<'de, I>
where
    I: ExactSizeIterator<Item = (&'de str, &'de [String])>,
{
    type Error = ParamsError;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        let Some((name, values)) = self.iter.next() else {
            return Ok(None);
        };
        let ctx = self.de.ctx(name);
        seed.deserialize(ValuesDeserializer { values, ctx }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

#[cfg(test)]
mod tests {
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
        assert_err(
            err,
            "invalid_type",
            &["id"],
            "path parameter `id`: hex parsing failed: invalid digit found in string",
        );

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
}
