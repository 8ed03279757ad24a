//! Whether an HTTP handler's `Path<T>` fits its route, where the macro can
//! see it: a tuple's length, and a single value of a type that is plainly
//! one value, against the route's parameters. A struct's fields are not
//! visible here; the registry checks those at startup.

use syn::spanned::Spanned;
use syn::{FnArg, PathArguments, Signature, Type};

use crate::args::Errors;
use crate::types::{type_text, wrapped};

/// Types that deserialize from exactly one path parameter.
const SINGLE_VALUES: &[&str] = &[
    "String", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    "f32", "f64", "Uuid",
];

/// What a `Path<T>` reads, as far as its type's tokens say.
enum Reads {
    /// One value: `u64`, `String`.
    One,
    /// A tuple of this many values, in route order.
    Tuple(usize),
}

/// Reports each `Path<T>` argument of `sig` that cannot be taken from a
/// route `tag` with the parameters `params`.
pub fn check(sig: &Signature, tag: &str, params: &[String], errors: &mut Errors) {
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let Some(inner) = wrapped(&typed.ty, "Path") else { continue };
        let Some(reads) = reads(inner) else { continue };
        let path = format!("Path<{}>", type_text(inner));
        let message = match reads {
            Reads::Tuple(len) if len == params.len() => continue,
            Reads::One if params.len() == 1 => continue,
            Reads::Tuple(len) => format!(
                "`{path}` takes {len} parameter{}, but the route `{tag}` has {}: {}",
                plural(len),
                listed(params),
                advice(params)
            ),
            Reads::One => format!(
                "`{path}` takes one parameter, but the route `{tag}` has {}: {}",
                listed(params),
                advice(params)
            ),
        };
        errors.push(syn::Error::new(inner.span(), message));
    }
}

/// What `ty` reads, when its tokens say so plainly; `None` for a struct,
/// a map or anything else whose shape only its `Deserialize` knows.
fn reads(ty: &Type) -> Option<Reads> {
    match ty {
        Type::Paren(inner) => reads(&inner.elem),
        Type::Group(inner) => reads(&inner.elem),
        // `()` reads nothing: a tuple of none.
        Type::Tuple(tuple) => Some(Reads::Tuple(tuple.elems.len())),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            let plain = matches!(last.arguments, PathArguments::None);
            (plain && SINGLE_VALUES.iter().any(|name| last.ident == name)).then_some(Reads::One)
        }
        _ => None,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `no parameters`, `one parameter, `id``, `2 parameters, `order`, `item``.
fn listed(params: &[String]) -> String {
    let names = params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ");
    match params.len() {
        0 => "no parameters".to_string(),
        1 => format!("one parameter, {names}"),
        n => format!("{n} parameters, {names}"),
    }
}

/// What to write instead, for a route with `params`.
fn advice(params: &[String]) -> String {
    match params.len() {
        0 => "remove the `Path` argument, or add a parameter to the route, such as `{id}`".to_string(),
        1 => format!("take it as one value, such as `Path<String>`, for `{}`", params[0]),
        n => format!(
            "take a tuple of {n} values in route order, such as `Path<({})>`, or a struct with the fields {}",
            vec!["String"; n].join(", "),
            params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn errors_for(function: proc_macro2::TokenStream, tag: &str, params: &[&str]) -> Option<String> {
        let function: syn::ItemFn = syn::parse2(function).unwrap();
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        let mut errors = Errors::default();
        check(&function.sig, tag, &params, &mut errors);
        errors.finish().err().map(|error| error.to_string())
    }

    #[test]
    fn paths_that_fit_are_left_alone() {
        let tag = "GET::/orders/{order}/lines/{line}";
        let params = ["order", "line"];
        for function in [
            quote!(
                async fn f(Path((o, l)): Path<(String, u32)>) {}
            ),
            quote!(
                async fn f(p: celerity::http::Path<LinePath>) {}
            ),
            quote!(
                async fn f(p: Path<HashMap<String, String>>) {}
            ),
            quote!(
                async fn f(p: Path<Vec<String>>) {}
            ),
            quote!(
                async fn f(p: Json<u64>) {}
            ),
        ] {
            assert_eq!(errors_for(function, tag, &params), None);
        }
        assert_eq!(
            errors_for(
                quote!(
                    async fn f(Path(id): Path<u64>) {}
                ),
                "GET::/o/{id}",
                &["id"]
            ),
            None
        );
        assert_eq!(
            errors_for(
                quote!(
                    async fn f(Path(id): Path<my::Id>) {}
                ),
                "GET::/o/{a}/{b}",
                &["a", "b"]
            ),
            None
        );
    }

    #[test]
    fn a_tuple_of_the_wrong_length_is_refused_with_the_route_and_a_fix() {
        let error = errors_for(
            quote!(
                async fn f(Path(p): Path<(String, String)>) {}
            ),
            "GET::/orders/{id}",
            &["id"],
        );
        assert_eq!(
            error.as_deref(),
            Some(
                "`Path<(String, String)>` takes 2 parameters, but the route `GET::/orders/{id}` has one parameter, `id`: take it as one value, such as `Path<String>`, for `id`"
            )
        );
    }

    #[test]
    fn one_value_against_several_parameters_or_none_is_refused() {
        let error = errors_for(
            quote!(
                async fn f(Path(p): Path<u64>) {}
            ),
            "GET::/o/{order}/{item}",
            &["order", "item"],
        );
        assert_eq!(
            error.as_deref(),
            Some(
                "`Path<u64>` takes one parameter, but the route `GET::/o/{order}/{item}` has 2 parameters, `order`, `item`: take a tuple of 2 values in route order, such as `Path<(String, String)>`, or a struct with the fields `order`, `item`"
            )
        );
        let error = errors_for(
            quote!(
                async fn f(Path(p): Path<String>) {}
            ),
            "GET::/orders",
            &[],
        )
        .unwrap();
        assert!(error.contains("has no parameters: remove the `Path` argument"), "{error}");
    }
}
