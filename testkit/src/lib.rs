//! The runtime side of the Celerity handler IPC protocol, for integration
//! tests of handler executables.
//!
//! A handler executable is a gRPC *client* of the Celerity runtime. This kit
//! plays the runtime: a [`TestRuntime`] serves `HandlerRuntimeService` on a
//! real Unix socket (or loopback TCP), performs the handshake exactly as the
//! specification says the runtime does (`RuntimeConfig`, `Ready` within the
//! Ready timeout, version and tag negotiation, `ReadyAck`), and hands each
//! accepted stream to the test as a [`Connection`] that dispatches events,
//! collects results and other frames, keeps the credit account and records
//! protocol violations.
//!
//! - [`dispatcher`] is the runtime's scheduling side on top of that: a
//!   [`Dispatcher`](dispatcher::Dispatcher) owns every accepted stream and
//!   schedules submitted events onto them as the runtime does (credit,
//!   per-tag caps, idle-tag reservation, round-robin, attach grace, producer
//!   wait, deadlines, cancel reclaim, late answers, drain), answering each
//!   producer with an [`EventOutcome`](dispatcher::EventOutcome).
//! - [`event`] builds `Dispatch` frames for every kind of source.
//! - [`process`] runs the handler executable under test and captures its
//!   output.
//! - [`negotiate`] is the runtime's verdict on a `Ready`, usable on its own.
//! - [`RawRuntime`] is the raw mode: each stream handed out as it opens,
//!   with no handshake and no bookkeeping, to send anything at all (any
//!   frame, bytes that do not decode, nothing) and read what comes back:
//!   for a runtime that misbehaves, and for a load generator.
//!
//! ```no_run
//! use std::time::Duration;
//! use celerity_testkit::{HandlerProcess, TestRuntime, event};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let rt = TestRuntime::builder()
//!     .handler("getOrder", "GET::/orders/{id}")
//!     .bind()
//!     .await?;
//! let mut handler = HandlerProcess::spawn_for(&rt, "target/debug/my-handler")?;
//! let conn = rt.accept().await?.accepted()?;
//! let result = conn
//!     .call(event::http("GET", "/orders/7").route("/orders/{id}").path_param("id", "7"))
//!     .await?;
//! assert!(result.outcome.is_some());
//! conn.assert_no_violations();
//! conn.drain_in(Duration::from_secs(5))?;
//! let status = handler.wait_timeout(Duration::from_secs(10)).await;
//! assert!(status.is_some_and(|s| s.success()), "{}", handler.output_text());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod answer;
mod codec;
mod connection;
mod credit;
pub mod dispatcher;
mod error;
pub mod event;
mod frame;
mod handshake;
mod ids;
mod lambda_deployment;
mod lambda_runtime_api;
mod ledger;
mod listen;
mod management_api;
pub mod negotiate;
pub mod process;
mod raw;
mod raw_stream;
mod runtime;
pub mod servers;
mod service;
mod settings;
mod violation;

pub use answer::http_answer;
pub use celerity_proto as proto;
pub use codec::Outgoing;
pub use connection::{Connection, DEFAULT_WAIT_TIMEOUT};
pub use credit::CreditState;
pub use error::{DispatchRefusal, Error, StreamEnd};
pub use handshake::Handshake;
pub use lambda_deployment::{DeployedFunction, fixtures, lambda_fixture};
pub use lambda_runtime_api::{
    FUNCTION_ARN, LambdaAnswer, LambdaError, LambdaInvocation, LambdaRuntimeApi, MAX_RESPONSE_BYTES,
};
pub use listen::{ENV_FALLBACK_ENABLED, ENV_FALLBACK_PORT, ENV_SOCKET, ListenAddress};
pub use management_api::{ManagementApi, PostToConnection};
pub use process::{HandlerCommand, HandlerProcess};
pub use raw::{DEFAULT_RAW_QUEUE, RawRuntime, RawRuntimeBuilder};
pub use raw_stream::{RawSender, RawStream};
pub use runtime::{DEFAULT_HANDLER_TIMEOUT_MS, DEFAULT_SOCKET_NAME, PROTOCOL_VERSION, TestRuntime, TestRuntimeBuilder};
pub use settings::{DEFAULT_ACCEPT_TIMEOUT, DEFAULT_READY_TIMEOUT};
pub use violation::Violation;
