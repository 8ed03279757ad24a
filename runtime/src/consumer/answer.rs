//! What a consumer handler's return value becomes: a record's success or
//! failure, or the whole batch's result.

use celerity_proto::v1::{BatchResult, result::Outcome};

use super::batch::whole_batch_failed;
use super::{BatchOutcome, PerRecord, WholeBatch};
use crate::error::Error;
use crate::pipeline::IntoAnswer;

/// The record succeeded.
impl IntoAnswer<PerRecord> for () {
    fn into_answer(self) -> Result<(), Error> {
        Ok(())
    }
}

/// The record succeeded, or failed with the error's message.
impl<R: IntoAnswer<PerRecord>, E: Into<Error>> IntoAnswer<PerRecord> for Result<R, E> {
    fn into_answer(self) -> Result<(), Error> {
        self.map_err(Into::into)?.into_answer()
    }
}

/// Every record succeeded.
impl IntoAnswer<WholeBatch> for () {
    fn into_answer(self) -> Outcome {
        Outcome::Consumer(BatchResult { success: true, failures: Vec::new() })
    }
}

/// The records named failed; the rest succeeded.
impl IntoAnswer<WholeBatch> for BatchOutcome {
    fn into_answer(self) -> Outcome {
        self.into_outcome()
    }
}

/// An error fails the whole batch: nothing named, nothing acknowledged. It
/// is logged, since a batch result carries no message.
impl<R: IntoAnswer<WholeBatch>, E: Into<Error>> IntoAnswer<WholeBatch> for Result<R, E> {
    fn into_answer(self) -> Outcome {
        match self {
            Ok(value) => value.into_answer(),
            Err(error) => {
                let error = error.into();
                tracing::warn!(error = ?error, "a batch consumer failed; the whole batch is reported failed");
                whole_batch_failed()
            }
        }
    }
}
