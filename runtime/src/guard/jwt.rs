//! A guard that verifies bearer JWTs and gives the handler their claims.
//! Behind the `jwt` feature.
//!
//! [`JwtGuard<C>`] reads the `Authorization: Bearer` token of a request,
//! verifies its signature with the keys it was built with (an HS256 shared
//! secret, RS256 or ES256 public keys in PEM, the RS256 and ES256 keys of a
//! JWKS file), checks its `iss`, `aud`, `exp` and `nbf`, and gives the
//! handler its claims, deserialized into `C`, as
//! [`Identity<C>`](super::Identity).
//!
//! ```no_run
//! use celerity::guard::Identity;
//! use celerity::guard::jwt::JwtGuard;
//! use celerity::http::HttpError;
//! use celerity::{App, http_handler};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Claims {
//!     sub: String,
//!     #[serde(default)]
//!     scope: String,
//! }
//!
//! #[http_handler("GET::/orders", guard = "jwt")]
//! async fn orders(claims: Identity<Claims>) -> Result<String, HttpError> {
//!     // The guard has checked who the caller is; what they may do is the
//!     // handler's to decide, and a refusal here is a 403.
//!     if !claims.scope.split(' ').any(|scope| scope == "orders:read") {
//!         return Err(HttpError::forbidden("the token does not grant orders:read"));
//!     }
//!     Ok(format!("orders of {}", claims.sub))
//! }
//!
//! #[celerity::main]
//! async fn main() -> celerity::Result<App> {
//!     let jwt = JwtGuard::<Claims>::builder()
//!         .hs256_secret_from_env("JWT_SECRET")
//!         .issuer("https://issuer.example")
//!         .audience("orders")
//!         .build()?;
//!     Ok(App::new().guard("jwt", jwt))
//! }
//! ```
//!
//! # What it checks, and what it answers
//!
//! Every refusal is [`Verdict::unauthorized`](super::Verdict::unauthorized): a `401` for HTTP, whose
//! `message` names the check that failed and never repeats the token or
//! anything read from it. A refused token is not an identity at all, so
//! the guard never answers `403`: whether a known caller may do something
//! (a scope, a role) is for the handler to decide from the claims, or for
//! a guard of its own.
//!
//! | the request | `message` |
//! | --- | --- |
//! | no `Authorization: Bearer` header | a bearer token is required |
//! | more than one `Authorization` header | the request carries more than one `authorization` header |
//! | not three base64url parts with a JSON header | the token is malformed |
//! | an `alg` none of the guard's keys verifies (`none`, `HS256` at a guard with only public keys, ...) | the token's algorithm is not one this guard accepts |
//! | a `kid` no JWKS key has, where only JWKS keys verify its `alg` | the token's key (kid) is not one this guard knows |
//! | no `kid`, where only JWKS keys verify its `alg` | the token names no key (kid), and this guard chooses its key by one |
//! | a signature no key of its algorithm verifies | the token's signature does not verify |
//! | no `exp`, `iss` or `aud` | the token has no `exp` claim (or `iss`, `aud`) |
//! | an `iss` that is not one string, an `aud` that is not a string or an array of strings, an `exp` or `nbf` that is not an integer from 0 to 2^64 - 1 | the token's `iss` claim is malformed (or `aud`, `exp`, `nbf`) |
//! | an `exp` in the past, beyond the leeway | the token has expired |
//! | an `nbf` in the future, beyond the leeway | the token is not valid yet |
//! | an `iss` not named by [`issuer`](JwtGuardBuilder::issuer) | the token's issuer is not accepted |
//! | an `aud` naming none of the [`audience`](JwtGuardBuilder::audience)s | the token's audience is not accepted |
//! | claims that do not deserialize into `C` | the token's claims do not have the shape this service expects, and the field |
//!
//! The algorithms accepted are those of the keys configured, each key
//! verifying its own algorithm only, so that a token cannot choose how it
//! is checked: an HS256 token is never verified with an RSA public key as
//! its secret. The signature is checked before any claim, and the claims
//! are deserialized into `C` after every check has passed.
//!
//! A mistake in the configuration is an error from
//! [`JwtGuardBuilder::build`], naming the environment variable or file and
//! what is wrong: the guard never starts half-configured.

mod builder;
mod claims;
mod config_error;
mod header;
mod keys;

use std::fmt;
use std::marker::PhantomData;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::de::DeserializeOwned;

pub use builder::{DEFAULT_LEEWAY, JwtGuardBuilder};
pub use config_error::JwtConfigError;
use header::TokenHeader;
use keys::Key;

use super::{Guard, GuardRequest, Verdict};
use crate::error::Error;
use crate::excerpt::excerpt;

/// A [`Guard`] that allows a request carrying a valid bearer JWT and gives
/// the handler its claims as [`Identity<C>`](super::Identity); see [the module](self) for
/// what it checks. Built with [`JwtGuard::builder`].
///
/// `C` is the application's own claims type: any `Deserialize` struct,
/// which may name `sub`, `exp`, scopes and whatever else its tokens carry.
///
/// ```
/// use celerity::guard::jwt::JwtGuard;
///
/// #[derive(serde::Deserialize)]
/// struct Claims { sub: String }
///
/// let guard = JwtGuard::<Claims>::builder()
///     .hs256_secret("a shared secret of thirty-two bytes or more")
///     .issuer("https://issuer.example")
///     .audience("orders")
///     .build()
///     .expect("a valid configuration");
/// let app = celerity::App::new().guard("jwt", guard);
/// # drop(app);
/// ```
pub struct JwtGuard<C> {
    /// Each key with what a token verified by it must also satisfy.
    keys: Vec<(Key, Validation)>,
    claims: PhantomData<fn() -> C>,
}

