//! Bearer tokens for tests of handlers behind the JWT guard.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use serde_json::{Map, Value};

/// A JWT to send to a handler behind a [`JwtGuard`](crate::guard::jwt::JwtGuard)
/// in a test, signed with HS256, RS256 or ES256. Behind the `jwt` feature,
/// so that a test needs no JWT crate or crypto backend of its own.
///
/// The claims are the application's own (any `Serialize` value that is a
/// JSON object), with `iss`, `aud`, `exp`, `nbf` and any other claim set
/// on top. Unless the claims or [`expires_in`](Self::expires_in) set one,
/// `exp` is an hour from when the token is signed, so that a token passes
/// the guard's required `exp` without further thought.
///
/// ```
/// use celerity::guard::Identity;
/// use celerity::guard::jwt::JwtGuard;
/// use celerity::testing::{TestRequest, TestToken, block_on};
/// use celerity::{App, HandlerKey, Registration};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Claims { sub: String }
///
/// async fn me(claims: Identity<Claims>) -> String {
///     claims.sub.clone()
/// }
///
/// const SECRET: &str = "a shared secret of thirty-two bytes or more";
/// let guard = JwtGuard::<Claims>::builder()
///     .hs256_secret(SECRET)
///     .issuer("https://issuer.example")
///     .audience("orders")
///     .build()
///     .unwrap();
/// let app = App::new()
///     .without_compiled_handlers()
///     .guard("jwt", guard)
///     .register(Registration::http(HandlerKey::Tag("GET::/me".into()), me).guard("jwt"))
///     .into_test();
///
/// let token = TestToken::new(Claims { sub: "u-1".into() })
///     .issuer("https://issuer.example")
///     .audience("orders")
///     .hs256(SECRET);
/// block_on(async {
///     let response = app.call("GET::/me", TestRequest::get("/me").bearer(&token)).await.expect_http();
///     assert_eq!(response.text(), "u-1");
/// });
/// ```
#[derive(Debug, Clone)]
pub struct TestToken {
    claims: Map<String, Value>,
    kid: Option<String>,
    expires_in: Option<Duration>,
}

impl TestToken {
    /// A token carrying `claims`.
    ///
    /// # Panics
    ///
    /// When `claims` do not serialize as a JSON object; this is a test
    /// helper.
    pub fn new(claims: impl Serialize) -> Self {
        let claims = match serde_json::to_value(claims) {
            Ok(Value::Object(claims)) => claims,
            Ok(other) => panic!("a token's claims are a JSON object, not {other}"),
            Err(error) => panic!("the token's claims do not serialize: {error}"),
        };
        TestToken { claims, kid: None, expires_in: None }
    }

    /// Sets the claim `name` to `value`, replacing any the claims had.
    ///
    /// # Panics
    ///
    /// When `value` does not serialize as JSON.
    pub fn claim(mut self, name: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or_else(|error| panic!("the claim `{name}`: {error}"));
        self.claims.insert(name.to_string(), value);
        self
    }

    /// Sets `iss`.
    pub fn issuer(self, issuer: &str) -> Self {
        self.claim("iss", issuer)
    }

    /// Sets `aud` to one audience.
    pub fn audience(self, audience: &str) -> Self {
        self.claim("aud", audience)
    }

    /// Sets `exp` to `lifetime` after the token is signed.
    pub fn expires_in(mut self, lifetime: Duration) -> Self {
        self.expires_in = Some(lifetime);
        self.claims.remove("exp");
        self
    }

    /// Sets `exp` to `age` before the token is signed: a token that has
    /// expired.
    pub fn expired_for(self, age: Duration) -> Self {
        let exp = unix_now().saturating_sub(age.as_secs());
        self.claim("exp", exp)
    }

    /// Sets `nbf` to `delay` after the token is signed: a token not yet valid.
    pub fn not_before_in(self, delay: Duration) -> Self {
        let nbf = unix_now().saturating_add(delay.as_secs());
        self.claim("nbf", nbf)
    }

    /// Names the signing key in the header's `kid`, as a JWKS guard needs.
    pub fn kid(mut self, kid: &str) -> Self {
        self.kid = Some(kid.to_string());
        self
    }

    /// The token signed with HS256 and `secret`.
    pub fn hs256(&self, secret: impl AsRef<[u8]>) -> String {
        let key = EncodingKey::from_secret(secret.as_ref())
            .unwrap_or_else(|error| panic!("the secret cannot sign a token: {error}"));
        self.signed(Algorithm::HS256, key)
    }

    /// The token signed with RS256 and the RSA private key `private_pem`
    /// (PKCS#1 or PKCS#8 PEM).
    ///
    /// # Panics
    ///
    /// When `private_pem` is not an RSA private key in PEM.
    pub fn rs256(&self, private_pem: impl AsRef<[u8]>) -> String {
        let key = EncodingKey::from_rsa_pem(private_pem.as_ref())
            .unwrap_or_else(|error| panic!("not an RSA private key in PEM: {error}"));
        self.signed(Algorithm::RS256, key)
    }

    /// The token signed with ES256 and the P-256 private key `private_pem`
    /// (PKCS#8 PEM).
    ///
    /// # Panics
    ///
    /// When `private_pem` is not a P-256 private key in PKCS#8 PEM.
    pub fn es256(&self, private_pem: impl AsRef<[u8]>) -> String {
        let key = EncodingKey::from_ec_pem(private_pem.as_ref())
            .unwrap_or_else(|error| panic!("not a P-256 private key in PKCS#8 PEM: {error}"));
        self.signed(Algorithm::ES256, key)
    }

    fn signed(&self, algorithm: Algorithm, key: EncodingKey) -> String {
        let mut claims = self.claims.clone();
        if !claims.contains_key("exp") {
            let lifetime = self.expires_in.unwrap_or(Duration::from_secs(3600));
            claims.insert("exp".into(), Value::from(unix_now().saturating_add(lifetime.as_secs())));
        }
        let mut header = Header::new(algorithm);
        header.kid = self.kid.clone();
        jsonwebtoken::encode(&header, &claims, &key)
            .unwrap_or_else(|error| panic!("the token could not be signed: {error}"))
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}
