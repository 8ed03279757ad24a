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
//!
//! One deserializer for each level the rules speak of: all the parameters
//! (`ParamsDeserializer`), the values of one (`ValuesDeserializer`), and one
//! value (`ValueDeserializer`). A level hands a target it cannot take
//! itself to the one below (`forward_to!`), and what every level does alike
//! is written once (`alike_at_every_level!`). Errors are worded once their
//! parameter is known (`ParamsError::in_context`), in serde's words, with
//! anything the request sent cut to an excerpt.

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

/// A type's, field's or variant's name, and a list of them, as serde gives
/// them.
type Name = &'static str;
type Names = &'static [&'static str];

/// The methods every level deserializes alike: a unit struct is a unit, a
/// tuple struct a tuple, a struct a map, an ignored value a unit, a newtype
/// struct its one field; each error raised by the visitor gets the level's context
/// (`wrap`).
macro_rules! alike_at_every_level {
    () => {
        fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            visitor.visit_unit().map_err(|e| self.wrap(e))
        }

        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            visitor: V,
        ) -> Result<V::Value, ParamsError> {
            self.deserialize_unit(visitor)
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            visitor: V,
        ) -> Result<V::Value, ParamsError> {
            visitor.visit_newtype_struct(self).map_err(|e| self.wrap(e))
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, ParamsError> {
            self.deserialize_tuple(len, visitor)
        }

        fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.deserialize_unit(visitor)
        }

        fn deserialize_struct<V: Visitor<'de>>(self, _: Name, _: Names, visitor: V) -> Result<V::Value, ParamsError> {
            self.deserialize_map(visitor)
        }
    };
}

/// Methods that are another method of the same deserializer, `$as`.
macro_rules! same_as {
    ($as:ident: $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.$as(visitor)
        }
    )*};
}

/// Methods that hand the visitor to another deserializer of the level,
/// `$to` (`single` or `only`), which fails when the values are not one.
macro_rules! forward_to {
    (enum $to:ident) => {
        fn deserialize_enum<V: Visitor<'de>>(self, name: Name, variants: Names, visitor: V) -> Result<V::Value, ParamsError> {
            self.$to()?.deserialize_enum(name, variants, visitor)
        }
    };
    // Every scalar, text and bytes: one value, whatever the level.
    ($to:ident: scalars $($method:ident)*) => {
        forward_to! { $to:
            deserialize_bool
            deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
            deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
            deserialize_f32 deserialize_f64
            deserialize_char deserialize_str deserialize_string deserialize_identifier
            deserialize_bytes deserialize_byte_buf
            $($method)*
        }
    };
    ($to:ident: $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
            self.$to()?.$method(visitor)
        }
    )*};
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

    alike_at_every_level!();

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

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_borrowed_bytes(self.value.as_bytes()).map_err(|e| self.ctx.wrap_value(e))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_some(self).map_err(|e| self.ctx.wrap(e))
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

    // Text is text; a string is not a map, which the visitor reports.
    same_as! { deserialize_any: deserialize_str deserialize_string deserialize_identifier deserialize_map }
    same_as! { deserialize_bytes: deserialize_byte_buf }

    /// Only unit variants, named by the value.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamsError> {
        visitor.visit_enum(self).map_err(|e| self.ctx.wrap_value(e))
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
    fn wrap(&self, e: ParamsError) -> ParamsError {
        self.ctx.wrap(e)
    }

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
    fn wrap(&self, e: ParamsError) -> ParamsError {
        self.ctx.wrap(e)
    }

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

impl<'de> de::Deserializer<'de> for ValuesDeserializer<'de> {
    type Error = ParamsError;

    alike_at_every_level!();

    /// One value is a string; otherwise a sequence of strings.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        match self.values {
            [_] => self.single()?.deserialize_any(visitor),
            _ => self.deserialize_seq(visitor),
        }
    }

    forward_to! { single: scalars deserialize_map }

    /// Present with values is `Some`; a parameter with no values is `None`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if self.values.is_empty() {
            visitor.visit_none().map_err(|e| self.ctx.wrap(e))
        } else {
            visitor.visit_some(self).map_err(|e| self.ctx.wrap(e))
        }
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

    forward_to!(enum single);
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

    /// Errors about the parameters as a whole are worded once they are
    /// returned, by [`from_params`].
    fn wrap(&self, e: ParamsError) -> ParamsError {
        e
    }
}

impl<'de> de::Deserializer<'de> for ParamsDeserializer<'de> {
    type Error = ParamsError;

    alike_at_every_level!();

    /// The parameters as a whole are a map.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        self.deserialize_map(visitor)
    }

    forward_to! { only: scalars deserialize_seq }

    /// No parameters is `None`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        if self.params.is_empty() { visitor.visit_none() } else { visitor.visit_some(self) }
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
        visitor.visit_seq(Each { iter: self.params.iter(), value: None, de: self })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamsError> {
        visitor.visit_map(Each { iter: self.params.iter(), value: None, de: self })
    }

    forward_to!(enum only);
}

/// The parameters one after the other: as a map from name to values, for
/// structs and maps, or as a sequence, for tuples.
struct Each<'de, I> {
    iter: I,
    /// A map's value, once its name is taken.
    value: Option<ValuesDeserializer<'de>>,
    de: ParamsDeserializer<'de>,
}

impl<'de, I> Each<'de, I>
where
    I: ExactSizeIterator<Item = (&'de str, &'de [String])>,
{
    /// The next parameter's name and values.
    fn next_param(&mut self) -> Option<(&'de str, ValuesDeserializer<'de>)> {
        let (name, values) = self.iter.next()?;
        Some((name, ValuesDeserializer { values, ctx: self.de.ctx(name) }))
    }
}

impl<'de, I> MapAccess<'de> for Each<'de, I>
where
    I: ExactSizeIterator<Item = (&'de str, &'de [String])>,
{
    type Error = ParamsError;

    fn next_key_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        let Some((name, values)) = self.next_param() else {
            return Ok(None);
        };
        self.value = Some(values);
        seed.deserialize(ValueDeserializer { value: name, ctx: values.ctx }).map(Some)
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

impl<'de, I> SeqAccess<'de> for Each<'de, I>
where
    I: ExactSizeIterator<Item = (&'de str, &'de [String])>,
{
    type Error = ParamsError;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, ParamsError> {
        self.next_param().map(|(_, values)| seed.deserialize(values)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

#[cfg(test)]
mod tests;
