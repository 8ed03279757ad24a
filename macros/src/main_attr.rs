//! `#[celerity::main]`: an `async fn main` run on a tokio runtime built for it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Item, ReturnType};

use crate::args::Errors;

const USAGE: &str = "`#[celerity::main] async fn main() -> celerity::Result<()> { ... }`";

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    if !attr.is_empty() {
        errors.push(syn::Error::new_spanned(
            &attr,
            "`#[celerity::main]` takes no arguments: write `#[celerity::main]` (settings come from the environment, handlers from the attributes)",
        ));
    }
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
    let run = quote_spanned!(output_span=> ::celerity::__private::main::<#output_type, _>);
    quote! {
        #(#attrs)*
        #vis fn #ident() -> ::std::process::ExitCode {
            async fn __celerity_main() #output #block
            #run(__celerity_main)
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
            out.contains(":: celerity :: __private :: main :: < celerity :: Result < () > , _ > (__celerity_main)")
        );
        let out = expand(
            quote!(),
            quote!(
                async fn main() {}
            ),
        )
        .to_string();
        assert!(out.contains(":: celerity :: __private :: main :: < () , _ >"), "{out}");
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
