//! A Lambda function as a Celerity deployment to AWS sets it up, for tests
//! that start a handler binary with exactly that environment, and the event
//! payloads AWS sends.
//!
//! The deploy transformer (target `aws-serverless`) sets on every function:
//!
//! | variable | value |
//! | --- | --- |
//! | `CELERITY_PLATFORM` | `aws` |
//! | `CELERITY_DEPLOY_TARGET` | `aws-serverless` |
//! | `CELERITY_HANDLER_ID` | the blueprint handler's `spec.handler`, verbatim |
//! | `CELERITY_HANDLER_TYPE` | `http`, `websocket`, `consumer`, `schedule` or `custom` |
//! | `CELERITY_HANDLER_TAG` | a consumer's route, or a schedule's key; no other kind has one |
//! | `CELERITY_TELEMETRY_ENABLED` | `true`, when the handler's `tracingEnabled` is |
//! | `CELERITY_LOG_FORMAT` | `json`, unless the handler's own variables say otherwise |
//! | `CELERITY_CONFIG_RESOURCES_STORE_ID`, `CELERITY_CONFIG_RESOURCES_STORE_KIND` | the resources namespace's store (`/celerity/{app}/resources`, `parameter-store`), for a handler that links a resource |
//!
//! Lambda itself adds its own (`AWS_LAMBDA_RUNTIME_API` and the others of
//! [`LambdaRuntimeApi::env`](crate::LambdaRuntimeApi::env)).

use serde_json::Value;

/// One function of a Celerity deployment to AWS Lambda.
///
/// ```
/// use celerity_testkit::DeployedFunction;
///
/// let env = DeployedFunction::new("orders::http::get_order", "http").env();
/// assert!(env.contains(&("CELERITY_HANDLER_ID".into(), "orders::http::get_order".into())));
/// assert!(env.contains(&("CELERITY_PLATFORM".into(), "aws".into())));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployedFunction {
    handler_id: String,
    handler_type: String,
    tag: Option<String>,
    tracing: bool,
    resources_store: Option<String>,
}

impl DeployedFunction {
    /// The function of the blueprint handler whose `spec.handler` is
    /// `handler_id`, serving events of `handler_type`.
    pub fn new(handler_id: impl Into<String>, handler_type: impl Into<String>) -> Self {
        DeployedFunction {
            handler_id: handler_id.into(),
            handler_type: handler_type.into(),
            tag: None,
            tracing: false,
            resources_store: None,
        }
    }

    /// A consumer function's route, set as `CELERITY_HANDLER_TAG`.
    pub fn consumer_route(mut self, route: impl Into<String>) -> Self {
        self.tag = Some(route.into());
        self
    }

    /// A schedule function's key (the schedule's id, such as
    /// `nightly-cleanup`), set as `CELERITY_HANDLER_TAG`, as the contract
    /// allows for a scheduled handler.
    pub fn schedule_key(mut self, key: impl Into<String>) -> Self {
        self.tag = Some(key.into());
        self
    }

    /// The handler has `tracingEnabled`, so the function is given
    /// `CELERITY_TELEMETRY_ENABLED=true`.
    pub fn tracing_enabled(mut self) -> Self {
        self.tracing = true;
        self
    }

    /// The application `app` links resources, so the function is given
    /// its resources namespace's store.
    pub fn linking_resources_of(mut self, app: &str) -> Self {
        self.resources_store = Some(format!("/celerity/{app}/resources"));
        self
    }

    /// The variables the deployment sets, in the order of the module's
    /// table.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("CELERITY_PLATFORM", "aws".to_string()),
            ("CELERITY_DEPLOY_TARGET", "aws-serverless".to_string()),
            ("CELERITY_HANDLER_ID", self.handler_id.clone()),
            ("CELERITY_HANDLER_TYPE", self.handler_type.clone()),
        ];
        if let Some(tag) = &self.tag {
            env.push(("CELERITY_HANDLER_TAG", tag.clone()));
        }
        if self.tracing {
            env.push(("CELERITY_TELEMETRY_ENABLED", "true".to_string()));
        }
        env.push(("CELERITY_LOG_FORMAT", "json".to_string()));
        if let Some(store) = &self.resources_store {
            env.push(("CELERITY_CONFIG_RESOURCES_STORE_ID", store.clone()));
            env.push(("CELERITY_CONFIG_RESOURCES_STORE_KIND", "parameter-store".to_string()));
        }
        env.into_iter().map(|(name, value)| (name.to_string(), value)).collect()
    }

    /// The variables a deployment may set that a function must not inherit
    /// from the test's own environment, for `env_remove`.
    pub fn unset() -> &'static [&'static str] {
        &[
            "CELERITY_RUNTIME_SOCKET",
            "CELERITY_HANDLER_ID",
            "CELERITY_HANDLER_TYPE",
            "CELERITY_HANDLER_TAG",
            "CELERITY_ROUTING_KEY",
            "CELERITY_TELEMETRY_ENABLED",
            "CELERITY_EXPOSE_PANICS",
        ]
    }
}

