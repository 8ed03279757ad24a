//! Reading the types of a handler's signature as they are written: the
//! macros see tokens, not resolved types.

use quote::quote;
use syn::{GenericArgument, PathArguments, Type};

/// `T` in `Name<T>` or `some::path::Name<T>`: the one type argument of a
/// type whose last segment is `name`.
pub fn wrapped<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &last.arguments else { return None };
    let mut types = arguments.args.iter().filter_map(|argument| match argument {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(ty), None) => Some(ty),
        _ => None,
    }
}

/// A type as a person writes it, for messages: `Json<Order>`.
pub fn type_text(ty: &Type) -> String {
    let mut text = quote!(#ty).to_string();
    for (from, to) in [(" :: ", "::"), (":: ", "::"), (" ::", "::"), (" < ", "<"), ("< ", "<"), (" <", "<")] {
        text = text.replace(from, to);
    }
    for (from, to) in [(" > ", ">"), (" >", ">"), (" ,", ","), ("& ", "&"), ("( ", "("), (" )", ")")] {
        text = text.replace(from, to);
    }
    text
}

/// Every `T` of a `Json<T>` inside `ty`, through type arguments, tuples,
/// references, arrays and slices: the types a handler reads or answers as
/// JSON, for checks that name their missing derive.
pub fn json_payloads(ty: &Type) -> Vec<&Type> {
    let mut found = Vec::new();
    collect_json(ty, &mut found);
    found
}

fn collect_json<'a>(ty: &'a Type, found: &mut Vec<&'a Type>) {
    if let Some(inner) = wrapped(ty, "Json") {
        found.push(inner);
        return;
    }
    match ty {
        Type::Path(path) => {
            for segment in &path.path.segments {
                if let PathArguments::AngleBracketed(arguments) = &segment.arguments {
                    for argument in &arguments.args {
                        if let GenericArgument::Type(ty) = argument {
                            collect_json(ty, found);
                        }
                    }
                }
            }
        }
        Type::Tuple(tuple) => tuple.elems.iter().for_each(|ty| collect_json(ty, found)),
        Type::Reference(reference) => collect_json(&reference.elem, found),
        Type::Paren(paren) => collect_json(&paren.elem, found),
        Type::Group(group) => collect_json(&group.elem, found),
        Type::Array(array) => collect_json(&array.elem, found),
        Type::Slice(slice) => collect_json(&slice.elem, found),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_as_written() {
        let ty: Type = syn::parse_quote!(Option<Json<Order>>);
        assert_eq!(type_text(&ty), "Option<Json<Order>>");
        let ty: Type = syn::parse_quote!(&'static str);
        assert_eq!(type_text(&ty), "&'static str");
        let ty: Type = syn::parse_quote!(celerity::http::Path<(String, u32)>);
        assert_eq!(type_text(&ty), "celerity::http::Path<(String, u32)>");
    }

    #[test]
    fn json_payloads_are_found_wherever_they_stand() {
        let ty: Type = syn::parse_quote!(Result<(StatusCode, Json<Order>), HttpError>);
        let found: Vec<String> = json_payloads(&ty).into_iter().map(type_text).collect();
        assert_eq!(found, ["Order"]);
        let ty: Type = syn::parse_quote!((Json<A>, &[Json<B>], [Option<Json<C>>; 2]));
        let found: Vec<String> = json_payloads(&ty).into_iter().map(type_text).collect();
        assert_eq!(found, ["A", "B", "C"]);
        let ty: Type = syn::parse_quote!(Json<Vec<Json<Inner>>>);
        assert_eq!(json_payloads(&ty).into_iter().map(type_text).collect::<Vec<_>>(), ["Vec<Json<Inner>>"]);
        assert!(json_payloads(&syn::parse_quote!(String)).is_empty());
    }
}