impl<C> JwtGuard<C> {
    /// A builder: give it at least one key, an issuer and an audience.
    pub fn builder() -> JwtGuardBuilder<C> {
        JwtGuardBuilder::new()
    }

    /// The algorithms this guard accepts: those of its keys.
    pub fn algorithms(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.keys.iter().map(|(key, _)| algorithm_name(key.algorithm)).collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The claims of `token`, once it has passed every check; the reason
    /// to give the caller when it has not. An `Err` is a key the backend
    /// could not use, which is the guard's failure rather than the caller's.
    fn verify(&self, token: &str) -> Result<Result<serde_json::Value, String>, Error> {
        let Some(header) = TokenHeader::read(token) else { return Ok(Err("the token is malformed".into())) };
        let accepted = |key: &Key| algorithm_name(key.algorithm) == header.alg;
        if !self.keys.iter().any(|(key, _)| accepted(key)) {
            return Ok(Err("the token's algorithm is not one this guard accepts".into()));
        }
        let candidates: Vec<&(Key, Validation)> =
            self.keys.iter().filter(|(key, _)| accepted(key) && (key.kid.is_none() || key.kid == header.kid)).collect();
        if candidates.is_empty() {
            return Ok(Err(match header.kid {
                Some(_) => "the token's key (kid) is not one this guard knows".into(),
                None => "the token names no key (kid), and this guard chooses its key by one".into(),
            }));
        }
        for (key, validation) in candidates {
            match jsonwebtoken::decode::<serde_json::Value>(token, &key.decoding, validation) {
                Ok(data) => {
                    return Ok(match claims::malformed(&data.claims) {
                        Some(claim) => Err(malformed(claim)),
                        None => Ok(data.claims),
                    });
                }
                // Another key of the same algorithm may have signed it.
                Err(error) if matches!(error.kind(), ErrorKind::InvalidSignature) => continue,
                Err(error) => {
                    let reason = refusal(error.kind())?;
                    // A claim check fails only once the signature has
                    // verified, and the backend reads a claim it cannot
                    // parse as absent or as several values.
                    let of_claims = matches!(
                        error.kind(),
                        ErrorKind::MissingRequiredClaim(_)
                            | ErrorKind::InvalidClaimFormat(_)
                            | ErrorKind::InvalidIssuer
                            | ErrorKind::InvalidAudience
                            | ErrorKind::ExpiredSignature
                            | ErrorKind::ImmatureSignature
                    );
                    let claims = of_claims.then(|| claims::of_verified(token)).flatten();
                    return Ok(Err(match claims.as_ref().and_then(claims::malformed) {
                        Some(claim) => malformed(claim),
                        None => reason,
                    }));
                }
            }
        }
        Ok(Err("the token's signature does not verify".into()))
    }
}

/// The reason for refusing a token whose signature verified but which
/// failed another check, or for failing the guard when the fault is its key.
fn refusal(kind: &ErrorKind) -> Result<String, Error> {
    Ok(match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".into(),
        ErrorKind::InvalidIssuer => "the token's issuer is not accepted".into(),
        ErrorKind::InvalidAudience => "the token's audience is not accepted".into(),
        // The claim's name is one of the guard's own, never the token's.
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidClaimFormat(claim) => malformed(claim),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm is not one this guard accepts".into()
        }
        ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat
        | ErrorKind::UnsupportedAlgorithm
        | ErrorKind::Provider(_) => {
            return Err(Error::msg("the JWT guard's key could not be used to verify a token"));
        }
        _ => "the token is malformed".into(),
    })
}

/// The reason for refusing a token whose `claim` is present in a shape
/// RFC 7519 does not give it.
fn malformed(claim: &str) -> String {
    format!("the token's `{claim}` claim is malformed")
}

/// `claims` as `C`, or the reason they are not: the field that is missing
/// or of the wrong type, never its value.
fn shaped<C: DeserializeOwned>(claims: serde_json::Value) -> Result<C, String> {
    serde_path_to_error::deserialize(claims).map_err(|error: serde_path_to_error::Error<serde_json::Error>| {
        let inner = error.inner().to_string();
        let path = error.path().to_string();
        let detail = match inner.strip_prefix("missing field ") {
            Some(field) if path == "." => format!("missing field {field}"),
            Some(field) => format!("missing field {field} at `{path}`"),
            None => format!("at `{path}`"),
        };
        format!("the token's claims do not have the shape this service expects: {}", excerpt(&detail))
    })
}

fn algorithm_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::HS256 => "HS256",
        Algorithm::RS256 => "RS256",
        Algorithm::ES256 => "ES256",
        // The builder makes keys of these three algorithms only.
        _ => "other",
    }
}

impl<C: DeserializeOwned + Send + Sync + 'static> Guard for JwtGuard<C> {
    async fn check(&self, request: GuardRequest) -> Result<Verdict, Error> {
        let token = match request.bearer_token() {
            Ok(Some(token)) => token,
            Ok(None) => return Ok(Verdict::unauthorized("a bearer token is required")),
            Err(ambiguous) => return Ok(ambiguous),
        };
        let claims = match self.verify(token)? {
            Ok(claims) => claims,
            Err(reason) => return Ok(Verdict::unauthorized(reason)),
        };
        Ok(match shaped::<C>(claims) {
            Ok(claims) => Verdict::allow_as(claims),
            Err(reason) => Verdict::unauthorized(reason),
        })
    }
}

impl<C> fmt::Debug for JwtGuard<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kids: Vec<&str> = self.keys.iter().filter_map(|(key, _)| key.kid.as_deref()).collect();
        f.debug_struct("JwtGuard")
            .field("claims", &std::any::type_name::<C>())
            .field("algorithms", &self.algorithms())
            .field("kids", &kids)
            .finish_non_exhaustive()
    }
}
