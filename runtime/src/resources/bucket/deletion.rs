//! What a delete of many objects answers, key by key.

use crate::resources::error::{Fault, ResourceError};

/// The most keys S3 deletes in one request; a larger delete is sent in
/// requests of this many.
pub const MAX_DELETE_BATCH: usize = 1000;

/// What became of each key of [`Bucket::delete_many`](super::Bucket::delete_many):
/// every key is in exactly one list. A key that held nothing counts as
/// deleted, as S3 counts it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DeleteManyResult {
    /// The keys that hold nothing now.
    pub deleted: Vec<String>,
    /// The keys the bucket refused to delete, or the SDK would not send.
    pub failed: Vec<DeleteFailure>,
    /// The keys no answer was had for: their request failed, so whether
    /// they were deleted is not known.
    pub unsent: Vec<DeleteUnsent>,
}

/// A key the bucket refused to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteFailure {
    /// The key.
    pub key: String,
    /// The bucket's (or the SDK's) code for the refusal: `AccessDenied`,
    /// `KeyTooLongError`.
    pub code: String,
    /// What went wrong.
    pub message: String,
}

/// A key whose request failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DeleteUnsent {
    /// The key.
    pub key: String,
    /// Why its request failed; the same for every key of the request.
    pub error: ResourceError,
}

/// The answer for one key, as a backend gives it.
#[derive(Clone)]
pub(crate) enum Removal {
    Deleted(String),
    Failed { key: String, code: String, message: String },
    Unsent(String, Fault),
}
