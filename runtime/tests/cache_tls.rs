//! A cache reached over TLS, against a real Redis that takes only TLS, with
//! a certificate the test CA signed. A test binary of its own: the CA is
//! trusted through `SSL_CERT_FILE`, which the whole process reads.

use celerity::config::{Configuration, Values};
use celerity::resources::cache::Cache;
use celerity::resources::{Links, ResourceErrorKind};
use celerity_testkit::servers;

fn over_tls(host: &str, tls: &str) -> Cache {
    let links = Links::from_json(br#"{"sessions": {"type": "cache", "configKey": "sessionsCache"}}"#, "links").unwrap();
    let port = servers::redis_tls().port().to_string();
    Configuration::builder()
        .links(links)
        .values(
            "resources",
            Values::from_pairs([
                ("sessionsCache_host", host),
                ("sessionsCache_port", port.as_str()),
                ("sessionsCache_tls", tls),
            ]),
        )
        .env("CELERITY_PLATFORM", "aws")
        .build()
        .resources()
        .handle::<Cache>(None)
        .unwrap()
}

#[tokio::test]
async fn tls_is_on_by_default_on_aws_and_checks_the_certificate() {
    // Before the test CA is trusted, its certificate is not.
    let cache = over_tls("localhost", "");
    assert!(cache.get("secure").await.is_err(), "a certificate of an unknown CA is refused");

    // SAFETY: this binary's one test, and the connection that read the
    // variable has ended.
    unsafe { std::env::set_var("SSL_CERT_FILE", servers::tls_ca_file()) };

    // `_tls` not recorded: on by default on AWS. The failed connection is
    // tried again.
    cache.set("secure", "yes").await.unwrap();
    assert_eq!(cache.get("secure").await.unwrap().as_deref(), Some("yes"));
    assert!(cache.settings().await.unwrap().unwrap().tls);

    // Plain text to a TLS port gets no answer it can read.
    let error = over_tls("localhost", "false").get("secure").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
}
