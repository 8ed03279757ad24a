//! Resource handles as handlers take them: by name through `resource!`,
//! or as the default of their kind; checked when the application starts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use celerity::config::{Configuration, Values};
use celerity::resources::{Links, ResourceHandle, ResourceKind, ResourceRef};
use celerity::testing::TestRequest;

/// A handle of its own kind for these tests: it counts how often the
/// `ledger` link's handle was made (the other tests, run alongside, make
/// handles of other links), and reads its resource's identifier.
#[derive(Clone, Debug)]
struct Ledger {
    resource: Option<ResourceRef>,
    label: &'static str,
}

static MADE: AtomicUsize = AtomicUsize::new(0);

impl ResourceHandle for Ledger {
    fn kind() -> ResourceKind {
        ResourceKind::Datastore
    }

    fn from_resource(resource: ResourceRef) -> Self {
        if resource.config_key() == "ledgerTable" {
            MADE.fetch_add(1, Ordering::SeqCst);
        }
        Ledger { resource: Some(resource), label: "linked" }
    }
}

celerity::resource! {
    /// The blueprint's `ledger` datastore.
    Main: Ledger = "ledger"
}

async fn read(main: Main) -> String {
    let id = match &main.resource {
        Some(resource) => resource.identifier().await.unwrap(),
        None => "none".into(),
    };
    format!("{} {id}", main.label)
}

fn links() -> Links {
    Links::from_json(
        br#"{"ledger": {"type": "datastore", "configKey": "ledgerTable"},
             "audit": {"type": "datastore", "configKey": "auditTable"},
             "orders": {"type": "queue", "configKey": "ordersQueue"}}"#,
        "the test's links",
    )
    .unwrap()
}

#[tokio::test]
async fn a_named_handle_resolves_through_the_links_and_is_made_once() {
    let config = Configuration::builder()
        .links(links())
        .values("resources", Values::from_pairs([("ledgerTable", "ledger-prod")]))
        .build();
    let app = celerity::App::new().without_compiled_handlers().with_configuration(config).http("GET::/read", read);
    let app = app.into_test();
    let before = MADE.load(Ordering::SeqCst);
    for _ in 0..3 {
        let response = app.call("GET::/read", TestRequest::get("/read")).await.expect_http();
        assert_eq!(response.text(), "linked ledger-prod");
    }
    assert_eq!(MADE.load(Ordering::SeqCst) - before, 1, "one handle per resource, shared");
}

#[tokio::test]
async fn a_stand_in_given_to_the_configuration_serves_the_resource() {
    let config = Configuration::builder().resource("ledger", Ledger { resource: None, label: "stand-in" }).build();
    let app = celerity::App::new().without_compiled_handlers().with_configuration(config).http("GET::/read", read);
    let response = app.into_test().call("GET::/read", TestRequest::get("/read")).await.expect_http();
    assert_eq!(response.text(), "stand-in none");
}

#[tokio::test]
async fn a_resource_the_links_lack_stops_the_application_naming_it() {
    let links = Links::from_json(br#"{"ledger": {"type": "queue", "configKey": "q"}}"#, "the test's links").unwrap();
    let app = celerity::App::new()
        .without_compiled_handlers()
        .with_configuration(Configuration::builder().links(links).build())
        .http("GET::/read", read);
    let error = app.run().await.unwrap_err();
    assert_eq!(error.type_name(), "ResourceError");
    assert!(error.message().contains("read"), "{}", error.message());
    assert!(
        error.message().contains("the resource `ledger` is a queue, and was asked for as a datastore"),
        "{}",
        error.message()
    );

    let app = celerity::App::new()
        .without_compiled_handlers()
        .with_configuration(Configuration::empty())
        .http("GET::/read", read);
    let error = app.run().await.unwrap_err();
    assert!(error.message().contains("there are no resource links"), "{}", error.message());
}

#[tokio::test]
async fn a_default_handle_is_the_one_resource_of_its_kind() {
    let config = Configuration::builder().links(links()).build();
    let resources = config.resources();
    assert_eq!(resources.default_of(ResourceKind::Queue).unwrap().name(), "orders");
    let error = resources.handle::<Ledger>(None).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the application has several datastores, so there is no default one: name it (audit, ledger)"
    );
    let shared: Arc<str> = Arc::from(resources.handle::<Ledger>(Some("audit")).unwrap().resource.unwrap().config_key());
    assert_eq!(&*shared, "auditTable");
}
