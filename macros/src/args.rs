//! The arguments of a handler attribute: the tag or the blueprint name, and
//! options.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Token, UnOp};

use celerity_tags::{NormalisedTag, TagKind, parse_tag};

/// How a handler is bound to the blueprint.
pub enum Binding {
    /// By tag, checked and normalised.
    Tag(NormalisedTag),
    /// By the blueprint's handler name or published name.
    Name(String),
}

/// A handler attribute's arguments, checked.
pub struct HandlerArgs {
    pub binding: Binding,
    pub max_concurrent: Option<u32>,
    pub concurrency: Option<u32>,
    /// Its layers, in the order written: outermost first.
    pub layers: Vec<Layer>,
    /// The guards protecting it, by name, in order.
    pub guards: Vec<LitStr>,
}

/// A `layer = ...` or `http_layer = ...` option.
pub struct Layer {
    /// Whether it is a tower layer over `http::Request`s.
    pub http: bool,
    pub expr: Expr,
}

/// The options an attribute of `kind` takes, for messages.
fn known_options(kind: TagKind) -> &'static [&'static str] {
    match kind {
        TagKind::Http => &["name", "max_concurrent", "layer", "http_layer", "guard"],
        TagKind::WebSocket | TagKind::Custom => &["name", "max_concurrent", "layer", "guard"],
        TagKind::Consumer => &["name", "max_concurrent", "concurrency", "layer"],
        TagKind::Schedule => &["name", "max_concurrent", "layer"],
    }
}

fn describe_options(kind: TagKind) -> String {
    let forms: Vec<&str> = known_options(kind)
        .iter()
        .map(|option| match *option {
            "name" => "`name = \"...\"`",
            "max_concurrent" => "`max_concurrent = N`",
            "concurrency" => "`concurrency = N`",
            "layer" => "`layer = expr`",
            "http_layer" => "`http_layer = expr`",
            _ => "`guard = \"name\"`",
        })
        .collect();
    match forms.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Whether handlers of `kind` can be guarded: their events carry a caller.
fn guardable(kind: TagKind) -> bool {
    matches!(kind, TagKind::Http | TagKind::WebSocket | TagKind::Custom)
}

/// What the attribute looks like written correctly, for messages.
pub fn usage(kind: TagKind) -> String {
    let attribute = kind.attribute();
    format!(
        "`#[{attribute}(\"{}\")]`, or by blueprint handler name `#[{attribute}(name = \"{}\")]`",
        kind.example(),
        example_name(kind)
    )
}

fn example_name(kind: TagKind) -> &'static str {
    match kind {
        TagKind::Http => "getOrder",
        TagKind::WebSocket => "onConnect",
        TagKind::Consumer => "processOrders",
        TagKind::Schedule => "cleanup",
        TagKind::Custom => "resizeImage",
    }
}

