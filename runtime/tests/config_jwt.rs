//! A JWT guard whose secret is a configuration value, read in `main` before
//! the application serves, as a deployment keeps it in its secret store.

#![cfg(feature = "jwt")]

use std::time::{SystemTime, UNIX_EPOCH};

use celerity::config::{Configuration, Values};
use celerity::guard::Identity;
use celerity::guard::jwt::JwtGuard;
use celerity::testing::TestRequest;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::json;

#[derive(serde::Deserialize)]
struct Claims {
    sub: String,
}

async fn me(claims: Identity<Claims>) -> String {
    claims.sub.clone()
}

#[tokio::test]
async fn the_guards_secret_comes_from_the_secret_store() {
    const SECRET: &str = "a secret of thirty-two bytes or more, kept in the store";
    let store = Configuration::builder().values("secrets", Values::from_pairs([("JWT_SECRET", SECRET)])).build();

    // What `main` does: read the value, then build the guard with it.
    let app = celerity::App::new().without_compiled_handlers().with_configuration(store);
    let secret = app.configuration().unwrap().namespace("secrets").unwrap().require("JWT_SECRET").await.unwrap();
    let guard = JwtGuard::<Claims>::builder()
        .hs256_secret(secret)
        .issuer("https://issuer.example")
        .audience("orders")
        .build()
        .unwrap();
    let registration = celerity::Registration::http(celerity::HandlerKey::Tag("GET::/me".into()), me).guard("jwt");
    let app = app.guard("jwt", guard).register(registration).into_test();

    let exp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + 600;
    let token = jsonwebtoken::encode(
        &Header::default(),
        &json!({"sub": "u-7", "exp": exp, "iss": "https://issuer.example", "aud": "orders"}),
        &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap();
    let allowed = app
        .call("GET::/me", TestRequest::get("/me").header("authorization", format!("Bearer {token}")))
        .await
        .expect_http();
    assert_eq!((allowed.status().as_u16(), allowed.text()), (200, "u-7"));

    let forged = jsonwebtoken::encode(
        &Header::default(),
        &json!({"sub": "u-7", "exp": exp, "iss": "https://issuer.example", "aud": "orders"}),
        &EncodingKey::from_secret(b"another secret of thirty-two bytes or more").unwrap(),
    )
    .unwrap();
    let refused = app
        .call("GET::/me", TestRequest::get("/me").header("authorization", format!("Bearer {forged}")))
        .await
        .expect_http();
    assert_eq!(refused.status().as_u16(), 401);
}
