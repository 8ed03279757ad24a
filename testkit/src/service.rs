//! The gRPC service the test runtime serves: each new `EventStream` gets its
//! handshake run at once (the Ready timeout runs from connecting), and the
//! outcome is queued for [`TestRuntime::accept`](crate::TestRuntime::accept).

use std::sync::Arc;

use celerity_proto::v1::handler_runtime_service_server::HandlerRuntimeService;
use celerity_proto::v1::{HandlerMessage, RuntimeMessage};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::error::Error;
use crate::handshake::{self, Handshake};
use crate::settings::Settings;

/// Handshake outcomes, in the order the streams completed them.
pub(crate) type HandshakeQueue = mpsc::UnboundedSender<Result<Handshake, Error>>;

/// The runtime side of `HandlerRuntimeService`.
pub(crate) struct RuntimeService {
    pub(crate) settings: Arc<Settings>,
    pub(crate) handshakes: HandshakeQueue,
}

#[tonic::async_trait]
impl HandlerRuntimeService for RuntimeService {
    type EventStreamStream = UnboundedReceiverStream<Result<RuntimeMessage, Status>>;

    async fn event_stream(
        &self,
        request: Request<Streaming<HandlerMessage>>,
    ) -> Result<Response<Self::EventStreamStream>, Status> {
        if self.settings.refusing.load(std::sync::atomic::Ordering::SeqCst) {
            // A stream connecting during a drain would be given no work;
            // refusing it tells the handler to stop.
            let _ = self.handshakes.send(Err(Error::RefusedDraining));
            return Err(Status::unavailable("the runtime is draining and accepts no new handler streams"));
        }
        let connected_at = Instant::now();
        let inbound = request.into_inner();
        let (outbound, rx) = mpsc::unbounded_channel();
        let settings = Arc::clone(&self.settings);
        let handshakes = self.handshakes.clone();
        tokio::spawn(async move {
            let outcome = handshake::run(settings, inbound, outbound, connected_at).await;
            let _ = handshakes.send(outcome);
        });
        Ok(Response::new(UnboundedReceiverStream::new(rx)))
    }
}
