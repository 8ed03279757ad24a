//! An AWS SDK error as a resource's failure, for every kind served by an
//! AWS service.

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use aws_smithy_types::error::operation::BuildError;

use super::error::{Fault, ResourceErrorKind};
use crate::aws::describe_error;

/// The failure `error` is, where the service answered: not found, a
/// condition that failed, throttled, or else refused, always with the
/// service's code; invalid where the request could not be built; else
/// unreachable (a connection refused, a timeout, an answer cut short).
pub(crate) fn fault<E>(error: &SdkError<E, HttpResponse>) -> Fault
where
    E: std::error::Error + ProvideErrorMetadata + 'static,
{
    let kind = match error {
        SdkError::ServiceError(_) => answered(error.code()),
        SdkError::ConstructionFailure(_) => ResourceErrorKind::Invalid,
        _ => ResourceErrorKind::Unreachable,
    };
    Fault::new(kind, error.code(), describe_error(error))
}

/// The kind of a refusal with the service's `code`. Only codes that say
/// the same thing on every service are read: S3's and DynamoDB's names for
/// a missing object, a failed precondition, and too many requests. Not
/// `NotFound`, which S3 answers a `HEAD` of a missing object with but SNS
/// a topic that does not exist: a resource the deployment got wrong, not
/// data that is absent.
fn answered(code: Option<&str>) -> ResourceErrorKind {
    match code {
        Some("NoSuchKey" | "NoSuchVersion") => ResourceErrorKind::NotFound,
        Some("ConditionalCheckFailedException" | "PreconditionFailed" | "TransactionConflictException") => {
            ResourceErrorKind::ConditionFailed
        }
        Some(
            "ProvisionedThroughputExceededException"
            | "ThrottlingException"
            | "RequestLimitExceeded"
            | "SlowDown"
            | "Throttling"
            | "ThrottledException",
        ) => ResourceErrorKind::Throttled,
        _ => ResourceErrorKind::Refused,
    }
}

/// A request the AWS SDK would not build: one of the SDK's own making, as
/// every field it requires is set.
pub(crate) fn unbuilt(error: BuildError) -> Fault {
    Fault::new(ResourceErrorKind::Invalid, Some("InvalidRequest"), error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_typed_by_codes_that_mean_one_thing_on_every_service() {
        assert_eq!(answered(Some("NoSuchKey")), ResourceErrorKind::NotFound);
        assert_eq!(answered(Some("ConditionalCheckFailedException")), ResourceErrorKind::ConditionFailed);
        assert_eq!(answered(Some("PreconditionFailed")), ResourceErrorKind::ConditionFailed);
        assert_eq!(answered(Some("ProvisionedThroughputExceededException")), ResourceErrorKind::Throttled);
        assert_eq!(answered(Some("SlowDown")), ResourceErrorKind::Throttled);
        assert_eq!(answered(Some("AccessDenied")), ResourceErrorKind::Refused);
        assert_eq!(answered(None), ResourceErrorKind::Refused);
        assert_eq!(answered(Some("NotFound")), ResourceErrorKind::Refused);
    }
}
