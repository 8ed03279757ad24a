//! WebSocket messages as a kind of event: the marker, how a message is
//! served, and the words compile errors use for what a WebSocket handler
//! takes and returns.

use super::Message;
use super::answer::failed;
use crate::error::Error;
use crate::pipeline::{kind_diagnostics, whole_event_kind};

whole_event_kind! {
    /// The WebSocket kind of event: a handler takes arguments from a
    /// [`Message`] and answers with an `Ack`, failed when it returns an error.
    pub struct WebSocket;
    serves: WebSocket from Source::Websocket,
    event: Message = |wire| Ok(Message::from_wire(wire)),
    rejection: Error = |rejection: Error| failed(&rejection),
    answer: ::celerity_proto::v1::result::Outcome,
}

kind_diagnostics! {
    kind: WebSocket,
    argument: WebSocketArgument {
        message: "`{Self}` cannot be an argument of a WebSocket handler",
        label: "not something a WebSocket handler can take",
        notes: [
            "a WebSocket handler takes: `Message`, `ConnectionId`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>` and `WsSender`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::websocket::WebSocket>`",
        ],
    },
    answer: WebSocketAnswer {
        message: "`{Self}` cannot be returned from a WebSocket handler",
        label: "not a WebSocket handler's result",
        notes: [
            "a WebSocket handler returns: `()` or `Result<(), E>` where `E` is `celerity::Error` or any `std::error::Error`",
        ],
    },
    handler:
        /// An `async fn` usable as a WebSocket handler: every argument can be
        /// taken from a message ([`crate::FromEvent`]`<WebSocket>`) and it
        /// returns `()` or a `Result`. The same as
        /// [`crate::Handler`]`<WebSocket, Args>`, in the words of a WebSocket
        /// handler.
        WebSocketHandler {
        message: "`{Self}` is not a WebSocket handler",
        label: "not a WebSocket handler",
        notes: [
            "a WebSocket handler is an `async fn` whose arguments are WebSocket extractors (`Message`, `Json<T>`, `Bytes`, `String`, `Context`, `State<T>`) and that returns `()` or `Result<(), E>`",
        ],
    },
}