/// Parses and checks the arguments of `#[<kind attribute>(...)]`.
pub fn parse(kind: TagKind, attr: TokenStream) -> syn::Result<HandlerArgs> {
    let attribute = kind.attribute();
    if attr.is_empty() {
        return Err(syn::Error::new(
            Span::call_site(),
            format!("`#[{attribute}]` needs the handler's tag: write {}", usage(kind)),
        ));
    }
    let items = (|input: ParseStream| parse_items(kind, input)).parse2(attr)?;

    let mut errors = Errors::default();
    let mut tag: Option<(LitStr, NormalisedTag)> = None;
    let mut name: Option<(Ident, String)> = None;
    let mut max_concurrent: Option<(Ident, u32)> = None;
    let mut concurrency: Option<(Ident, u32)> = None;
    let mut layers = Vec::new();
    let mut guards: Option<(Ident, Vec<LitStr>)> = None;

    for item in items {
        match item {
            Item::Tag(literal) => {
                if let Some((first, _)) = &tag {
                    errors.push(syn::Error::new_spanned(
                        &literal,
                        format!(
                            "a handler has one tag, and `{}` is already given: write `#[{attribute}(\"{}\")]`",
                            first.value(),
                            first.value()
                        ),
                    ));
                    continue;
                }
                match parse_tag(kind, &literal.value()) {
                    Ok(normalised) => tag = Some((literal, normalised)),
                    Err(error) => {
                        let mut message = error.message.clone();
                        if let Some(suggestion) = &error.suggestion {
                            message.push_str(&format!(": write `#[{attribute}(\"{suggestion}\")]`"));
                        }
                        errors.push(syn::Error::new_spanned(&literal, message));
                        // Keep a placeholder so a `name` beside it is still reported.
                        tag = Some((literal, NormalisedTag { kind, tag: String::new(), params: Vec::new() }));
                    }
                }
            }
            Item::Option(key, value) => match key.to_string().as_str() {
                "name" => {
                    if name.is_some() {
                        errors.push(twice(&key));
                        continue;
                    }
                    match parse_name(kind, &value) {
                        Ok(value) => name = Some((key, value)),
                        Err(error) => errors.push(error),
                    }
                }
                "max_concurrent" => {
                    if max_concurrent.is_some() {
                        errors.push(twice(&key));
                        continue;
                    }
                    match parse_count(&key, &value, "the most events this handler runs at once", NEVER_RUNS) {
                        Ok(n) => max_concurrent = Some((key, n)),
                        Err(error) => errors.push(error),
                    }
                }
                "concurrency" if kind == TagKind::Consumer => {
                    if concurrency.is_some() {
                        errors.push(twice(&key));
                        continue;
                    }
                    match parse_count(&key, &value, "the records of one batch handled at once", NEVER_RUNS) {
                        Ok(n) => concurrency = Some((key, n)),
                        Err(error) => errors.push(error),
                    }
                }
                "layer" => layers.push(Layer { http: false, expr: value }),
                "http_layer" if kind == TagKind::Http => layers.push(Layer { http: true, expr: value }),
                "http_layer" => errors.push(syn::Error::new_spanned(
                    &key,
                    "`http_layer` wraps HTTP handlers only (it is a tower layer over `http::Request`s); a layer of every kind of event goes on with `layer = expr`",
                )),
                "guard" if guardable(kind) => {
                    if guards.is_some() {
                        errors.push(syn::Error::new_spanned(
                            &key,
                            "`guard` is given twice: name several guards in one list, `guard = [\"jwt\", \"admin\"]`",
                        ));
                        continue;
                    }
                    match parse_guards(&value) {
                        Ok(names) => guards = Some((key, names)),
                        Err(error) => errors.push(error),
                    }
                }
                "guard" => errors.push(syn::Error::new_spanned(
                    &key,
                    format!(
                        "{} cannot have a guard: its events carry no caller to authorise; guards protect `#[http_handler]`, `#[websocket_handler]` and `#[custom_handler]`, and a check of the event's own content belongs in the handler or a `layer`",
                        if kind == TagKind::Consumer { "a consumer" } else { "a schedule handler" }
                    ),
                )),
                "concurrency" => errors.push(syn::Error::new_spanned(
                    &key,
                    format!(
                        "`concurrency` is an option of `#[consumer]` only (the records of one batch handled at once); `#[{attribute}]` takes {}",
                        describe_options(kind)
                    ),
                )),
                "tag" => errors.push(syn::Error::new_spanned(
                    &key,
                    format!("the tag is written first, as a plain string: `#[{attribute}(\"{}\")]`", kind.example()),
                )),
                other => {
                    let mut message =
                        format!("unknown option `{other}`: `#[{attribute}]` takes {}", describe_options(kind));
                    if let Some(close) = closest(other, known_options(kind)) {
                        message.push_str(&format!("; did you mean `{close}`?"));
                    }
                    errors.push(syn::Error::new_spanned(&key, message));
                }
            },
        }
    }

    if let (Some((literal, _)), Some((key, name))) = (&tag, &name) {
        errors.push(syn::Error::new_spanned(
            key,
            format!(
                "a handler is bound by tag or by name, not both: write `#[{attribute}(\"{}\")]` or `#[{attribute}(name = \"{name}\")]`",
                literal.value(),
            ),
        ));
    }
    errors.finish()?;

    let binding = match (tag, name) {
        (Some((_, tag)), None) => Binding::Tag(tag),
        (None, Some((_, name))) => Binding::Name(name),
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("`#[{attribute}]` needs the handler's tag: write {}", usage(kind)),
            ));
        }
    };
    Ok(HandlerArgs {
        binding,
        max_concurrent: max_concurrent.map(|(_, n)| n),
        concurrency: concurrency.map(|(_, n)| n),
        layers,
        guards: guards.map(|(_, names)| names).unwrap_or_default(),
    })
}

