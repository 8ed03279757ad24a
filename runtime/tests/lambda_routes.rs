//! Functions of several WebSocket routes and several schedules on AWS
//! Lambda, end to end: the `lambda_routes` example runs as a function
//! deployed with the variables the deploy transformer sets, against the
//! test kit's Runtime API, fed the event fixtures `aws_lambda_events`
//! ships. A WebSocket message is routed by the field the deployment's
//! `CELERITY_ROUTING_KEY` names, a schedule's event by its rule; an id
//! naming several handlers fails the function's init, and a message past
//! its deadline is answered without being run.

use std::time::Duration;

use celerity_testkit::{DeployedFunction, LambdaAnswer, LambdaError, LambdaInvocation, fixtures, lambda_fixture};
use serde_json::{Value, json};

mod lambda_support;

use lambda_support::{Function, WAIT, payload};

/// The example these tests run.
const ROUTES: &str = "lambda_routes";

fn error(answer: &LambdaAnswer) -> &LambdaError {
    answer.error().unwrap_or_else(|| panic!("expected a Lambda error, got {answer:?}"))
}

/// The WebSocket fixture as a message on API Gateway's route `route_key`
/// carrying `body`.
fn websocket_message(route_key: &str, body: &Value) -> Value {
    let mut event = lambda_fixture(fixtures::WEBSOCKET_CONNECT);
    event["requestContext"]["routeKey"] = json!(route_key);
    event["requestContext"]["eventType"] = json!("MESSAGE");
    event["requestContext"]["messageId"] = json!("msg-1=");
    event["body"] = json!(body.to_string());
    event
}

/// The EventBridge fixture as the event of the rule at `arn`.
fn scheduled(arn: &str) -> Value {
    let mut event = lambda_fixture(fixtures::EVENTBRIDGE_SCHEDULE);
    event["resources"] = json!([arn]);
    event
}

