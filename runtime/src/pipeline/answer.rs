//! Turning a handler's return value into its answer.

use super::Kind;

/// A value a handler of kind `K` can return.
///
/// Each kind implements it for what its handlers answer with: HTTP for
/// every [`crate::http::IntoResponse`] and a `Result` of one; the other
/// kinds for `()`, their own outcome types and a `Result` of those. Errors
/// convert through [`crate::Error`].
pub trait IntoAnswer<K: Kind> {
    /// Converts the return value.
    fn into_answer(self) -> K::Answer;
}
