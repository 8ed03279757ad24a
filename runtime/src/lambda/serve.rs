//! The Lambda run loop: at cold start, what the function serves is settled
//! (or its init fails, reported to Lambda); then each invocation is taken
//! from the Runtime API, answered, and the next one asked for, one at a
//! time, until the sandbox ends.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::answers::{Answer, Failure};
use super::function::{FunctionEnv, Served, available, resolve};
use super::invocation::{Function, Meta};
use super::management::ManagementApi;
use super::runtime_api::{ApiError, RuntimeApi};
use super::sender::{self, Endpoint};
use crate::command::Command;
use crate::config::Configuration;
use crate::context::StateMap;
use crate::error::Error;
use crate::handle::AppHandle;
use crate::registry::Registration;
use crate::settings::Settings;

pub(crate) async fn serve(
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    configuration: &Configuration,
    settings: Settings,
    commands: mpsc::UnboundedSender<Command>,
    command_rx: mpsc::UnboundedReceiver<Command>,
) -> Result<(), Error> {
    let address = std::env::var("AWS_LAMBDA_RUNTIME_API").unwrap_or_default();
    let api = RuntimeApi::new(&address).map_err(|error| Error::typed("Runtime.InvalidEnvironment", error))?;
    let served = match FunctionEnv::from_lookup(|name| std::env::var(name).ok())
        .and_then(|function| resolve(&registrations, &function))
    {
        Ok(served) => served,
        Err(error) => return Err(init_failed(&api, Failure::runtime("HandlerNotFound", error.to_string())).await),
    };
    // Only what this function serves need find its resources and bind its
    // configuration: another function's store is not this one's to read.
    if let Err(error) = crate::registry::prepare(configuration, &served.handlers).await {
        return Err(init_failed(&api, Failure::runtime(error.type_name(), error.message())).await);
    }
    crate::panics::install(&settings);
    log_served(&served);

    let endpoint = Endpoint::default();
    let management = Arc::new(ManagementApi::from_lookup(|name| std::env::var(name).ok()));
    tokio::spawn(sender::serve(command_rx, management, endpoint.clone()));
    let function = Function {
        served,
        state,
        handle: AppHandle::new(commands),
        endpoint,
        cancel_grace: settings.cancel_grace,
        expose_panics: settings.expose_panics,
    };
    loop {
        let next = api.next().await.map_err(|error| stopped(&error))?;
        let meta = Meta {
            request_id: &next.request_id,
            deadline_ms: next.deadline_ms,
            trace_header: next.trace_id.as_deref(),
        };
        let posted = match function.invoke(next.payload.clone(), meta).await {
            Answer::Response(response) => {
                api.respond(&next.request_id, bytes::Bytes::from(Box::<str>::from(response).into_string())).await
            }
            Answer::Failure(failure) => api.fail(&next.request_id, &failure).await,
        };
        match posted {
            Ok(()) => {}
            Err(ApiError::Refused(why)) => {
                tracing::warn!(request_id = %next.request_id, "the Lambda Runtime API did not take the answer: {why}");
            }
            Err(error @ ApiError::Fatal(_)) => return Err(stopped(&error)),
        }
    }
}

fn log_served(served: &Served) {
    let handlers = available(&served.handlers);
    if served.named {
        tracing::info!(sdk = crate::version::SDK_VERSION, "serving on AWS Lambda: {handlers}");
    } else {
        let kind = served.kind.map_or("every kind of", |kind| kind.as_str());
        tracing::info!(
            sdk = crate::version::SDK_VERSION,
            "serving on AWS Lambda, each {kind} event to the handler it fits among: {handlers}"
        );
    }
}

fn stopped(error: &ApiError) -> Error {
    Error::typed("Runtime.ApiError", format!("the Lambda run loop stopped: {error}"))
}

/// Says at `/runtime/init/error` why the function cannot start, so that
/// Lambda reports it as the cause, and gives the error `run` returns.
async fn init_failed(api: &RuntimeApi, failure: Failure) -> Error {
    tracing::error!("the function cannot start: {}", failure.message);
    if let Err(error) = api.init_failed(&failure).await {
        tracing::warn!("the init error could not be reported to the Lambda Runtime API: {error}");
    }
    Error::typed(failure.error_type, failure.message)
}