/// `guard`'s value: a guard's name, or a list of names, as string literals.
fn parse_guards(value: &Expr) -> syn::Result<Vec<LitStr>> {
    let usage = "`guard` takes the name a guard is registered under (`App::guard(\"jwt\", ...)`), or a list of them: write `guard = \"jwt\"` or `guard = [\"jwt\", \"admin\"]`";
    let names = match value {
        Expr::Lit(ExprLit { lit: Lit::Str(name), .. }) => vec![name.clone()],
        Expr::Array(array) => array
            .elems
            .iter()
            .map(|element| match element {
                Expr::Lit(ExprLit { lit: Lit::Str(name), .. }) => Ok(name.clone()),
                other => Err(syn::Error::new_spanned(other, usage)),
            })
            .collect::<syn::Result<Vec<_>>>()?,
        other => return Err(syn::Error::new_spanned(other, usage)),
    };
    if names.is_empty() {
        return Err(syn::Error::new_spanned(value, format!("the list of guards is empty: {usage}")));
    }
    for name in &names {
        if name.value().trim().is_empty() {
            return Err(syn::Error::new_spanned(name, format!("a guard's name is empty: {usage}")));
        }
    }
    Ok(names)
}

enum Item {
    Tag(LitStr),
    Option(Ident, Expr),
}

fn parse_items(kind: TagKind, input: ParseStream) -> syn::Result<Vec<Item>> {
    let attribute = kind.attribute();
    let mut items = Vec::new();
    while !input.is_empty() {
        if input.peek(LitStr) {
            items.push(Item::Tag(input.parse()?));
        } else if input.peek(Ident::peek_any) {
            let key = input.call(Ident::parse_any)?;
            if !input.peek(Token![=]) {
                let message = if input.is_empty() || input.peek(Token![,]) {
                    format!(
                        "expected the tag as a string or an option `name = value`, found `{key}`: write {}",
                        usage(kind)
                    )
                } else {
                    format!("expected `=` after `{key}`: options are written `{key} = value`")
                };
                return Err(syn::Error::new_spanned(&key, message));
            }
            input.parse::<Token![=]>()?;
            if input.is_empty() || input.peek(Token![,]) {
                return Err(syn::Error::new_spanned(&key, format!("`{key} =` has no value")));
            }
            let value: Expr = input.parse()?;
            items.push(Item::Option(key, value));
        } else {
            let found: proc_macro2::TokenTree = input.parse()?;
            return Err(syn::Error::new_spanned(
                &found,
                format!(
                    "expected the tag as a string or an option `name = value`, found `{found}`: write {}",
                    usage(kind)
                ),
            ));
        }
        if input.is_empty() {
            break;
        }
        if !input.peek(Token![,]) {
            let found: proc_macro2::TokenTree = input.parse()?;
            return Err(syn::Error::new_spanned(
                &found,
                format!("expected `,` between the arguments of `#[{attribute}]`, found `{found}`"),
            ));
        }
        input.parse::<Token![,]>()?;
    }
    Ok(items)
}

/// The error for an option given twice.
pub fn twice(key: &Ident) -> syn::Error {
    syn::Error::new_spanned(key, format!("`{key}` is given twice: give each option once"))
}

fn parse_name(kind: TagKind, value: &Expr) -> syn::Result<String> {
    let attribute = kind.attribute();
    let example = example_name(kind);
    let Expr::Lit(ExprLit { lit: Lit::Str(literal), .. }) = value else {
        return Err(syn::Error::new_spanned(
            value,
            format!("`name` takes the blueprint handler name as a string: write `name = \"{example}\"`"),
        ));
    };
    let name = literal.value();
    if name.trim().is_empty() {
        return Err(syn::Error::new_spanned(
            literal,
            format!("`name` is empty: it takes the blueprint handler name, such as `name = \"{example}\"`"),
        ));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(syn::Error::new_spanned(
            literal,
            format!("a blueprint handler name has no spaces or control characters, such as `name = \"{example}\"`"),
        ));
    }
    if name.contains("::") {
        return Err(syn::Error::new_spanned(
            literal,
            format!(
                "`{name}` looks like a tag, and `name` takes a blueprint handler name such as `{example}`: to bind by tag, write `#[{attribute}(\"{name}\")]`"
            ),
        ));
    }
    Ok(name)
}

/// What a count of 0 would do, for a handler's options.
const NEVER_RUNS: &str = "would never run the handler";

