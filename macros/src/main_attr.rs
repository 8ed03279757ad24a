//! `#[celerity::main]`: an `async fn main` run on a tokio runtime built for it.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprPath, FnArg, Item, Lit, Meta, MetaNameValue, ReturnType, Token};

use crate::args::{Errors, closest, parse_count, twice};

const USAGE: &str = "`#[celerity::main] async fn main() -> celerity::Result<()> { ... }`";

/// The options, for messages.
const OPTIONS: &str = "`#[celerity::main]` takes `flavor = \"...\"` and `worker_threads = N`";

/// The flavors, for messages.
const FLAVORS: &str = "expected `flavor = \"current_thread\"` or `flavor = \"multi_thread\"`";

/// The tokio runtime `main` runs on, as `#[tokio::main]` would build it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    CurrentThread,
    MultiThread,
}

/// `#[celerity::main(...)]`'s arguments, checked.
struct RuntimeArgs {
    flavor: Flavor,
    /// The size of the multi-threaded runtime's pool, and where it was
    /// written; tokio's default (one per core) without it.
    worker_threads: Option<(u32, Span)>,
}

impl Default for RuntimeArgs {
    fn default() -> Self {
        RuntimeArgs { flavor: Flavor::MultiThread, worker_threads: None }
    }
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let runtime = parse_args(attr, &mut errors);
    let function = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => Some(function),
        Ok(other) => {
            let (what, span) = crate::handler::describe_item(&other);
            errors.push(syn::Error::new_spanned(
                span,
                format!("`#[celerity::main]` goes on the program's `async fn main`, not on {what}: write {USAGE}"),
            ));
            None
        }
        Err(_) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                format!("`#[celerity::main]` goes on the program's `async fn main`: write {USAGE}"),
            ));
            None
        }
    };
    if let Some(function) = &function {
        let sig = &function.sig;
        let name = sig.ident.unraw();
        if name != "main" {
            errors.push(syn::Error::new_spanned(
                &sig.ident,
                format!(
                    "`#[celerity::main]` goes on the program's `main`, the one function that runs: on `{name}` it would never run; name it `main`, or call `{name}` from `main` with `celerity::run_main`"
                ),
            ));
        }
        if sig.asyncness.is_none() {
            errors.push(syn::Error::new_spanned(
                sig.fn_token,
                format!(
                    "`#[celerity::main]` goes on an `async fn`: write `async fn {name}()`; it builds the tokio runtime that runs it"
                ),
            ));
        }
        if let Some(constness) = &sig.constness {
            errors.push(syn::Error::new_spanned(constness, format!("`main` cannot be a `const fn`: write {USAGE}")));
        }
        if let Some(unsafety) = &sig.unsafety {
            errors.push(syn::Error::new_spanned(unsafety, format!("`main` cannot be an `unsafe fn`: write {USAGE}")));
        }
        if let Some(abi) = &sig.abi {
            errors.push(syn::Error::new_spanned(abi, format!("`main` cannot have an `extern` ABI: write {USAGE}")));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            let generics = &sig.generics;
            errors.push(syn::Error::new_spanned(
                quote!(#generics),
                format!("`#[celerity::main] async fn {name}` cannot be generic: write `async fn {name}()`"),
            ));
        }
        if !sig.inputs.is_empty() || sig.variadic.is_some() {
            let inputs = &sig.inputs;
            let receiver = sig.inputs.iter().any(|input| matches!(input, FnArg::Receiver(_)));
            let message = if receiver {
                format!("`#[celerity::main]` goes on a free `async fn {name}()`, not a method")
            } else {
                format!(
                    "`#[celerity::main] async fn {name}` takes no arguments: write `async fn {name}()`, and read the command line with `std::env::args()` and settings with `std::env::var`"
                )
            };
            errors.push(syn::Error::new_spanned(quote!(#inputs), message));
        }
    }
    if let Err(error) = errors.finish() {
        let error = error.to_compile_error();
        return match function {
            Some(function) => with_errors(function, error),
            None => quote!(#item #error),
        };
    }
    let Some(function) = function else {
        return item;
    };

    let syn::ItemFn { attrs, vis, sig, block } = function;
    let ident = &sig.ident;
    let (output, output_type) = match &sig.output {
        ReturnType::Default => (quote!(), quote!(())),
        ReturnType::Type(arrow, ty) => (quote!(#arrow #ty), quote!(#ty)),
    };
    let output_span = match &sig.output {
        ReturnType::Default => ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let run = quote_spanned!(output_span=> ::celerity::__private::main_on::<#output_type, _>);
    let builder = runtime_builder(&runtime);
    let at_root = quote_spanned! {ident.span()=>
        <::celerity::__private::AtCrateRoot<{ ::celerity::__private::is_crate_root(::core::module_path!()) }>
            as ::celerity::__private::MainAtCrateRoot>::check();
    };
    quote! {
        #(#attrs)*
        #vis fn #ident() -> ::std::process::ExitCode {
            #at_root
            async fn __celerity_main() #output #block
            #run(#builder, __celerity_main)
        }
    }
}

/// Parses and checks `#[celerity::main(...)]`'s arguments, pushing what is
/// wrong onto `errors` and giving the default for it.
fn parse_args(attr: TokenStream, errors: &mut Errors) -> RuntimeArgs {
    let mut args = RuntimeArgs::default();
    if attr.is_empty() {
        return args;
    }
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr) {
        Ok(metas) => metas,
        Err(error) => {
            errors.push(syn::Error::new(
                error.span(),
                format!("{error}: {OPTIONS}, such as `#[celerity::main(flavor = \"current_thread\")]`"),
            ));
            return args;
        }
    };
    let mut flavor_given = false;
    let mut worker_threads: Option<(u32, &MetaNameValue)> = None;
    let mut worker_threads_given = false;
    for meta in &metas {
        let key = match meta.path().get_ident() {
            Some(key) => key,
            None => {
                errors.push(syn::Error::new_spanned(meta.path(), format!("unknown option: {OPTIONS}")));
                continue;
            }
        };
        let name_value = match meta {
            Meta::NameValue(name_value) => name_value,
            Meta::Path(_) => {
                errors.push(without_value(key));
                continue;
            }
            Meta::List(list) => {
                errors.push(syn::Error::new_spanned(
                    list,
                    format!("options are written `{key} = value`, not `{key}(...)`: {OPTIONS}"),
                ));
                continue;
            }
        };
        match key.to_string().as_str() {
            "flavor" => {
                if std::mem::replace(&mut flavor_given, true) {
                    errors.push(twice(key));
                    continue;
                }
                match parse_flavor(&name_value.value) {
                    Ok(flavor) => args.flavor = flavor,
                    Err(error) => errors.push(error),
                }
            }
            "worker_threads" => {
                if std::mem::replace(&mut worker_threads_given, true) {
                    errors.push(twice(key));
                    continue;
                }
                match parse_count(
                    key,
                    &name_value.value,
                    "the multi-threaded runtime's worker threads",
                    "would leave the runtime no worker thread to run handlers on",
                ) {
                    Ok(n) => worker_threads = Some((n, name_value)),
                    Err(error) => errors.push(error),
                }
            }
            other => errors.push(unknown_option(key, other)),
        }
    }
    if let Some((n, name_value)) = worker_threads {
        if args.flavor == Flavor::CurrentThread {
            errors.push(syn::Error::new_spanned(
                name_value,
                "`worker_threads` applies to `flavor = \"multi_thread\"` only: a `current_thread` runtime runs everything on the thread that calls `main`; remove `worker_threads`, or write `flavor = \"multi_thread\"`",
            ));
        } else {
            args.worker_threads = Some((n, name_value.value.span()));
        }
    }
    args
}

fn unknown_option(key: &syn::Ident, name: &str) -> syn::Error {
    let mut message = format!("unknown option `{name}`: {OPTIONS}");
    if let Some(close) = closest(name, &["flavor", "worker_threads"]) {
        message.push_str(&format!("; did you mean `{close}`?"));
    }
    syn::Error::new_spanned(key, message)
}

/// The error for an option written without `= value`.
fn without_value(key: &syn::Ident) -> syn::Error {
    let message = match key.to_string().as_str() {
        "flavor" => format!("`flavor` needs a value: {FLAVORS}"),
        "worker_threads" => {
            "`worker_threads` needs a value, a whole number of at least 1: write `worker_threads = 4`".to_string()
        }
        flavor @ ("current_thread" | "multi_thread") => {
            format!("the runtime flavor is an option: write `flavor = \"{flavor}\"`")
        }
        other => return unknown_option(key, other),
    };
    syn::Error::new_spanned(key, message)
}

fn parse_flavor(value: &Expr) -> syn::Result<Flavor> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(literal), .. }) => match literal.value().as_str() {
            "current_thread" => Ok(Flavor::CurrentThread),
            "multi_thread" => Ok(Flavor::MultiThread),
            other => {
                let mut message = format!("unknown runtime flavor `\"{other}\"`: {FLAVORS}");
                if let Some(close) = closest(other, &["current_thread", "multi_thread"]) {
                    message.push_str(&format!("; did you mean `flavor = \"{close}\"`?"));
                }
                Err(syn::Error::new_spanned(literal, message))
            }
        },
        Expr::Path(ExprPath { path, .. })
            if path.get_ident().is_some_and(|ident| ident == "current_thread" || ident == "multi_thread") =>
        {
            let flavor = path.get_ident().map(ToString::to_string).unwrap_or_default();
            Err(syn::Error::new_spanned(path, format!("`flavor` takes a string: write `flavor = \"{flavor}\"`")))
        }
        other => Err(syn::Error::new_spanned(other, format!("`flavor` takes a string: {FLAVORS}"))),
    }
}

/// The `tokio::runtime::Builder` for `main`'s runtime, named through
/// `::celerity::__private::tokio` so the application needs no tokio
/// dependency of its own. `run_main_on` enables the drivers.
fn runtime_builder(args: &RuntimeArgs) -> TokenStream {
    let builder = quote!(::celerity::__private::tokio::runtime::Builder);
    match (args.flavor, args.worker_threads) {
        (Flavor::CurrentThread, _) => quote!(#builder::new_current_thread()),
        (Flavor::MultiThread, None) => quote!(#builder::new_multi_thread()),
        (Flavor::MultiThread, Some((n, span))) => {
            let mut n = Literal::usize_unsuffixed(n as usize);
            n.set_span(span);
            quote! {{
                let mut __celerity_runtime = #builder::new_multi_thread();
                __celerity_runtime.worker_threads(#n);
                __celerity_runtime
            }}
        }
    }
}

/// The original function beside the errors, without giving more: an `async`
/// or parameterised `fn main` would be refused as the entry point, so it is
/// kept under another name, and an empty `main` stands in.
fn with_errors(mut function: syn::ItemFn, error: TokenStream) -> TokenStream {
    let sig = &function.sig;
    let refused_as_entry_point =
        sig.asyncness.is_some() || !sig.inputs.is_empty() || !sig.generics.params.is_empty() || sig.unsafety.is_some();
    if sig.ident != "main" || !refused_as_entry_point {
        return quote!(#function #error);
    }
    function.sig.ident = syn::Ident::new("__celerity_main", sig.ident.span());
    quote! {
        #[allow(dead_code)]
        #function
        fn main() {}
        #error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_the_body_in_an_async_fn_run_by_the_runtime() {
        let out = expand(
            quote!(),
            quote!(
                async fn main() -> celerity::Result<()> {
                    Ok(())
                }
            ),
        )
        .to_string();
        assert!(out.contains("fn main () -> :: std :: process :: ExitCode"), "{out}");
        assert!(out.contains("async fn __celerity_main () -> celerity :: Result < () > { Ok (()) }"), "{out}");
        assert!(
            out.contains(
                ":: celerity :: __private :: main_on :: < celerity :: Result < () > , _ > (:: celerity :: __private :: tokio :: runtime :: Builder :: new_multi_thread () , __celerity_main)"
            ),
            "{out}"
        );
        let out = expand(
            quote!(),
            quote!(
                async fn main() {}
            ),
        )
        .to_string();
        assert!(out.contains(":: celerity :: __private :: main_on :: < () , _ >"), "{out}");
    }

    /// `main`'s expansion under `#[celerity::main(#attr)]`.
    fn expand_with(attr: TokenStream) -> String {
        expand(
            attr,
            quote!(
                async fn main() {}
            ),
        )
        .to_string()
    }

    /// The errors of `#[celerity::main(#attr)]`, one a line.
    fn errors_of(attr: TokenStream) -> String {
        let mut errors = Errors::default();
        parse_args(attr, &mut errors);
        match errors.finish() {
            Ok(()) => panic!("expected an error"),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
        }
    }

    const BUILDER: &str = ":: celerity :: __private :: tokio :: runtime :: Builder";

    #[test]
    fn each_flavor_builds_its_runtime() {
        let call = |builder: &str| format!("main_on :: < () , _ > ({builder} , __celerity_main)");
        let multi_thread = call(&format!("{BUILDER} :: new_multi_thread ()"));
        assert!(expand_with(quote!()).contains(&multi_thread));
        assert!(expand_with(quote!(flavor = "multi_thread")).contains(&multi_thread));
        let current_thread = call(&format!("{BUILDER} :: new_current_thread ()"));
        let out = expand_with(quote!(flavor = "current_thread"));
        assert!(out.contains(&current_thread), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
        assert!(expand_with(quote!(flavor = "current_thread",)).contains(&current_thread));
    }

    #[test]
    fn worker_threads_sizes_the_multi_threaded_pool() {
        let sized = |n: &str| {
            format!(
                "main_on :: < () , _ > ({{ let mut __celerity_runtime = {BUILDER} :: new_multi_thread () ; __celerity_runtime . worker_threads ({n}) ; __celerity_runtime }} , __celerity_main)"
            )
        };
        let out = expand_with(quote!(worker_threads = 4));
        assert!(out.contains(&sized("4")), "{out}");
        let out = expand_with(quote!(flavor = "multi_thread", worker_threads = 4));
        assert!(out.contains(&sized("4")), "{out}");
        // In either order, and whatever the literal's suffix: the count is
        // written back without one.
        let out = expand_with(quote!(worker_threads = 2u32, flavor = "multi_thread"));
        assert!(out.contains(&sized("2")), "{out}");
    }

    #[test]
    fn runtime_errors_name_the_accepted_forms() {
        let e = errors_of(quote!(flavour = "current_thread"));
        assert_eq!(
            e,
            "unknown option `flavour`: `#[celerity::main]` takes `flavor = \"...\"` and `worker_threads = N`; did you mean `flavor`?"
        );
        let e = errors_of(quote!(threads = 2));
        assert_eq!(
            e,
            "unknown option `threads`: `#[celerity::main]` takes `flavor = \"...\"` and `worker_threads = N`"
        );
        let e = errors_of(quote!(flavor = "single_thread"));
        assert!(
            e.starts_with(
                "unknown runtime flavor `\"single_thread\"`: expected `flavor = \"current_thread\"` or `flavor = \"multi_thread\"`"
            ),
            "{e}"
        );
        let e = errors_of(quote!(flavor = "current-thread"));
        assert!(e.ends_with("; did you mean `flavor = \"current_thread\"`?"), "{e}");
        let e = errors_of(quote!(flavor = current_thread));
        assert_eq!(e, "`flavor` takes a string: write `flavor = \"current_thread\"`");
        let e = errors_of(quote!(flavor = 1));
        assert_eq!(e, "`flavor` takes a string: expected `flavor = \"current_thread\"` or `flavor = \"multi_thread\"`");
        let e = errors_of(quote!(flavor));
        assert!(e.starts_with("`flavor` needs a value"), "{e}");
        let e = errors_of(quote!(current_thread));
        assert_eq!(e, "the runtime flavor is an option: write `flavor = \"current_thread\"`");
        let e = errors_of(quote!(flavor = "current_thread", worker_threads = 2));
        assert!(e.starts_with("`worker_threads` applies to `flavor = \"multi_thread\"` only"), "{e}");
        let e = errors_of(quote!(worker_threads = 2, flavor = "current_thread"));
        assert!(e.starts_with("`worker_threads` applies to `flavor = \"multi_thread\"` only"), "{e}");
        let e = errors_of(quote!(worker_threads = 0));
        assert!(e.starts_with("`worker_threads = 0` would leave the runtime no worker thread"), "{e}");
        assert!(e.ends_with("such as `worker_threads = 8`"), "{e}");
        let e = errors_of(quote!(worker_threads = -1));
        assert!(e.contains("cannot be negative"), "{e}");
        let e = errors_of(quote!(worker_threads = "4"));
        assert!(e.contains("write `worker_threads = 4`"), "{e}");
        let e = errors_of(quote!(worker_threads = num_cpus()));
        assert!(e.contains("integer literal"), "{e}");
        let e = errors_of(quote!(flavor = "multi_thread", flavor = "current_thread"));
        assert_eq!(e, "`flavor` is given twice: give each option once");
        let e = errors_of(quote!(worker_threads = 2, worker_threads = 3));
        assert_eq!(e, "`worker_threads` is given twice: give each option once");
        let e = errors_of(quote!(flavor("current_thread")));
        assert!(e.starts_with("options are written `flavor = value`"), "{e}");
        let e = errors_of(quote!("current_thread"));
        assert!(e.contains("`#[celerity::main]` takes"), "{e}");
        // Every mistake at once.
        let e = errors_of(quote!(flavor = "x", worker_threads = 0, color = 1));
        assert_eq!(e.lines().count(), 3, "{e}");
    }

    #[test]
    fn bad_arguments_keep_the_function() {
        let out = expand_with(quote!(flavor = "x"));
        assert!(out.contains("async fn __celerity_main () { }"), "{out}");
        assert!(out.contains("fn main () { }"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
    }

    #[test]
    fn an_async_main_with_errors_is_renamed_so_only_the_errors_show() {
        let out = expand(
            quote!(),
            quote!(
                async fn main(port: u16) {}
            ),
        )
        .to_string();
        assert!(out.contains("async fn __celerity_main (port : u16)"), "{out}");
        assert!(out.contains("fn main () { }"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
        let out = expand(
            quote!(),
            quote!(
                fn main() {}
            ),
        )
        .to_string();
        assert!(out.starts_with("fn main () { }"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
        let out = expand(
            quote!(x),
            quote!(
                async fn start() {}
            ),
        )
        .to_string();
        assert!(out.starts_with("async fn start () { }"), "{out}");
    }
}
