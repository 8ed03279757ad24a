//! What a WebSocket handler's return value becomes: an `Ack`.

use celerity_proto::v1::{Ack, result::Outcome};

use super::WebSocket;
use crate::error::Error;
use crate::pipeline::IntoAnswer;

/// A success.
impl IntoAnswer<WebSocket> for () {
    fn into_answer(self) -> Outcome {
        Outcome::Websocket(Ack { success: true, error_message: String::new() })
    }
}

/// A success, or a failed `Ack` carrying the error's message.
///
/// ```
/// use celerity::proto::v1::{Ack, result::Outcome};
/// use celerity::websocket::WebSocket;
/// use celerity::IntoAnswer;
///
/// let failed: Result<(), celerity::Error> = Err(celerity::Error::msg("no such room"));
/// assert_eq!(
///     IntoAnswer::<WebSocket>::into_answer(failed),
///     Outcome::Websocket(Ack { success: false, error_message: "no such room".into() })
/// );
/// ```
impl<R: IntoAnswer<WebSocket>, E: Into<Error>> IntoAnswer<WebSocket> for Result<R, E> {
    fn into_answer(self) -> Outcome {
        match self {
            Ok(value) => value.into_answer(),
            Err(error) => failed(&error.into()),
        }
    }
}

/// A failed `Ack` carrying the error's message.
pub(super) fn failed(error: &Error) -> Outcome {
    Outcome::Websocket(Ack { success: false, error_message: error.message().to_string() })
}
