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
