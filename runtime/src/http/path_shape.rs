//! Whether a `Path<T>` fits its route, found without a request: what `T`
//! asks for (one value, a tuple of some length, a struct's fields) is read
//! off its `Deserialize` by a deserializer that holds no data and stops at
//! the first thing asked of it.

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// What a type deserialized from path parameters reads.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// A single value: a number, a string, an enum.
    One,
    /// A tuple of this many values, in route order.
    Tuple(usize),
    /// A struct: its fields by name.
    Struct(&'static [&'static str]),
    /// Anything: a map, a sequence, a value that takes whatever comes.
    Any,
}

/// The deserializer's "error", which carries what was asked for.
#[derive(Debug)]
struct Asked(Shape);

impl fmt::Display for Asked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for Asked {}

impl de::Error for Asked {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Asked(Shape::Any)
    }
}

/// Answers every request with what was requested.
struct Probe;

macro_rules! one {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
            Err(Asked(Shape::One))
        }
    )*};
}

impl<'de> Deserializer<'de> for Probe {
    type Error = Asked;

    one!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_identifier
    );

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Any))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Asked> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Tuple(0)))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Tuple(0)))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Asked> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Any))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Tuple(len)))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        _visitor: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Tuple(len)))
    }

    fn deserialize_map<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Any))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Struct(fields)))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked(Shape::One))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Asked> {
        Err(Asked(Shape::Any))
    }
}

/// What `T` reads from path parameters.
fn shape<T: DeserializeOwned>() -> Shape {
    match T::deserialize(Probe) {
        Err(Asked(shape)) => shape,
        // Nothing was asked: it takes no parameter at all.
        Ok(_) => Shape::Tuple(0),
    }
}

fn listed(params: &[String]) -> String {
    match params {
        [] => "no parameters".to_string(),
        [one] => format!("one parameter, `{one}`"),
        many => format!(
            "{} parameters, {}",
            many.len(),
            many.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A type's name as written in a program: the standard library's paths
/// left out (`(String, u32)`, not `(alloc::string::String, u32)`).
fn written(type_name: &str) -> String {
    let mut out = String::with_capacity(type_name.len());
    let mut path = String::new();
    let flush = |path: &mut String, out: &mut String| {
        let std = ["alloc::", "core::", "std::"].iter().any(|root| path.starts_with(root));
        out.push_str(if std { path.rsplit("::").next().unwrap_or(path) } else { path });
        path.clear();
    };
    for c in type_name.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
        } else {
            flush(&mut path, &mut out);
            out.push(c);
        }
    }
    flush(&mut path, &mut out);
    out
}

/// Whether `Path<T>` can be taken from a route with the parameters
/// `params`; `Err` says why not.
pub(super) fn path_fits<T: DeserializeOwned>(params: &[String]) -> Result<(), String> {
    let name = written(std::any::type_name::<T>());
    match shape::<T>() {
        Shape::Any => Ok(()),
        Shape::One if params.len() == 1 => Ok(()),
        Shape::One => Err(format!(
            "`Path<{name}>` takes one parameter, but the route has {}{}",
            listed(params),
            if params.len() > 1 {
                ": take a tuple, in route order, or a struct with a field per parameter"
            } else {
                ""
            }
        )),
        Shape::Tuple(len) if len == params.len() => Ok(()),
        Shape::Tuple(len) => {
            Err(format!("`Path<{name}>` takes {len} parameter(s), but the route has {}", listed(params)))
        }
        Shape::Struct(fields) => {
            let absent: Vec<&str> = fields.iter().copied().filter(|field| !params.iter().any(|p| p == field)).collect();
            if absent.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "`Path<{name}>` reads the field(s) {}, which the route does not have: it has {}",
                    absent.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "),
                    listed(params)
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde::Deserialize;

    use super::*;

    fn params(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[allow(dead_code)]
    #[derive(Deserialize)]
    struct OrderItem {
        order: String,
        item: u32,
    }

    #[test]
    fn what_a_type_reads_from_the_path() {
        assert_eq!(shape::<u64>(), Shape::One);
        assert_eq!(shape::<String>(), Shape::One);
        assert_eq!(shape::<Option<u64>>(), Shape::One);
        assert_eq!(shape::<(String, u32)>(), Shape::Tuple(2));
        assert_eq!(shape::<OrderItem>(), Shape::Struct(&["order", "item"]));
        assert_eq!(shape::<HashMap<String, String>>(), Shape::Any);
        assert_eq!(shape::<Vec<String>>(), Shape::Any);
    }

    #[test]
    fn a_path_fits_its_route_or_says_why_not() {
        assert_eq!(path_fits::<u64>(&params(&["id"])), Ok(()));
        assert_eq!(path_fits::<(String, u32)>(&params(&["order", "item"])), Ok(()));
        assert_eq!(path_fits::<OrderItem>(&params(&["item", "order"])), Ok(()));
        assert_eq!(path_fits::<Vec<String>>(&params(&["path"])), Ok(()));

        let error = path_fits::<(String, String)>(&params(&["id"])).unwrap_err();
        assert_eq!(error, "`Path<(String, String)>` takes 2 parameter(s), but the route has one parameter, `id`");
        assert_eq!(written("core::option::Option<my_app::model::Id>"), "Option<my_app::model::Id>");
        let error = path_fits::<u64>(&params(&["order", "item"])).unwrap_err();
        assert!(
            error.starts_with("`Path<u64>` takes one parameter, but the route has 2 parameters, `order`, `item`"),
            "{error}"
        );
        let error = path_fits::<u64>(&[]).unwrap_err();
        assert_eq!(error, "`Path<u64>` takes one parameter, but the route has no parameters");
        let error = path_fits::<OrderItem>(&params(&["order", "line"])).unwrap_err();
        assert!(error.contains("reads the field(s) `item`, which the route does not have"), "{error}");
    }
}
