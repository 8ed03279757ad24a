//! A configuration store that AWS refuses to read (403), from an AWS API
//! emulator that checks credentials: the error names the store and what
//! AWS said, and a handler's start fails with it rather than serving.

use celerity::config::{ConfigErrorKind, Configuration};
use celerity_testkit::servers;

#[tokio::test]
async fn a_refused_read_is_an_error_naming_the_store_and_the_refusal() {
    let moto = servers::moto_refusing_credentials();
    moto.use_in_this_process();
    let config =
        Configuration::from_vars([("CELERITY_PLATFORM", "aws"), ("CELERITY_CONFIG_STORE_ID", "orders/secret")])
            .unwrap();
    let error = config.get("REGION").await.unwrap_err();
    assert_eq!(error.kind(), ConfigErrorKind::Store);
    let message = error.message();
    assert!(message.contains("the config namespace `default` (store \"orders/secret\", Secrets Manager)"), "{message}");
    assert!(message.contains("HTTP 403"), "{message}");
}
