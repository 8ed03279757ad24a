//! The Lambda run loop: `lambda_runtime` takes each invocation from the
//! Runtime API and posts its answer; the function answers it.
//!
//! `lambda_runtime` reads every payload as JSON before a handler sees it,
//! and answers one that is not JSON itself. A custom invocation may be sent
//! anything, so a layer outside it keeps each payload, raw, for the
//! function, and hands the runtime a JSON `null` in its place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use lambda_runtime::{Diagnostic, LambdaEvent, LambdaInvocation, Runtime, Service, service_fn};
use serde::de::IgnoredAny;
use tokio::sync::mpsc;

use super::answers::Answer;
use super::function::{FunctionEnv, Resolution, resolve};
use super::invocation::{Function, Meta};
use super::management::ManagementApi;
use super::sender::{self, Endpoint};
use crate::command::Command;
use crate::context::StateMap;
use crate::error::Error;
use crate::handle::AppHandle;
use crate::registry::Registration;
use crate::settings::Settings;

/// What Lambda sets on every function, and `lambda_runtime` needs.
const LAMBDA_VARIABLES: [&str; 3] =
    ["AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION"];

pub(crate) async fn serve(
    registrations: Vec<Registration>,
    state: Arc<StateMap>,
    settings: Settings,
    commands: mpsc::UnboundedSender<Command>,
    command_rx: mpsc::UnboundedReceiver<Command>,
) -> Result<(), Error> {
    let api = std::env::var("AWS_LAMBDA_RUNTIME_API").unwrap_or_default();
    if let Err(error) = api.parse::<http::Uri>() {
        return Err(Error::typed(
            "PlatformError",
            format!("AWS_LAMBDA_RUNTIME_API={api:?} is not an address: {error}"),
        ));
    }
    let missing: Vec<&str> = LAMBDA_VARIABLES.into_iter().filter(|name| std::env::var_os(name).is_none()).collect();
    if !missing.is_empty() {
        let error =
            format!("AWS_LAMBDA_RUNTIME_API is set, but not what Lambda sets beside it: {}", missing.join(", "));
        return Err(init_failed(&api, "PlatformError", error).await);
    }
    if std::env::var("AWS_LAMBDA_FUNCTION_MEMORY_SIZE").is_ok_and(|size| size.parse::<i32>().is_err()) {
        let error = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE is not a number of megabytes";
        return Err(init_failed(&api, "PlatformError", error).await);
    }
    let resolution = match FunctionEnv::from_lookup(|name| std::env::var(name).ok())
        .and_then(|function| resolve(&registrations, &function))
    {
        Ok(resolution) => resolution,
        Err(error) => return Err(init_failed(&api, "HandlerNotFound", error).await),
    };
    crate::panics::install(&settings);
    match &resolution {
        Resolution::Fixed(resolved) => tracing::info!(
            sdk = crate::version::SDK_VERSION,
            tag = %resolved.tag,
            kind = resolved.registration.kind.as_str(),
            handler = resolved.registration.origin.function,
            "serving on AWS Lambda"
        ),
        Resolution::ByPayload => tracing::info!(
            sdk = crate::version::SDK_VERSION,
            handlers = registrations.len(),
            "serving on AWS Lambda; each invocation goes to the one handler of its payload's kind"
        ),
    }

    let endpoint = Endpoint::default();
    let management = Arc::new(ManagementApi::from_lookup(|name| std::env::var(name).ok()));
    tokio::spawn(sender::serve(command_rx, management, endpoint.clone()));
    let function = Arc::new(Function {
        registrations,
        resolution,
        state,
        handle: AppHandle::new(commands),
        endpoint,
        cancel_grace: settings.cancel_grace,
        expose_panics: settings.expose_panics,
    });
    let payloads = Payloads::default();
    let kept = payloads.clone();
    let handler = service_fn(move |event: LambdaEvent<IgnoredAny>| {
        let function = Arc::clone(&function);
        let raw = kept.take(&event.context.request_id);
        async move {
            let context = event.context;
            let meta = Meta {
                request_id: &context.request_id,
                deadline_ms: context.deadline,
                trace_header: context.xray_trace_id.as_deref(),
            };
            match function.invoke(raw, meta).await {
                Answer::Response(response) => Ok(response),
                Answer::Failure(failure) => {
                    Err(Diagnostic { error_type: failure.error_type, error_message: failure.message })
                }
            }
        }
    });
    Runtime::new(handler)
        .layer(KeepPayloads(payloads))
        .run()
        .await
        .map_err(|error| Error::typed("LambdaRuntimeError", format!("the Lambda run loop stopped: {error}")))
}

/// Says at `/runtime/init/error` why the function cannot start, so that
/// Lambda reports it as the cause, and gives the error `run` returns.
async fn init_failed(api: &str, error_type: &str, error: impl std::fmt::Display) -> Error {
    let message = error.to_string();
    tracing::error!("the function cannot start: {message}");
    let body = serde_json::json!({"errorType": error_type, "errorMessage": message}).to_string();
    let request = http::Request::post(format!("http://{api}/2018-06-01/runtime/init/error"))
        .header("Lambda-Runtime-Function-Error-Type", format!("Runtime.{error_type}"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)));
    match request {
        Ok(request) => {
            let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
            if let Err(error) = client.request(request).await {
                tracing::warn!("the init error could not be reported to the Lambda Runtime API: {error}");
            }
        }
        Err(error) => tracing::warn!("the init error could not be reported: {error}"),
    }
    Error::typed(error_type.to_string(), message)
}

/// The raw payloads of the invocations in flight, by request id.
#[derive(Debug, Clone, Default)]
struct Payloads(Arc<Mutex<HashMap<String, Bytes>>>);

impl Payloads {
    fn keep(&self, request_id: String, payload: Bytes) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(request_id, payload);
    }

    fn take(&self, request_id: &str) -> Bytes {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(request_id).unwrap_or_default()
    }
}

/// The layer that keeps each payload for the function.
struct KeepPayloads(Payloads);

impl<S> tower::Layer<S> for KeepPayloads {
    type Service = KeepPayload<S>;

    fn layer(&self, inner: S) -> KeepPayload<S> {
        KeepPayload { inner, payloads: self.0.clone() }
    }
}

struct KeepPayload<S> {
    inner: S,
    payloads: Payloads,
}

impl<S: Service<LambdaInvocation>> Service<LambdaInvocation> for KeepPayload<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut invocation: LambdaInvocation) -> S::Future {
        let payload = std::mem::replace(&mut invocation.body, Bytes::from_static(b"null"));
        self.payloads.keep(invocation.context.request_id.clone(), payload);
        self.inner.call(invocation)
    }
}
