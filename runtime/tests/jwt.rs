//! `JwtGuard` (the `jwt` feature): tokens minted here with the fixtures'
//! private keys, checked by the guard in-process through
//! `celerity::testing` and once over a real socket.

#![cfg(feature = "jwt")]

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use celerity::App;
use celerity::guard::Identity;
use celerity::guard::jwt::{JwtConfigError, JwtGuard};
use celerity::http::StatusCode;
use celerity::testing::{TestApp, TestRequest, TestToken};
use celerity::{HandlerKey, Registration};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Deserialize;
use serde_json::{Value, json};

const ISSUER: &str = "https://issuer.example";
const AUDIENCE: &str = "orders";
const SECRET: &str = "a shared secret of thirty-two bytes or more, for tests";

#[derive(Debug, Deserialize)]
struct Claims {
    sub: String,
    name: String,
}

async fn me(claims: Identity<Claims>) -> String {
    format!("{} is {}", claims.sub, claims.name)
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jwt").join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Claims that pass every check.
fn good_claims() -> Value {
    json!({"sub": "u-7", "name": "ada", "iss": ISSUER, "aud": AUDIENCE, "exp": now() + 600})
}

/// `claims` with `changes` laid over them; a `null` removes the claim.
fn claims_with(changes: Value) -> Value {
    let mut claims = good_claims();
    for (name, value) in changes.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    claims
}

fn mint(algorithm: Algorithm, key: &EncodingKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(algorithm);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn hs256(claims: &Value) -> String {
    mint(Algorithm::HS256, &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(), None, claims)
}

fn rs256(kid: Option<&str>, claims: &Value) -> String {
    mint(Algorithm::RS256, &EncodingKey::from_rsa_pem(&read("rsa_private.pem")).unwrap(), kid, claims)
}

fn es256(kid: Option<&str>, claims: &Value) -> String {
    mint(Algorithm::ES256, &EncodingKey::from_ec_pem(&read("ec_private.pem")).unwrap(), kid, claims)
}

fn checked(builder: celerity::guard::jwt::JwtGuardBuilder<Claims>) -> celerity::guard::jwt::JwtGuardBuilder<Claims> {
    builder.issuer(ISSUER).audience(AUDIENCE)
}

fn hs256_guard() -> JwtGuard<Claims> {
    checked(JwtGuard::builder().hs256_secret(SECRET)).build().unwrap()
}

fn rs256_guard() -> JwtGuard<Claims> {
    checked(JwtGuard::builder().rs256_pem(read("rsa_public.pem"))).build().unwrap()
}

fn jwks_guard() -> JwtGuard<Claims> {
    checked(JwtGuard::builder().jwks_file(fixture("jwks.json"))).build().unwrap()
}

fn app(guard: JwtGuard<Claims>) -> TestApp {
    App::new()
        .without_compiled_handlers()
        .guard("jwt", guard)
        .register(Registration::http(HandlerKey::Tag("GET::/me".into()), me).guard("jwt"))
        .into_test()
}

/// The status and body (or refusal message) of `GET /me` with `token`.
async fn call(guard: JwtGuard<Claims>, token: Option<&str>) -> (StatusCode, String) {
    let mut request = TestRequest::get("/me");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = app(guard).call("GET::/me", request).await.expect_http();
    if response.status() == StatusCode::OK {
        (response.status(), response.text().to_string())
    } else {
        let message = response.json::<Value>()["message"].as_str().unwrap_or_default().to_string();
        (response.status(), message)
    }
}

async fn refused(guard: JwtGuard<Claims>, token: &str) -> String {
    let (status, message) = call(guard, Some(token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{message}");
    assert!(!message.contains(token), "the refusal repeats the token: {message}");
    message
}

fn build_error(builder: celerity::guard::jwt::JwtGuardBuilder<Claims>) -> JwtConfigError {
    match builder.build() {
        Ok(guard) => panic!("built {guard:?}"),
        Err(error) => error,
    }
}

#[tokio::test]
async fn a_valid_hs256_token_reaches_the_handler_with_its_typed_claims() {
    let token = hs256(&good_claims());
    assert_eq!(call(hs256_guard(), Some(&token)).await, (StatusCode::OK, "u-7 is ada".to_string()));
}

#[tokio::test]
async fn a_valid_rs256_token_verifies_with_a_pem_public_key() {
    let token = rs256(None, &good_claims());
    assert_eq!(call(rs256_guard(), Some(&token)).await, (StatusCode::OK, "u-7 is ada".to_string()));
}

#[tokio::test]
async fn a_valid_es256_or_rs256_token_verifies_with_the_jwks_key_its_kid_names() {
    let token = es256(Some("ec-1"), &good_claims());
    assert_eq!(call(jwks_guard(), Some(&token)).await, (StatusCode::OK, "u-7 is ada".to_string()));
    let token = rs256(Some("rsa-1"), &good_claims());
    assert_eq!(call(jwks_guard(), Some(&token)).await, (StatusCode::OK, "u-7 is ada".to_string()));
    // The right key, under the other key's id.
    let token = es256(Some("rsa-1"), &good_claims());
    assert_eq!(refused(jwks_guard(), &token).await, "the token's key (kid) is not one this guard knows");
}

#[tokio::test]
async fn a_valid_es256_token_verifies_with_a_pem_public_key() {
    let guard = checked(JwtGuard::builder().es256_pem(read("ec_public.pem"))).build().unwrap();
    let token = es256(None, &good_claims());
    assert_eq!(call(guard, Some(&token)).await, (StatusCode::OK, "u-7 is ada".to_string()));
}

#[tokio::test]
async fn a_request_without_a_bearer_token_is_401() {
    assert_eq!(call(hs256_guard(), None).await, (StatusCode::UNAUTHORIZED, "a bearer token is required".to_string()));
    let request = TestRequest::get("/me").header("authorization", format!("Basic {}", hs256(&good_claims())));
    let response = app(hs256_guard()).call("GET::/me", request).await.expect_http();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_token_that_is_not_a_jwt_is_malformed() {
    assert_eq!(refused(hs256_guard(), "not-a-token").await, "the token is malformed");
    let token = hs256(&good_claims());
    let (header, rest) = token.split_once('.').unwrap();
    let (_, signature) = rest.split_once('.').unwrap();
    let garbage = format!("{header}.!!!.{signature}");
    assert_eq!(refused(hs256_guard(), &garbage).await, "the token's signature does not verify");
}

#[tokio::test]
async fn a_bad_signature_is_401() {
    let other = mint(
        Algorithm::HS256,
        &EncodingKey::from_secret(b"another secret, also of thirty-two bytes").unwrap(),
        None,
        &good_claims(),
    );
    assert_eq!(refused(hs256_guard(), &other).await, "the token's signature does not verify");
    // The claims changed after signing: a signature over other claims.
    let signed = rs256(None, &good_claims());
    let forged_claims = URL_SAFE_NO_PAD.encode(claims_with(json!({"sub": "u-1"})).to_string());
    let parts: Vec<&str> = signed.split('.').collect();
    let forged = format!("{}.{forged_claims}.{}", parts[0], parts[2]);
    assert_eq!(refused(rs256_guard(), &forged).await, "the token's signature does not verify");
}

#[tokio::test]
async fn an_expired_token_is_401_beyond_the_leeway() {
    let token = hs256(&claims_with(json!({"exp": now() - 3600})));
    assert_eq!(refused(hs256_guard(), &token).await, "the token has expired");
    // Ten seconds late is within the default minute, and not within none.
    let late = hs256(&claims_with(json!({"exp": now() - 10})));
    assert_eq!(call(hs256_guard(), Some(&late)).await.0, StatusCode::OK);
    let strict = checked(JwtGuard::builder().hs256_secret(SECRET).leeway(Duration::ZERO)).build().unwrap();
    assert_eq!(refused(strict, &late).await, "the token has expired");
}

#[tokio::test]
async fn a_token_without_exp_iss_or_aud_is_401() {
    for claim in ["exp", "iss", "aud"] {
        let token = hs256(&claims_with(json!({ claim: null })));
        assert_eq!(refused(hs256_guard(), &token).await, format!("the token has no `{claim}` claim"));
    }
}

#[tokio::test]
async fn an_iss_that_is_not_one_string_is_malformed_even_naming_the_accepted_issuer() {
    for iss in [json!(["https://evil.example", ISSUER]), json!([ISSUER]), json!(7), json!({"iss": ISSUER})] {
        let token = hs256(&claims_with(json!({ "iss": iss })));
        assert_eq!(refused(hs256_guard(), &token).await, "the token's `iss` claim is malformed", "{iss}");
    }
}

#[tokio::test]
async fn an_exp_nbf_or_aud_present_in_another_shape_is_malformed_not_missing() {
    let past_u64 = serde_json::from_str::<Value>("18446744073709551616").unwrap();
    for exp in [json!(-1.5), json!(1e20), past_u64.clone(), json!((now() + 600).to_string()), json!(-1)] {
        let token = hs256(&claims_with(json!({ "exp": exp })));
        assert_eq!(refused(hs256_guard(), &token).await, "the token's `exp` claim is malformed", "exp {exp}");
    }
    for nbf in [json!(-1.5), past_u64, json!("0")] {
        let token = hs256(&claims_with(json!({ "nbf": nbf })));
        assert_eq!(refused(hs256_guard(), &token).await, "the token's `nbf` claim is malformed", "nbf {nbf}");
    }
    for aud in [json!({"aud": AUDIENCE}), json!([AUDIENCE, 1]), json!(true)] {
        let token = hs256(&claims_with(json!({ "aud": aud })));
        assert_eq!(refused(hs256_guard(), &token).await, "the token's `aud` claim is malformed", "aud {aud}");
    }
}

#[tokio::test]
async fn several_authorization_headers_are_401_even_when_one_token_is_valid() {
    let good = hs256(&good_claims());
    for values in
        [[format!("Bearer {good}"), "Bearer forged".to_string()], [format!("Bearer {good}"), format!("Bearer {good}")]]
    {
        let mut request = TestRequest::get("/me");
        for value in &values {
            request = request.header("authorization", value.as_str());
        }
        let response = app(hs256_guard()).call("GET::/me", request).await.expect_http();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.json::<Value>()["message"], "the request carries more than one `authorization` header");
    }
}

#[tokio::test]
async fn test_tokens_of_each_algorithm_pass_the_guard_that_takes_them() {
    #[derive(serde::Serialize)]
    struct Minted {
        sub: &'static str,
        name: &'static str,
    }
    let minted = || TestToken::new(Minted { sub: "u-7", name: "ada" }).issuer(ISSUER).audience(AUDIENCE);
    let bearer = |token: String| TestRequest::get("/me").bearer(token);
    let answer =
        |guard, token| async move { app(guard).call("GET::/me", bearer(token)).await.expect_http().text().to_string() };
    assert_eq!(answer(hs256_guard(), minted().hs256(SECRET)).await, "u-7 is ada");
    assert_eq!(answer(rs256_guard(), minted().rs256(read("rsa_private.pem"))).await, "u-7 is ada");
    assert_eq!(answer(jwks_guard(), minted().kid("ec-1").es256(read("ec_private.pem"))).await, "u-7 is ada");

    let expired = minted().expired_for(Duration::from_secs(3600)).hs256(SECRET);
    assert_eq!(refused(hs256_guard(), &expired).await, "the token has expired");
    let early = minted().not_before_in(Duration::from_secs(3600)).hs256(SECRET);
    assert_eq!(refused(hs256_guard(), &early).await, "the token is not valid yet");
    let other = minted().claim("iss", "https://elsewhere.example").hs256(SECRET);
    assert_eq!(refused(hs256_guard(), &other).await, "the token's issuer is not accepted");
}

#[tokio::test]
async fn a_token_not_valid_yet_is_401() {
    let token = hs256(&claims_with(json!({"nbf": now() + 3600})));
    assert_eq!(refused(hs256_guard(), &token).await, "the token is not valid yet");
    let token = hs256(&claims_with(json!({"nbf": now() - 5})));
    assert_eq!(call(hs256_guard(), Some(&token)).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_token_of_another_issuer_or_audience_is_401() {
    let token = hs256(&claims_with(json!({"iss": "https://elsewhere.example"})));
    assert_eq!(refused(hs256_guard(), &token).await, "the token's issuer is not accepted");
    let token = hs256(&claims_with(json!({"aud": "billing"})));
    assert_eq!(refused(hs256_guard(), &token).await, "the token's audience is not accepted");
    let token = hs256(&claims_with(json!({"aud": ["billing", AUDIENCE]})));
    assert_eq!(call(hs256_guard(), Some(&token)).await.0, StatusCode::OK, "one of several audiences");
}

#[tokio::test]
async fn an_hs256_token_signed_with_the_rsa_public_key_is_refused() {
    // The classic confusion: the public key, which anyone has, used as an
    // HMAC secret, against a guard that verifies RS256.
    let public = read("rsa_public.pem");
    let token = mint(Algorithm::HS256, &EncodingKey::from_secret(&public).unwrap(), None, &good_claims());
    assert_eq!(refused(rs256_guard(), &token).await, "the token's algorithm is not one this guard accepts");
    let token = mint(Algorithm::HS256, &EncodingKey::from_secret(&public).unwrap(), Some("rsa-1"), &good_claims());
    assert_eq!(refused(jwks_guard(), &token).await, "the token's algorithm is not one this guard accepts");
}

#[tokio::test]
async fn a_token_with_alg_none_is_refused() {
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
    let claims = URL_SAFE_NO_PAD.encode(good_claims().to_string());
    for token in [format!("{header}.{claims}."), format!("{header}.{claims}.c2ln")] {
        assert_eq!(refused(hs256_guard(), &token).await, "the token's algorithm is not one this guard accepts");
    }
}

#[tokio::test]
async fn a_token_naming_an_unknown_kid_or_none_is_refused_by_a_jwks_guard() {
    let token = es256(Some("ec-2"), &good_claims());
    assert_eq!(refused(jwks_guard(), &token).await, "the token's key (kid) is not one this guard knows");
    let token = es256(None, &good_claims());
    assert_eq!(
        refused(jwks_guard(), &token).await,
        "the token names no key (kid), and this guard chooses its key by one"
    );
}

#[tokio::test]
async fn claims_of_another_shape_are_401_naming_the_field_not_its_value() {
    let token = hs256(&claims_with(json!({"name": null})));
    assert_eq!(
        refused(hs256_guard(), &token).await,
        "the token's claims do not have the shape this service expects: missing field `name`"
    );
    let token = hs256(&claims_with(json!({"name": "s3cr3t-value".chars().map(|c| c as u32).collect::<Vec<_>>()})));
    let message = refused(hs256_guard(), &token).await;
    assert_eq!(message, "the token's claims do not have the shape this service expects: at `name`");
}

#[tokio::test]
async fn several_keys_of_one_algorithm_are_each_tried() {
    let guard =
        checked(JwtGuard::builder().hs256_secret("an older secret, still thirty-two bytes long").hs256_secret(SECRET))
            .build()
            .unwrap();
    assert_eq!(guard.algorithms(), ["HS256"]);
    assert_eq!(call(guard, Some(&hs256(&good_claims()))).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_secret_from_the_environment_verifies() {
    // SAFETY: the variable is this test's own; nothing else in this binary
    // reads or writes it, and std's environment functions are locked.
    unsafe { std::env::set_var("CELERITY_JWT_TEST_SECRET", SECRET) };
    let guard = checked(JwtGuard::builder().hs256_secret_from_env("CELERITY_JWT_TEST_SECRET")).build().unwrap();
    assert_eq!(call(guard, Some(&hs256(&good_claims()))).await.0, StatusCode::OK);
}

#[test]
fn a_missing_environment_variable_is_a_build_error_naming_it() {
    let error = build_error(checked(JwtGuard::builder().hs256_secret_from_env("CELERITY_JWT_TEST_UNSET")));
    assert_eq!(
        error.to_string(),
        "the environment variable CELERITY_JWT_TEST_UNSET is not set: it should hold the HS256 secret"
    );
    let error = build_error(checked(JwtGuard::builder().rs256_pem_from_env("CELERITY_JWT_TEST_UNSET_PEM")));
    assert!(error.message().contains("CELERITY_JWT_TEST_UNSET_PEM is not set"), "{error}");
    let error: celerity::Error = error.into();
    assert!(error.message().contains("CELERITY_JWT_TEST_UNSET_PEM"), "{error:?}");
}

#[test]
fn a_bad_or_missing_jwks_file_is_a_build_error_naming_it() {
    let missing = fixture("no-such.json");
    let error = build_error(checked(JwtGuard::builder().jwks_file(&missing)));
    assert!(error.message().starts_with(&format!("cannot read the JWKS file {}", missing.display())), "{error}");

    let dir = std::env::temp_dir().join(format!("celerity-jwt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cases = [
        ("not-json.json", "{keys", "is not a JWK set"),
        ("no-keys.json", r#"{"keys": []}"#, "has no signing key"),
        ("no-kid.json", r#"{"keys": [{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}]}"#, "key 0 of the JWKS file"),
        ("oct.json", r#"{"keys": [{"kty": "oct", "kid": "s", "k": "c2VjcmV0"}]}"#, "is a shared secret"),
        (
            "p384.json",
            r#"{"keys": [{"kty": "EC", "kid": "p", "crv": "P-384", "x": "AA", "y": "AA"}]}"#,
            "P-256 (ES256) only",
        ),
        (
            "bad-point.json",
            r#"{"keys": [{"kty": "EC", "kid": "p", "crv": "P-256", "x": "AA", "y": "AA"}]}"#,
            "is not a point on the P-256 curve",
        ),
        ("small-rsa.json", r#"{"keys": [{"kty": "RSA", "kid": "r", "n": "AQAB", "e": "AQAB"}]}"#, "RSA key of 17 bits"),
    ];
    for (name, text, expected) in cases {
        let path = write(name, text);
        let error = build_error(checked(JwtGuard::builder().jwks_file(&path)));
        assert!(error.message().contains(&path.display().to_string()), "{name}: {error}");
        assert!(error.message().contains(expected), "{name}: {error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_key_of_the_wrong_kind_or_a_short_secret_is_a_build_error() {
    let error = build_error(checked(JwtGuard::builder().rs256_pem(read("ec_public.pem"))));
    assert_eq!(
        error.message(),
        "the RS256 public key (PEM) given to `rs256_pem` is not a PEM RSA public key (`PUBLIC KEY` or `RSA PUBLIC KEY`)"
    );
    let error = build_error(checked(JwtGuard::builder().rs256_pem(read("rsa_private.pem"))));
    assert!(error.message().contains("is not a PEM RSA public key"), "a private key is refused: {error}");
    let error = build_error(checked(JwtGuard::builder().es256_pem(read("rsa_public.pem"))));
    assert!(error.message().contains("is not a PEM EC P-256 public key"), "{error}");
    let error = build_error(checked(JwtGuard::builder().hs256_secret("short")));
    assert_eq!(
        error.message(),
        "the HS256 secret given to `hs256_secret` is 5 bytes long; an HS256 secret must be at least 32"
    );
}

#[test]
fn a_guard_without_a_key_issuer_or_audience_is_a_build_error() {
    let error = build_error(JwtGuard::builder().issuer(ISSUER).audience(AUDIENCE));
    assert!(error.message().starts_with("a JWT guard needs a key"), "{error}");
    let error = build_error(JwtGuard::builder().hs256_secret(SECRET).audience(AUDIENCE));
    assert!(error.message().contains("call `issuer`"), "{error}");
    let error = build_error(JwtGuard::builder().hs256_secret(SECRET).issuer(ISSUER));
    assert!(error.message().contains("call `audience`"), "{error}");
}

mod over_the_socket {
    use std::time::Duration;

    use celerity::App;
    use celerity::proto::v1::result::Outcome;
    use celerity_testkit::{TestRuntime, event};

    use super::*;

    /// The status and body the runtime gets for `GET /me` with `authorization`.
    async fn answer(conn: &celerity_testkit::Connection, authorization: Option<String>) -> (u32, String) {
        let mut request = event::http("GET", "/me");
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let result = conn.call(request).await.expect("an answer");
        match result.outcome {
            Some(Outcome::Http(response)) => (response.status, String::from_utf8_lossy(&response.body).into_owned()),
            other => panic!("not an HTTP answer: {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_guard_allows_and_refuses_as_a_served_application() {
        let runtime = TestRuntime::builder().handler("me", "GET::/me").bind().await.expect("the test runtime binds");
        let settings = runtime.app_settings(&[]);
        let app = App::new()
            .guard("jwt", jwks_guard())
            .register(Registration::http(HandlerKey::Tag("GET::/me".into()), me).guard("jwt"))
            .without_compiled_handlers()
            .settings(settings);
        let served = tokio::spawn(app.run());
        let conn = runtime.accept().await.expect("a handshake").accepted().expect("Ready accepted");

        let token = es256(Some("ec-1"), &good_claims());
        assert_eq!(answer(&conn, Some(format!("Bearer {token}"))).await, (200, "u-7 is ada".to_string()));
        let (status, body) = answer(&conn, None).await;
        assert_eq!(status, 401);
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["message"], "a bearer token is required");
        let expired = es256(Some("ec-1"), &claims_with(json!({"exp": now() - 3600})));
        let (status, body) = answer(&conn, Some(format!("Bearer {expired}"))).await;
        assert_eq!(
            (status, serde_json::from_str::<Value>(&body).unwrap()["message"].clone()),
            (401, json!("the token has expired"))
        );
        assert!(!body.contains(&expired));

        let twice = conn
            .call(
                event::http("GET", "/me")
                    .header("authorization", format!("Bearer {token}"))
                    .header("authorization", "Bearer x"),
            )
            .await
            .expect("an answer");
        match twice.outcome {
            Some(Outcome::Http(response)) => {
                assert_eq!(response.status, 401);
                let message = serde_json::from_slice::<Value>(&response.body).unwrap()["message"].clone();
                assert_eq!(message, json!("the request carries more than one `authorization` header"));
            }
            other => panic!("not an HTTP answer: {other:?}"),
        }

        conn.assert_no_violations();
        conn.drain_in(Duration::from_secs(5)).expect("drain");
        let ended = tokio::time::timeout(Duration::from_secs(10), served).await.expect("the app stops");
        ended.expect("the app task").expect("the app ends without error");
    }
}
