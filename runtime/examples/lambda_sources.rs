//! Consumers of a bucket and of a datastore, for AWS Lambda, where S3 and
//! DynamoDB streams invoke a function directly or through an SQS queue.
//!
//! Each record is logged as it arrives (`record <id> <source type> <event
//! type> from <source>: <body>`); one whose body mentions `"fail"` fails.
//! A custom handler `whoAmI` answers what the function was deployed as, and
//! the trace its invocation is part of.

use std::process::ExitCode;

use celerity::App;
use celerity::consumer::RawRecord;

async fn record(record: RawRecord) -> celerity::Result<()> {
    let body = String::from_utf8_lossy(record.body()).into_owned();
    tracing::info!(
        "record {} {} {} from {}: {body}",
        record.message_id(),
        record.source_type(),
        record.event_type(),
        record.source()
    );
    if body.contains("fail") {
        return Err(celerity::Error::typed("RecordRefused", format!("record {} asked to fail", record.message_id())));
    }
    Ok(())
}

async fn who_am_i(cx: celerity::Context) -> celerity::Json<serde_json::Value> {
    let var = |name: &str| std::env::var(name).ok();
    celerity::Json(serde_json::json!({
        "handlerId": var("CELERITY_HANDLER_ID"),
        "platform": var("CELERITY_PLATFORM"),
        "deployTarget": var("CELERITY_DEPLOY_TARGET"),
        "telemetryEnabled": var("CELERITY_TELEMETRY_ENABLED"),
        "traceparent": cx.traceparent(),
    }))
}

fn main() -> ExitCode {
    celerity::run_main(|| async {
        App::new()
            .without_compiled_handlers()
            .consumer("source::invoices::archiveInvoice", record)
            .consumer("source::Example-Table::projectOrder", record)
            .consumer("source::SQSQueue::queueRecord", record)
            .custom("custom::whoAmI", who_am_i)
            .run()
            .await
    })
}
