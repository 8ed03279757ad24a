//! `#[http_handler]`, `#[websocket_handler]`, `#[consumer]`,
//! `#[schedule_handler]` and `#[custom_handler]`: the user's function, unchanged,
//! and a registry entry that calls it through the kind's extractor and
//! responder traits.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Item, ItemFn, ReturnType, Signature, Type};

use crate::args::{self, Binding, Errors, HandlerArgs};
use crate::kind::{ConsumerMode, KindSpec};
use crate::path_check;
use crate::types::{json_payloads, wrapped};
use celerity_tags::TagKind;

/// Expands a handler attribute of `kind`.
pub fn expand(kind: TagKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(kind, attr);
    let function = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => Some(function),
        Ok(other) => {
            errors.push(not_a_function(kind, &other));
            None
        }
        Err(_) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                format!(
                    "`#[{}]` goes on an `async fn` with a body, outside any `impl` or `trait` block: write {}",
                    kind.attribute(),
                    handler_usage(kind)
                ),
            ));
            None
        }
    };
    if let Some(function) = &function {
        check_signature(kind, &function.sig, &mut errors);
    }
    let args = match args {
        Ok(args) => {
            if let (Some(function), Binding::Tag(tag)) = (&function, &args.binding)
                && kind == TagKind::Http
            {
                path_check::check(&function.sig, &tag.tag, &tag.params, &mut errors);
            }
            Some(args)
        }
        Err(error) => {
            errors.push(error);
            None
        }
    };
    if let Err(error) = errors.finish() {
        // The original item stays, so the only errors are these.
        let error = error.to_compile_error();
        return quote!(#item #error);
    }
    let (Some(function), Some(args)) = (function, args) else {
        return item;
    };
    let registration = registration(kind, &function, &args);
    quote!(#item #registration)
}

fn handler_usage(kind: TagKind) -> String {
    format!("`#[{}(\"{}\")] async fn handler(...) {{ ... }}`", kind.attribute(), kind.example())
}

fn not_a_function(kind: TagKind, item: &Item) -> syn::Error {
    let (what, span) = describe_item(item);
    syn::Error::new_spanned(
        span,
        format!("`#[{}]` goes on an `async fn`, not on {what}: write {}", kind.attribute(), handler_usage(kind)),
    )
}

/// What a non-function item is, and the tokens to point at: its keyword and
/// name.
pub fn describe_item(item: &Item) -> (&'static str, TokenStream) {
    match item {
        Item::Struct(i) => ("a struct", spanned(&i.struct_token, &i.ident)),
        Item::Enum(i) => ("an enum", spanned(&i.enum_token, &i.ident)),
        Item::Union(i) => ("a union", spanned(&i.union_token, &i.ident)),
        Item::Const(i) => ("a const", spanned(&i.const_token, &i.ident)),
        Item::Static(i) => ("a static", spanned(&i.static_token, &i.ident)),
        Item::Trait(i) => ("a trait", spanned(&i.trait_token, &i.ident)),
        Item::Type(i) => ("a type alias", spanned(&i.type_token, &i.ident)),
        Item::Mod(i) => ("a module", spanned(&i.mod_token, &i.ident)),
        Item::Impl(i) => ("an `impl` block", spanned(&i.impl_token, &i.self_ty)),
        Item::Use(i) => ("a `use` declaration", spanned(&i.use_token, &i.use_token)),
        Item::Fn(i) => ("a function", spanned(&i.sig.fn_token, &i.sig.ident)),
        _ => ("this item", quote!(#item).into_iter().take(1).collect()),
    }
}

fn spanned(a: &impl quote::ToTokens, b: &impl quote::ToTokens) -> TokenStream {
    quote!(#a #b)
}

/// Reports every way the signature cannot be a handler.
fn check_signature(kind: TagKind, sig: &Signature, errors: &mut Errors) {
    let attribute = kind.attribute();
    let name = sig.ident.unraw();
    if let Some(constness) = &sig.constness {
        errors.push(syn::Error::new_spanned(
            constness,
            format!("a handler cannot be a `const fn`: write `async fn {name}(...)`"),
        ));
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new_spanned(
            sig.fn_token,
            format!("`#[{attribute}]` goes on an `async fn`: write `async fn {name}(...)`"),
        ));
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.push(syn::Error::new_spanned(
            unsafety,
            format!(
                "a handler cannot be an `unsafe fn`: the runtime calls it and cannot uphold a safety contract; write `async fn {name}(...)` and put `unsafe` blocks inside"
            ),
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            format!("a handler cannot have an `extern` ABI: write `async fn {name}(...)`"),
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let lifetimes_only = sig.generics.params.iter().all(|p| matches!(p, syn::GenericParam::Lifetime(_)))
            && sig.generics.where_clause.is_none();
        let message = if lifetimes_only {
            format!(
                "a handler cannot have lifetime parameters: its arguments are owned values taken from the event; write `async fn {name}(...)` with owned argument types such as `String` or `Json<T>`"
            )
        } else {
            format!(
                "a handler cannot be generic: the registry calls one concrete function; write `async fn {name}(...)` with concrete types, such as `Json<Order>` rather than `Json<T>`"
            )
        };
        let span = match &sig.generics.where_clause {
            Some(where_clause) if sig.generics.params.is_empty() => quote!(#where_clause),
            _ => {
                let generics = &sig.generics;
                quote!(#generics)
            }
        };
        errors.push(syn::Error::new_spanned(span, message));
    }
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => errors.push(syn::Error::new_spanned(
                receiver,
                format!(
                    "`#[{attribute}]` goes on a free `async fn`, not a method taking `self`: move `{name}` out of the `impl` block, and take shared values as `State<T>` (given with `App::state`)"
                ),
            )),
            FnArg::Typed(typed) => {
                let ty = &typed.ty;
                if find_impl(quote!(#ty)).is_some() {
                    errors.push(syn::Error::new_spanned(
                        &typed.ty,
                        "an argument of type `impl Trait` makes the handler generic: name a concrete type, such as `Json<Order>`",
                    ));
                }
            }
        }
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(variadic, "a handler cannot take variadic arguments"));
    }
    if let Some(extra) = sig.inputs.iter().nth(MAX_ARGUMENTS) {
        errors.push(syn::Error::new_spanned(
            extra,
            format!(
                "a handler takes at most {MAX_ARGUMENTS} arguments: group the rest, for instance in a `State<T>` holding several values or a struct taken as `Json<T>`"
            ),
        ));
    }
}

/// The first `impl` keyword in a type, at any depth.
fn find_impl(tokens: TokenStream) -> Option<Span> {
    tokens.into_iter().find_map(|token| match token {
        TokenTree::Ident(ident) if ident == "impl" => Some(ident.span()),
        TokenTree::Group(group) => find_impl(group.stream()),
        _ => None,
    })
}

/// Gives every token of `tokens` the span `span`, so an error anywhere in
/// them points there.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut new = proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                new.set_span(span);
                token = TokenTree::Group(new);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// Whether a `#[consumer]` takes the whole batch: an argument whose type's
/// last path segment is `Batch`.
fn consumer_mode(sig: &Signature) -> ConsumerMode {
    let takes_batch = sig.inputs.iter().any(|input| match input {
        FnArg::Typed(typed) => match &*typed.ty {
            Type::Path(path) => path.path.segments.last().is_some_and(|segment| segment.ident == "Batch"),
            _ => false,
        },
        FnArg::Receiver(_) => false,
    });
    if takes_batch { ConsumerMode::Batch } else { ConsumerMode::Record }
}

/// The most arguments a handler can take: the arities `celerity::Handler`
/// is implemented for.
const MAX_ARGUMENTS: usize = 8;

/// The spanned checks and the registry entry for a checked handler. The
/// checks say, at each argument and at the return type, what is wrong in
/// the kind's own words; the entry calls library code, which takes the
/// arguments and makes the answer as for a handler registered by hand.
fn registration(kind: TagKind, function: &ItemFn, args: &HandlerArgs) -> TokenStream {
    let sig = &function.sig;
    let ident = &sig.ident;
    let name = ident.unraw().to_string();
    let mode = if kind == TagKind::Consumer { consumer_mode(sig) } else { ConsumerMode::Record };
    let spec = KindSpec::of(kind, mode);

    let types: Vec<&Type> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => Some(&*typed.ty),
            FnArg::Receiver(_) => None,
        })
        .collect();

    // Each argument, against what the kind takes. `Valid<E>` is checked as
    // `E`, and `E` as a value with rules, so that a value without rules is
    // named as such rather than as an argument the kind cannot take.
    let kind_type = &spec.kind;
    let argument_checks = types.iter().map(|ty| {
        let argument = respan(spec.argument.clone(), ty.span());
        // Ahead of the kind's check, which would name the whole argument:
        // what a `Json<T>` reads into must be `Deserialize`, and the value
        // behind `State<T>` shared across threads.
        let payloads = json_payloads(ty).into_iter().map(
            |payload| quote_spanned!(payload.span()=> let _ = <#payload as ::celerity::__private::JsonInput>::OK;),
        );
        let shared = wrapped(ty, "State")
            .map(|shared| quote_spanned!(shared.span()=> let _ = <#shared as ::celerity::__private::SharedState>::OK;));
        let precise = quote!(#(#payloads)* #shared);
        let kind_check = match wrapped(ty, "Valid") {
            Some(inner) => {
                let kind = respan(kind_type.clone(), inner.span());
                quote_spanned! {inner.span()=>
                    let _ = <#inner as #argument>::OK;
                    let _ = <#inner as ::celerity::validation::Validatable<#kind>>::SUBJECT;
                }
            }
            None => quote_spanned!(ty.span()=> let _ = <#ty as #argument>::OK;),
        };
        quote!(#precise #kind_check)
    });

    // The return value, against what the kind answers with, and the future,
    // which must be `Send`: checked on values, so that `impl Trait` in
    // return position is checked too. The closure is never called.
    let variables: Vec<_> = (0..types.len()).map(|i| format_ident!("__celerity_arg{}", i)).collect();
    let answer_check = match &sig.output {
        ReturnType::Type(_, ty) => {
            let answer = respan(spec.answer.clone(), ty.span());
            let payloads = json_payloads(ty).into_iter().map(
                |payload| quote_spanned!(payload.span()=> let _ = <#payload as ::celerity::__private::JsonOutput>::OK;),
            );
            let check = quote_spanned!(ty.span()=> #answer::check(&__celerity_future.await););
            Some(quote!(#(#payloads)* #check))
        }
        // `()` is an answer of every kind.
        ReturnType::Default => None,
    };
    let send_check = quote_spanned! {ident.span()=>
        ::celerity::__private::SendFuture::check(&__celerity_future);
        {
            #[allow(unused_imports)]
            use ::celerity::__private::{ViaNotSend as _, ViaSend as _};
            ::celerity::__private::HandlerFutureIsSend::check(
                (&::celerity::__private::SendProbe(&__celerity_future)).sendness(),
            );
        }
    };
    let call = quote_spanned!(ident.span()=> #ident(#(#variables),*));
    let value_checks = quote! {
        let _ = |#(#variables: #types),*| {
            let __celerity_future = #call;
            #send_check
            async move {
                #answer_check
            }
        };
    };

    let body_check = spec.body_reader.map(|reader| body_check(&spec, reader, &types));

    let key = match &args.binding {
        Binding::Tag(tag) => {
            let tag = &tag.tag;
            quote!(::celerity::HandlerKey::Tag(::std::string::String::from(#tag)))
        }
        Binding::Name(name) => quote!(::celerity::HandlerKey::Name(::std::string::String::from(#name))),
    };
    let max_concurrent = args.max_concurrent.map(|n| {
        let n = proc_macro2::Literal::u32_unsuffixed(n);
        quote!(.max_concurrent(#n))
    });
    // Each layer's expression is spanned where it is written, so that one
    // that is not a layer is reported there.
    let layers = args.layers.iter().map(|layer| {
        let expr = &layer.expr;
        let method = if layer.http { format_ident!("http_layer") } else { format_ident!("layer") };
        let method = proc_macro2::Ident::new(&method.to_string(), expr.span());
        quote_spanned!(expr.span()=> .#method(#expr))
    });
    let guards = args.guards.iter().map(|name| quote!(.guard(#name)));
    let options = match args.concurrency {
        Some(n) => {
            let n = proc_macro2::Literal::usize_unsuffixed(n as usize);
            quote!(::celerity::__private::RecordOptions::concurrency(#n))
        }
        None => quote!(::core::default::Default::default()),
    };
    let line = quote_spanned!(ident.span()=> ::core::line!());
    let file = quote_spanned!(ident.span()=> ::core::file!());
    let cfgs = function.attrs.iter().filter(|attr| attr.path().is_ident("cfg"));

    quote! {
        #(#cfgs)*
        #[allow(non_upper_case_globals, non_snake_case, deprecated, unused_qualifications, clippy::all)]
        const _: () = {
            #body_check

            #[allow(unused_variables, unreachable_code, unused_must_use, clippy::all)]
            fn __celerity_checks() {
                #(#argument_checks)*
                #value_checks
            }

            #[::celerity::__private::linkme::distributed_slice(::celerity::__private::HANDLERS)]
            #[linkme(crate = ::celerity::__private::linkme)]
            static __CELERITY_HANDLER: fn() -> ::celerity::Registration = __celerity_registration;

            fn __celerity_registration() -> ::celerity::Registration {
                #[allow(unused_imports)]
                use ::celerity::__private::{ViaFallback as _, ViaHandler as _};
                (&::celerity::__private::Probe::<#kind_type, (#(#types,)*), _>::new(#ident, #options))
                    .registration(
                        #key,
                        ::celerity::Origin {
                            function: ::core::concat!(::core::module_path!(), "::", #name),
                            file: #file,
                            line: #line,
                        },
                    )
                    #max_concurrent
                    #(#layers)*
                    #(#guards)*
            }
        };
    }
}

/// A compile-time check that at most one argument reads the event's body:
/// for each pair that both do, an unmet bound naming the two types.
fn body_check<'a>(spec: &KindSpec, reader: &str, types: &[&'a Type]) -> Option<TokenStream> {
    if types.len() < 2 {
        return None;
    }
    // `Valid<E>` reads what `E` reads; `E` is what the argument checks name.
    let checked = |ty: &'a Type| wrapped(ty, "Valid").unwrap_or(ty);
    let mut checks = Vec::new();
    for second in 1..types.len() {
        for first in 0..second {
            let (a, b) = (checked(types[first]), checked(types[second]));
            let argument_a = respan(spec.argument.clone(), a.span());
            let argument_b = respan(spec.argument.clone(), b.span());
            let span = b.span();
            let reader = proc_macro2::Ident::new(reader, span);
            checks.push(quote_spanned! {span=>
                <::celerity::__private::BodyReaders<{
                    <#a as #argument_a>::READS_BODY && <#b as #argument_b>::READS_BODY
                }> as ::celerity::__private::#reader<#a, #b>>::check();
            });
        }
    }
    Some(quote! {
        #[allow(dead_code)]
        fn __celerity_at_most_one_argument_reads_the_body() {
            #(#checks)*
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(kind: TagKind, attr: TokenStream, item: TokenStream) -> String {
        expand(kind, attr, item).to_string()
    }

    #[test]
    fn a_valid_handler_keeps_the_function_and_registers_it() {
        let item = quote! {
            async fn get_order(Path(id): Path<u64>, cx: Context) -> Json<Order> { todo!() }
        };
        let out = expand_str(TagKind::Http, quote!("GET::/orders/{id+}", max_concurrent = 3), item.clone());
        assert!(out.starts_with(&item.to_string()), "{out}");
        for part in [
            "distributed_slice (:: celerity :: __private :: HANDLERS)",
            "linkme (crate = :: celerity :: __private :: linkme)",
            "HandlerKey :: Tag (:: std :: string :: String :: from (\"GET::/orders/{*id}\"))",
            "< Path < u64 > as :: celerity :: http :: HttpArgument > :: OK",
            "< Context as :: celerity :: http :: HttpArgument > :: OK",
            ":: celerity :: http :: HttpAnswer :: check",
            ":: celerity :: __private :: SendFuture :: check",
            "Probe :: < :: celerity :: http :: Http , (Path < u64 > , Context ,) , _ > :: new (get_order",
            ". max_concurrent (3)",
            "__celerity_at_most_one_argument_reads_the_body",
        ] {
            assert!(out.contains(part), "missing {part:?} in:\n{out}");
        }
        // No extraction of its own: the arguments are taken by library code.
        assert!(!out.contains("from_event"), "{out}");
    }

    #[test]
    fn zero_arguments_and_by_name() {
        let out = expand_str(
            TagKind::Custom,
            quote!(name = "resize"),
            quote!(
                async fn resize() {}
            ),
        );
        assert!(out.contains("HandlerKey :: Name (:: std :: string :: String :: from (\"resize\"))"), "{out}");
        assert!(out.contains("Probe :: < :: celerity :: custom :: Custom , () , _ >"), "{out}");
        assert!(!out.contains("CustomAnswer"), "`()` needs no check: {out}");
        assert!(!out.contains("READS_BODY"), "{out}");
    }

    #[test]
    fn a_consumer_taking_the_batch_is_a_batch_consumer() {
        let item = quote!(
            async fn all(info: BatchInfo, batch: celerity::consumer::Batch) {}
        );
        let out = expand_str(TagKind::Consumer, quote!("source::q::all"), item);
        assert!(out.contains("Probe :: < :: celerity :: consumer :: WholeBatch"), "{out}");
        assert!(out.contains("ConsumerBatchArgument"), "{out}");
        let item = quote!(
            async fn one(record: RawRecord) {}
        );
        let out = expand_str(TagKind::Consumer, quote!("source::q::one", concurrency = 8), item);
        assert!(out.contains("Probe :: < :: celerity :: consumer :: PerRecord"), "{out}");
        assert!(out.contains("RecordOptions :: concurrency (8)"), "{out}");
    }

    #[test]
    fn more_arguments_than_a_handler_takes_are_refused_at_the_first_extra() {
        let item = quote!(
            async fn many(a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I) {}
        );
        let out = expand_str(TagKind::Http, quote!("GET::/many"), item.clone());
        assert!(out.starts_with(&item.to_string()), "{out}");
        assert!(out.contains("at most 8 arguments"), "{out}");
        assert!(!out.contains("distributed_slice"), "{out}");
    }

    #[test]
    fn cfg_attributes_follow_the_function() {
        let item = quote!(
            #[cfg(feature = "x")]
            async fn f() {}
        );
        let out = expand_str(TagKind::Http, quote!("GET::/f"), item);
        assert_eq!(out.matches("# [cfg (feature = \"x\")]").count(), 2, "{out}");
    }

    #[test]
    fn errors_keep_the_original_item_and_register_nothing() {
        let cases = [
            (
                quote!("get::/x"),
                quote!(
                    async fn f() {}
                ),
            ),
            (
                quote!("GET::/x"),
                quote!(
                    fn f() {}
                ),
            ),
            (
                quote!("GET::/x", max_concurrent = 0),
                quote!(
                    async fn f<T>(t: T) {}
                ),
            ),
            (
                quote!("GET::/x"),
                quote!(
                    struct S;
                ),
            ),
            (
                quote!(),
                quote!(
                    async fn f(&self) {}
                ),
            ),
        ];
        for (attr, item) in cases {
            let out = expand_str(TagKind::Http, attr, item.clone());
            assert!(out.starts_with(&item.to_string()), "{out}");
            assert!(out.contains("compile_error"), "{out}");
            assert!(!out.contains("distributed_slice"), "{out}");
        }
    }

    #[test]
    fn every_signature_problem_is_reported() {
        let item = quote!(
            unsafe fn f<T>(&self, x: impl Into<T>) {}
        );
        let out = expand_str(TagKind::Http, quote!("GET::/x"), item);
        assert_eq!(out.matches("compile_error").count(), 5, "{out}");
    }
}