/// A count option's value: an integer literal of at least 1. `meaning` says
/// what it counts and `zero` what 0 would do, for messages.
pub fn parse_count(key: &Ident, value: &Expr, meaning: &str, zero: &str) -> syn::Result<u32> {
    let expected = format!("expected a whole number of at least 1 ({meaning}), such as `{key} = 8`");
    match value {
        // `syn` reads `-1` in an attribute's `key = value` as one literal.
        Expr::Lit(ExprLit { lit: Lit::Int(int), .. }) if int.base10_digits().starts_with('-') => {
            Err(syn::Error::new_spanned(int, format!("`{key}` cannot be negative: {expected}")))
        }
        Expr::Lit(ExprLit { lit: Lit::Int(int), .. }) => {
            if !matches!(int.suffix(), "" | "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64") {
                return Err(syn::Error::new_spanned(int, format!("`{int}` is not a count: {expected}")));
            }
            match int.base10_parse::<u64>() {
                Ok(0) => Err(syn::Error::new_spanned(int, format!("`{key} = 0` {zero}: {expected}"))),
                Ok(n) => u32::try_from(n).map_err(|_| {
                    syn::Error::new_spanned(int, format!("`{key} = {n}` is too large: the most is {}", u32::MAX))
                }),
                Err(_) => Err(syn::Error::new_spanned(int, format!("`{int}` is not a count: {expected}"))),
            }
        }
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), .. }) => {
            Err(syn::Error::new_spanned(value, format!("`{key}` cannot be negative: {expected}")))
        }
        Expr::Lit(ExprLit { lit: Lit::Float(float), .. }) => {
            Err(syn::Error::new_spanned(float, format!("`{key} = {float}` is not a whole number: {expected}")))
        }
        Expr::Lit(ExprLit { lit: Lit::Str(string), .. }) => Err(syn::Error::new_spanned(
            string,
            format!("`{key}` takes a number, not a string: write `{key} = {}`", string.value().trim()),
        )),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes an integer literal, not an expression: {expected}"),
        )),
    }
}

/// The known option closest to a misspelt one, if any is close.
pub fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|candidate| (edit_distance(word, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= 3.max(candidate.len() / 3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// Several errors reported together.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse_ok(kind: TagKind, tokens: TokenStream) -> HandlerArgs {
        match parse(kind, tokens) {
            Ok(args) => args,
            Err(error) => panic!("unexpected error: {error}"),
        }
    }

    fn parse_err(kind: TagKind, tokens: TokenStream) -> String {
        match parse(kind, tokens) {
            Ok(_) => panic!("expected an error"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
        }
    }

    #[test]
    fn tag_and_options() {
        let args = parse_ok(TagKind::Http, quote!("GET::/files/{path+}", max_concurrent = 4));
        assert!(matches!(args.binding, Binding::Tag(ref t) if t.tag == "GET::/files/{*path}"));
        assert_eq!(args.max_concurrent, Some(4));
        let args = parse_ok(TagKind::Consumer, quote!(name = "processOrders", concurrency = 8,));
        assert!(matches!(args.binding, Binding::Name(ref n) if n == "processOrders"));
        assert_eq!(args.concurrency, Some(8));
    }

    #[test]
    fn errors_name_the_expected_form() {
        assert!(parse_err(TagKind::Http, quote!()).contains("#[http_handler(\"GET::/orders/{id}\")]"));
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurency = 2));
        assert!(e.contains("unknown option `max_concurency`") && e.contains("did you mean `max_concurrent`?"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurrent = 0));
        assert!(e.contains("at least 1"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurrent = -3));
        assert!(e.contains("cannot be negative"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurrent = 1.5));
        assert!(e.contains("not a whole number"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurrent = "4"));
        assert!(e.contains("write `max_concurrent = 4`"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", max_concurrent = 99999999999));
        assert!(e.contains("too large"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", name = "getX"));
        assert!(e.contains("by tag or by name, not both"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", "GET::/y"));
        assert!(e.contains("one tag"), "{e}");
        let e = parse_err(TagKind::Http, quote!("GET::/x", concurrency = 2));
        assert!(e.contains("`#[consumer]` only"), "{e}");
        let e = parse_err(TagKind::Http, quote!(name = "GET::/x"));
        assert!(e.contains("looks like a tag"), "{e}");
        let e = parse_err(TagKind::Http, quote!(get_order));
        assert!(e.contains("found `get_order`"), "{e}");
        let e = parse_err(TagKind::Http, quote!("get::/x", max_concurrent = 0));
        assert!(e.contains("upper case") && e.contains("at least 1"), "{e}");
    }

    #[test]
    fn closest_option() {
        assert_eq!(closest("max_concurrency", &["name", "max_concurrent"]), Some("max_concurrent"));
        assert_eq!(closest("nmae", &["name", "max_concurrent"]), Some("name"));
        assert_eq!(closest("timeout", &["name", "max_concurrent"]), None);
    }
}
