//! The same handlers served on AWS Lambda.
//!
//! Each invocation's payload becomes the protocol's `Dispatch` (an
//! `HttpRequest`, a `WebSocketMessage`, a `ConsumerBatch`, a
//! `ScheduleTrigger` or a `CustomInvoke`, with the invocation's deadline and
//! trace header), runs through the handler's registration under a session of
//! its own, exactly as `celerity::testing` runs a call, and the `Result`
//! outcome becomes what Lambda expects back. So extraction, answers,
//! deadlines, panics and the source and shape checks are the ones the
//! runtime sees; only the two conversions are Lambda's.
//!
//! - `platform`: is this Lambda (compiled with or without the feature);
//! - `function`: what the deployment says the function serves;
//! - `form`: what kind of event a payload is;
//! - `route`: which of the function's handlers an event is for;
//! - `events`: a payload into a `Dispatch` source, one module per kind;
//! - `answers`: an outcome into the invocation's response, one module per kind;
//! - `trace`: the X-Ray trace header as W3C trace context;
//! - `management`: signed `PostToConnection` calls;
//! - `sender`: WebSocket sends served through them;
//! - `invocation`: one invocation, payload to response;
//! - `runtime_api`: the client of the Lambda Runtime API;
//! - `serve`: the run loop.

mod platform;

#[cfg(feature = "aws-lambda")]
mod answers;
#[cfg(feature = "aws-lambda")]
mod events;
#[cfg(feature = "aws-lambda")]
mod form;
#[cfg(feature = "aws-lambda")]
mod function;
#[cfg(feature = "aws-lambda")]
mod invocation;
#[cfg(feature = "aws-lambda")]
mod management;
#[cfg(feature = "aws-lambda")]
mod route;
#[cfg(feature = "aws-lambda")]
mod runtime_api;
#[cfg(feature = "aws-lambda")]
mod sender;
#[cfg(feature = "aws-lambda")]
mod serve;
#[cfg(feature = "aws-lambda")]
mod trace;

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::command::Command;
use crate::config::Configuration;
use crate::context::StateMap;
use crate::error::Error;
use crate::registry::Registration;
use crate::settings::Settings;

pub(crate) use platform::{Platform, detect};

/// Serves `registrations` on Lambda until the sandbox is shut down: one
/// invocation at a time, each answered exactly once. `commands` carries the
/// application's requests, WebSocket sends among them.
pub(crate) async fn serve(
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    configuration: &Configuration,
    settings: Settings,
    commands: mpsc::UnboundedSender<Command>,
    command_rx: mpsc::UnboundedReceiver<Command>,
) -> Result<(), Error> {
    #[cfg(feature = "aws-lambda")]
    {
        serve::serve(registrations, state, configuration, settings, commands, command_rx).await
    }
    #[cfg(not(feature = "aws-lambda"))]
    {
        let _ = (registrations, state, configuration, settings, commands, command_rx);
        Err(Error::typed("PlatformError", platform::WITHOUT_FEATURE))
    }
}

#[cfg(test)]
mod tests {
    #[cfg(not(feature = "aws-lambda"))]
    #[tokio::test]
    async fn without_the_feature_lambda_is_an_error_naming_it() {
        let (commands, command_rx) = tokio::sync::mpsc::unbounded_channel();
        let settings = super::Settings::from_lookup(|_| None).unwrap();
        let state = std::sync::Arc::default();
        let configuration = crate::config::Configuration::empty();
        let error = super::serve(Vec::new(), state, &configuration, settings, commands, command_rx).await.unwrap_err();
        assert!(error.to_string().contains("enable the `aws-lambda` feature of the `celerity` crate"), "{error}");
    }
}
