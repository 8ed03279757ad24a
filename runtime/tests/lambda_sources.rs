//! Consumers of buckets and datastores on AWS Lambda, end to end: the
//! `lambda_sources` example runs as a function deployed with exactly the
//! variables the deploy transformer sets, against the test kit's Runtime
//! API, fed the event fixtures `aws_lambda_events` ships: S3 notifications
//! and DynamoDB stream batches sent directly and inside SQS messages, each
//! failure reported the way its event source takes one.

use celerity_testkit::{DeployedFunction, LambdaInvocation, fixtures, lambda_fixture};
use serde_json::{Value, json};

mod lambda_support;

use lambda_support::{Function, WAIT, payload};

/// A function of the `lambda_sources` example, deployed as `deployed`.
async fn sources(deployed: DeployedFunction) -> Function {
    Function::start("lambda_sources", deployed.env(), &[]).await
}

fn s3_event(bucket: &str, key: &str) -> Value {
    let mut event = lambda_fixture(fixtures::S3);
    event["Records"][0]["s3"]["bucket"]["name"] = json!(bucket);
    event["Records"][0]["s3"]["object"]["key"] = json!(key);
    event
}

fn sqs_carrying(bodies: &[Value]) -> Value {
    let template = lambda_fixture(fixtures::SQS)["Records"][0].clone();
    let records: Vec<Value> = bodies
        .iter()
        .enumerate()
        .map(|(index, body)| {
            let mut record = template.clone();
            record["messageId"] = json!(format!("m-{index}"));
            record["body"] = json!(body.to_string());
            record["eventSourceARN"] = json!("arn:aws:sqs:us-west-2:123456789012:celerity-invoices-queue");
            record
        })
        .collect();
    json!({"Records": records})
}

#[tokio::test]
async fn s3_notifications_reach_the_buckets_consumer_directly_and_inside_sqs() {
    let deployed = DeployedFunction::new("archiveInvoice", "consumer").linking_resources_of("billing");
    let function = sources(deployed).await;

    let answer = function.invoke(payload(&s3_event("invoices", "2026/01.pdf"))).await;
    assert_eq!(answer.json(), Value::Null, "{}", function.process.output_text());
    assert!(function.process.wait_for_output("bucket created from invoices: {", WAIT).await);
    assert!(function.process.wait_for_output(r#""key":"2026/01.pdf""#, WAIT).await);

    // S3 takes no partial answer: a failed record fails the invocation,
    // for Lambda to retry it and then hand it to the on-failure destination.
    let answer = function.invoke(payload(&s3_event("invoices", "fail.pdf"))).await;
    let error = answer.error().expect("a Lambda error");
    assert_eq!(error.error_type, "Function.RecordsFailed");
    assert!(error.error_message.starts_with("1 of 1 records failed (req-2:0: "), "{error:?}");

    // Inside SQS, each message is a record, failed by its message id.
    let answer = function
        .invoke(payload(&sqs_carrying(&[s3_event("invoices", "a.pdf"), s3_event("invoices", "fail.pdf")])))
        .await;
    assert_eq!(answer.json(), json!({"batchItemFailures": [{"itemIdentifier": "m-1"}]}));
    assert!(function.process.wait_for_output("record m-0 bucket created from invoices", WAIT).await);
    function.finish().await;
}

#[tokio::test]
async fn dynamodb_stream_records_reach_the_datastores_consumer_and_fail_by_sequence_number() {
    let function = sources(DeployedFunction::new("projectOrder", "consumer")).await;
    let mut batch = lambda_fixture(fixtures::DYNAMODB);
    batch["Records"][1]["dynamodb"]["SequenceNumber"] = json!("1405400000000002063282999");
    batch["Records"][1]["dynamodb"]["NewImage"]["val"] = json!({"S": "fail"});
    let answer = function.invoke(payload(&batch)).await;
    assert_eq!(answer.json(), json!({"batchItemFailures": [{"itemIdentifier": "1405400000000002063282999"}]}));
    assert!(
        function
            .process
            .wait_for_output("record 1405400000000002063282832 datastore created from arn:aws:dynamodb", WAIT)
            .await
    );
    // The item as plain JSON, binary values as their base64.
    assert!(function.process.wait_for_output(r#""asdf1":"AAEqQQ==""#, WAIT).await);

    // The same records inside SQS messages.
    let records: Vec<Value> = batch["Records"].as_array().unwrap().clone();
    let answer = function.invoke(payload(&sqs_carrying(&records))).await;
    assert_eq!(answer.json(), json!({"batchItemFailures": [{"itemIdentifier": "m-1"}]}));
    function.finish().await;
}

#[tokio::test]
async fn without_an_id_each_batch_goes_to_the_consumer_of_its_source() {
    let function = Function::of_kind("lambda_sources", "consumer", &[]).await;

    assert_eq!(function.invoke(payload(&s3_event("invoices", "b.pdf"))).await.json(), Value::Null);
    assert!(function.process.wait_for_output("bucket created from invoices", WAIT).await);
    let queue = lambda_fixture(fixtures::SQS);
    assert_eq!(function.invoke(payload(&queue)).await.json(), json!({"batchItemFailures": []}));
    assert!(function.process.wait_for_output("record MessageID_1 queue  from arn:aws:sqs", WAIT).await);
    // An SQS message carrying a bucket's event goes to that bucket's consumer.
    let answer = function.invoke(payload(&sqs_carrying(&[s3_event("invoices", "c.pdf")]))).await;
    assert_eq!(answer.json(), json!({"batchItemFailures": []}));

    let answer = function.invoke(payload(&s3_event("elsewhere", "x"))).await;
    let error = answer.error().expect("a Lambda error");
    assert_eq!(error.error_type, "Runtime.UnservedEvent");
    assert!(error.error_message.starts_with("an S3 event notification from \"elsewhere\""), "{error:?}");
    assert!(error.error_message.contains("source::invoices::archiveInvoice (consumer)"), "{error:?}");
    // A payload of no consumer's event source is refused as such.
    let answer = function.invoke(payload(&lambda_fixture(fixtures::EVENTBRIDGE_SCHEDULE))).await;
    let error = answer.error().expect("a Lambda error");
    assert_eq!(error.error_type, "Runtime.InvalidEvent");
    assert!(
        error.error_message.contains("serves consumer events, and the payload is an EventBridge event"),
        "{error:?}"
    );
    function.finish().await;
}

#[tokio::test]
async fn a_function_reads_the_variables_it_was_deployed_with() {
    let function = sources(DeployedFunction::new("whoAmI", "custom")).await;
    let answer = function.invoke(payload(&json!({}))).await.json();
    assert_eq!(
        answer,
        json!({"handlerId": "whoAmI", "platform": "aws", "deployTarget": "aws-serverless",
               "telemetryEnabled": null, "traceparent": null})
    );
    function.finish().await;
}

#[tokio::test]
async fn a_traced_function_is_told_so_and_each_invocation_carries_its_x_ray_trace() {
    let function = sources(DeployedFunction::new("whoAmI", "custom").tracing_enabled()).await;
    let header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let traced = LambdaInvocation::new(b"{}".to_vec()).trace_id(header).wait(WAIT);
    let answer = function.api.invoke(traced).await.unwrap_or_else(|| panic!("{}", function.process.output_text()));
    let answer = answer.json();
    assert_eq!(answer["telemetryEnabled"], "true", "{answer}");
    assert_eq!(answer["traceparent"], "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01", "{answer}");
    function.finish().await;
}