/// The event payloads `aws_lambda_events` ships, as AWS sends them (see
/// `fixtures/aws_lambda_events/` of this crate).
pub mod fixtures {
    /// An HTTP API request, payload format 2.0, route `$default`.
    pub const HTTP_API: &str = "example-apigw-v2-request-no-authorizer.json";
    /// A REST API request, resource `/{proxy+}`.
    pub const REST_API: &str = "example-apigw-request.json";
    /// A WebSocket `$connect`.
    pub const WEBSOCKET_CONNECT: &str = "example-apigw-websocket-request-without-method.json";
    /// A WebSocket `$disconnect`.
    pub const WEBSOCKET_DISCONNECT: &str = "example-apigw-websocket-request-disconnect-route.json";
    /// An SQS batch of one message.
    pub const SQS: &str = "example-sqs-event.json";
    /// An S3 `ObjectCreated:Put` notification.
    pub const S3: &str = "example-s3-event.json";
    /// A DynamoDB stream batch of two `INSERT` records.
    pub const DYNAMODB: &str = "example-dynamodb-event.json";
    /// An EventBridge scheduled event.
    pub const EVENTBRIDGE_SCHEDULE: &str = "example-eventbridge-schedule.json";
}

/// The fixture `name` (one of [`fixtures`]) as JSON.
///
/// # Panics
///
/// When `name` is not one of them.
pub fn lambda_fixture(name: &str) -> Value {
    let text = match name {
        fixtures::HTTP_API => include_str!("../fixtures/aws_lambda_events/example-apigw-v2-request-no-authorizer.json"),
        fixtures::REST_API => include_str!("../fixtures/aws_lambda_events/example-apigw-request.json"),
        fixtures::WEBSOCKET_CONNECT => {
            include_str!("../fixtures/aws_lambda_events/example-apigw-websocket-request-without-method.json")
        }
        fixtures::WEBSOCKET_DISCONNECT => {
            include_str!("../fixtures/aws_lambda_events/example-apigw-websocket-request-disconnect-route.json")
        }
        fixtures::SQS => include_str!("../fixtures/aws_lambda_events/example-sqs-event.json"),
        fixtures::S3 => include_str!("../fixtures/aws_lambda_events/example-s3-event.json"),
        fixtures::DYNAMODB => include_str!("../fixtures/aws_lambda_events/example-dynamodb-event.json"),
        fixtures::EVENTBRIDGE_SCHEDULE => {
            include_str!("../fixtures/aws_lambda_events/example-eventbridge-schedule.json")
        }
        other => panic!("no fixture {other:?}: it is one of the names in celerity_testkit::fixtures"),
    };
    serde_json::from_str(text).unwrap_or_else(|error| panic!("the fixture {name} is not JSON: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_is_json_of_its_event() {
        assert_eq!(lambda_fixture(fixtures::HTTP_API)["version"], "2.0");
        assert_eq!(lambda_fixture(fixtures::REST_API)["httpMethod"], "POST");
        assert_eq!(lambda_fixture(fixtures::WEBSOCKET_CONNECT)["requestContext"]["eventType"], "CONNECT");
        assert_eq!(lambda_fixture(fixtures::WEBSOCKET_DISCONNECT)["requestContext"]["eventType"], "DISCONNECT");
        assert_eq!(lambda_fixture(fixtures::SQS)["Records"][0]["eventSource"], "aws:sqs");
        assert_eq!(lambda_fixture(fixtures::S3)["Records"][0]["eventSource"], "aws:s3");
        assert_eq!(lambda_fixture(fixtures::DYNAMODB)["Records"][0]["eventSource"], "aws:dynamodb");
        assert_eq!(lambda_fixture(fixtures::EVENTBRIDGE_SCHEDULE)["detail-type"], "Scheduled Event");
    }

    #[test]
    fn a_consumers_function_has_its_route_and_a_linking_one_its_store() {
        let env = DeployedFunction::new("auditOrders", "consumer").consumer_route("order-audit").env();
        let names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "CELERITY_PLATFORM",
                "CELERITY_DEPLOY_TARGET",
                "CELERITY_HANDLER_ID",
                "CELERITY_HANDLER_TYPE",
                "CELERITY_HANDLER_TAG",
                "CELERITY_LOG_FORMAT"
            ]
        );
        let env = DeployedFunction::new("getOrder", "http").linking_resources_of("orders").env();
        assert!(env.contains(&("CELERITY_CONFIG_RESOURCES_STORE_ID".into(), "/celerity/orders/resources".into())));
        assert!(!env.iter().any(|(name, _)| name == "CELERITY_HANDLER_TAG" || name == "CELERITY_TELEMETRY_ENABLED"));
    }

    #[test]
    fn a_schedules_function_has_its_key_and_a_traced_one_telemetry() {
        let env = DeployedFunction::new("cleanupOrders", "schedule").schedule_key("nightly-cleanup").env();
        assert!(env.contains(&("CELERITY_HANDLER_TAG".into(), "nightly-cleanup".into())));
        let env = DeployedFunction::new("getOrder", "http").tracing_enabled().env();
        let names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names[4..], ["CELERITY_TELEMETRY_ENABLED", "CELERITY_LOG_FORMAT"]);
        assert!(env.contains(&("CELERITY_TELEMETRY_ENABLED".into(), "true".into())));
    }
}
