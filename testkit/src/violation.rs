//! Protocol violations by the handler that the runtime side detects.

use std::fmt;

/// Something the handler sent that the specification does not allow. The
/// connection records each one (see
/// [`Connection::violations`](crate::Connection::violations)) and makes every
/// wait fail while any is unacknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// A Result for an id that was never dispatched on this stream.
    ResultForUnknownId {
        /// The Result's id.
        id: String,
    },
    /// A second Result for an id already answered.
    DuplicateResult {
        /// The Result's id.
        id: String,
    },
    /// A Result with `credit_grant` 0 (a request to withhold) while the test
    /// did not declare withholding as expected
    /// ([`Connection::expect_withhold`](crate::Connection::expect_withhold)).
    UnexpectedWithhold {
        /// The Result's id.
        id: String,
    },
    /// A Result with no outcome at all.
    ResultWithoutOutcome {
        /// The Result's id.
        id: String,
    },
}

impl Violation {
    /// The event id the violation is about.
    pub fn id(&self) -> &str {
        match self {
            Violation::ResultForUnknownId { id }
            | Violation::DuplicateResult { id }
            | Violation::UnexpectedWithhold { id }
            | Violation::ResultWithoutOutcome { id } => id,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::ResultForUnknownId { id } => {
                write!(f, "Result for id {id:?}, which was never dispatched")
            }
            Violation::DuplicateResult { id } => {
                write!(f, "a second Result for id {id:?}")
            }
            Violation::UnexpectedWithhold { id } => {
                write!(f, "Result for id {id:?} has credit_grant 0 (withhold) but the test did not expect withholding")
            }
            Violation::ResultWithoutOutcome { id } => {
                write!(f, "Result for id {id:?} carries no outcome")
            }
        }
    }
}