#[tokio::test]
async fn a_websocket_message_goes_by_the_field_the_routing_key_names() {
    let function = Function::of_kind(ROUTES, "websocket", &[("CELERITY_ROUTING_KEY", "action")]).await;
    let connect = function.invoke(payload(&lambda_fixture(fixtures::WEBSOCKET_CONNECT))).await;
    assert_eq!(connect.json(), json!({"statusCode": 200}));
    function.logged("message 1 on action::$connect from asdfasdf=: null").await;

    // API Gateway's own route key first, then, on `$default`, the
    // message's `action`, then the `$default` handler.
    let direct = function.invoke(payload(&websocket_message("subscribe", &json!({"order": "ord-1"})))).await;
    assert_eq!(direct.json(), json!({"statusCode": 200}));
    function.logged(r#"message 2 on action::subscribe from asdfasdf=: {"order":"ord-1"}"#).await;
    let keyed = json!({"action": "subscribe", "order": "ord-2"});
    assert_eq!(function.invoke(payload(&websocket_message("$default", &keyed))).await.json()["statusCode"], 200);
    function.logged(r#"message 3 on action::subscribe from asdfasdf=: {"action":"subscribe","order":"ord-2"}"#).await;
    // `event`, the default key, names nothing here.
    let other_key = json!({"event": "subscribe"});
    assert_eq!(function.invoke(payload(&websocket_message("$default", &other_key))).await.json()["statusCode"], 200);
    function.logged(r#"message 4 on action::$default from asdfasdf=: {"event":"subscribe"}"#).await;
    function.finish().await;

    // Deployed without the routing key, the same message is read by
    // `event`, and no handler of the function is keyed so.
    let unkeyed = Function::of_kind(ROUTES, "websocket", &[]).await;
    let answer = unkeyed.invoke(payload(&websocket_message("$default", &keyed))).await;
    let refused = error(&answer);
    assert_eq!(refused.error_type, "Runtime.UnservedEvent", "{answer:?}");
    assert!(
        refused.error_message.starts_with("an API Gateway WebSocket event on the route \"$default\""),
        "{refused:?}"
    );
    assert!(refused.error_message.contains("action::subscribe (websocket)"), "{refused:?}");
    unkeyed.finish().await;
}

#[tokio::test]
async fn a_websocket_message_past_its_deadline_is_a_failed_ack_and_is_not_run() {
    let function = Function::of_kind(ROUTES, "websocket", &[("CELERITY_ROUTING_KEY", "action")]).await;
    let late = websocket_message("subscribe", &json!({"order": "late"}));
    let answer = function.invoke(LambdaInvocation::new(payload(&late)).deadline_in(Duration::ZERO)).await.json();
    assert_eq!(
        answer,
        json!({"statusCode": 500,
               "body": "DeadlineExceeded: the invocation arrived past its deadline, so the handler was not run"})
    );
    // The first message this process runs is the next one.
    let on_time = websocket_message("subscribe", &json!({"order": "on time"}));
    assert_eq!(function.invoke(payload(&on_time)).await.json(), json!({"statusCode": 200}));
    function.logged(r#"message 1 on action::subscribe from asdfasdf=: {"order":"on time"}"#).await;
    function.finish().await;
}

#[tokio::test]
async fn a_schedules_event_goes_to_the_handler_of_its_rule() {
    let function = Function::of_kind(ROUTES, "schedule", &[]).await;
    let nightly = scheduled("arn:aws:events:eu-west-1:123456789012:rule/nightly-report");
    assert_eq!(function.invoke(payload(&nightly)).await.json(), Value::Null);
    function.logged("source::nightly-report::nightlyReport ran lambda_routes::nightly::report: input ").await;
    // An EventBridge Scheduler schedule, by its name, its detail the input.
    let mut weekly = scheduled("arn:aws:scheduler:eu-west-1:123456789012:schedule/default/weekly-report");
    weekly["detail"] = json!({"week": 2});
    assert_eq!(function.invoke(payload(&weekly)).await.json(), Value::Null);
    function.logged(r#"source::weekly-report::weeklyReport ran lambda_routes::weekly::report: input {"week":2}"#).await;

    // A rule no handler is bound to, and an input naming no rule, fit none.
    let answer = function.invoke(payload(&lambda_fixture(fixtures::EVENTBRIDGE_SCHEDULE))).await;
    let unserved = error(&answer);
    assert_eq!(unserved.error_type, "Runtime.UnservedEvent", "{answer:?}");
    assert!(
        unserved.error_message.starts_with("an EventBridge event of the rule \"my-scheduled-rule\""),
        "{unserved:?}"
    );
    assert!(
        unserved.error_message.contains("source::nightly-report::nightlyReport (schedule)")
            && unserved.error_message.contains("source::weekly-report::weeklyReport (schedule)"),
        "{unserved:?}"
    );
    let answer = function.invoke(br#"{"week": 3}"#.to_vec()).await;
    assert!(error(&answer).error_message.starts_with("a schedule's input naming no rule"), "{answer:?}");

    // Past its deadline, a schedule's event fails, for EventBridge to retry it.
    let late = LambdaInvocation::new(payload(&nightly)).deadline_in(Duration::ZERO);
    let answer = function.invoke(late).await;
    assert_eq!(error(&answer).error_type, "Function.DeadlineExceeded", "{answer:?}");
    function.finish().await;
}

#[tokio::test]
async fn a_schedule_bound_by_name_takes_its_schedule_from_the_deployments_key() {
    let deployed = DeployedFunction::new("monthlyReport", "schedule").schedule_key("monthly-report");
    assert!(deployed.env().contains(&("CELERITY_HANDLER_TAG".into(), "monthly-report".into())));
    let function = Function::start(ROUTES, deployed.env(), &[]).await;
    // The rule's constant input names no rule: the key says which schedule
    // fired.
    assert_eq!(function.invoke(br#"{"month": "2026-01"}"#.to_vec()).await.json(), Value::Null);
    function
        .logged(
            r#"source::monthly-report::monthlyReport ran lambda_routes::monthly::report: input {"month": "2026-01"}"#,
        )
        .await;
    function.finish().await;

    // Without the key, the schedule is the event's rule's.
    let function = Function::start(ROUTES, DeployedFunction::new("monthlyReport", "schedule").env(), &[]).await;
    let event = scheduled("arn:aws:events:eu-west-1:123456789012:rule/month-end");
    assert_eq!(function.invoke(payload(&event)).await.json(), Value::Null);
    function.logged("source::month-end::monthlyReport ran lambda_routes::monthly::report: input ").await;
    function.finish().await;
}

#[tokio::test]
async fn an_id_naming_several_handlers_fails_the_init_listing_them() {
    let mut function = Function::start(ROUTES, DeployedFunction::new("report", "schedule").env(), &[]).await;
    let error = function.api.init_error(WAIT).await.unwrap_or_else(|| panic!("{}", function.process.output_text()));
    assert_eq!(error.error_type, "Runtime.HandlerNotFound", "{error:?}");
    assert_eq!(error.header_type.as_deref(), Some("Runtime.HandlerNotFound"));
    let message = &error.error_message;
    assert!(message.starts_with("CELERITY_HANDLER_ID=\"report\" names several handlers ("), "{message}");
    for named in [
        "source::nightly-report::nightlyReport (schedule handler lambda_routes::nightly::report)",
        "source::weekly-report::weeklyReport (schedule handler lambda_routes::weekly::report)",
        r#"name = "monthlyReport" (schedule handler lambda_routes::monthly::report)"#,
    ] {
        assert!(message.contains(named), "{named} is not in {message}");
    }
    // And everything the binary has, for the id to be corrected.
    assert!(message.contains("this binary has action::$connect (websocket handler lambda_routes::route)"), "{message}");
    let status = function.process.wait_timeout(WAIT).await.expect("the example exits");
    assert!(!status.success(), "{}", function.process.output_text());

    // The full handlerId names one.
    let nightly =
        Function::start(ROUTES, DeployedFunction::new("lambda_routes::nightly::report", "schedule").env(), &[]).await;
    let weekly = scheduled("arn:aws:events:eu-west-1:123456789012:rule/weekly-report");
    assert_eq!(nightly.invoke(payload(&weekly)).await.json(), Value::Null);
    nightly.logged("source::nightly-report::nightlyReport ran lambda_routes::nightly::report").await;
    nightly.finish().await;
    assert_eq!(function.api.violations(), Vec::<String>::new());
}
