//! Configuration stores on AWS: Secrets Manager (a store is one secret
//! holding a JSON object), Parameter Store (a store is every parameter
//! under a path), and the Lambda Parameters and Secrets extension, a cache
//! of Secrets Manager beside the function.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use tokio::sync::OnceCell;

use super::backend::{Backend, BoxFuture, kinds};
use super::environment::Environment;
use super::{ConfigError, ConfigErrorKind, Values};
use crate::aws::{describe_error, sdk_config};

/// The backend of a store of `kind` on AWS.
pub(crate) fn backend(kind: Option<&str>, env: &Environment) -> Result<std::sync::Arc<dyn Backend>, ConfigError> {
    match kind {
        None | Some(kinds::SECRETS_MANAGER) => {
            let secrets = SecretsManager::default();
            match env.get("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT") {
                Some(port) => {
                    let port = port.parse::<u16>().map_err(|_| {
                        ConfigError::new(
                            ConfigErrorKind::Malformed,
                            "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT is not a port number",
                        )
                    })?;
                    let token = env.get("AWS_SESSION_TOKEN").unwrap_or_default().to_string();
                    Ok(std::sync::Arc::new(Extension { port, token, fallback: secrets }))
                }
                None => Ok(std::sync::Arc::new(secrets)),
            }
        }
        // Always through the service: the extension reads one parameter at
        // a time, and has nothing that reads a path.
        Some(kinds::PARAMETER_STORE) => Ok(std::sync::Arc::new(ParameterStore::default())),
        Some(other) => Err(ConfigError::unsupported(format!(
            "AWS holds configuration as `{}` or `{}`, and the deployment asked for `{other}`",
            kinds::SECRETS_MANAGER,
            kinds::PARAMETER_STORE
        ))),
    }
}

/// A store held as one secret whose text is a JSON object.
#[derive(Default)]
pub(crate) struct SecretsManager {
    client: OnceCell<aws_sdk_secretsmanager::Client>,
}

impl SecretsManager {
    async fn client(&self) -> &aws_sdk_secretsmanager::Client {
        self.client.get_or_init(|| async { aws_sdk_secretsmanager::Client::new(sdk_config().await) }).await
    }
}

impl Backend for SecretsManager {
    fn describe(&self) -> String {
        "Secrets Manager".to_string()
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        Box::pin(async move {
            let output = self
                .client()
                .await
                .get_secret_value()
                .secret_id(store_id)
                .send()
                .await
                .map_err(|error| ConfigError::new(ConfigErrorKind::Store, describe_error(&error)))?;
            match output.secret_string() {
                // Created, and not written yet: a store with nothing in it.
                None | Some("") => Ok(Values::default()),
                Some(text) => Values::from_json_object(text.as_bytes(), &format!("the secret {store_id:?}")),
            }
        })
    }
}

/// A store held as parameters under a path: read recursively, decrypted,
/// and page by page to the end, keyed by their names below the path.
#[derive(Default)]
pub(crate) struct ParameterStore {
    client: OnceCell<aws_sdk_ssm::Client>,
}

impl Backend for ParameterStore {
    fn describe(&self) -> String {
        "Parameter Store".to_string()
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        Box::pin(async move {
            let client = self.client.get_or_init(|| async { aws_sdk_ssm::Client::new(sdk_config().await) }).await;
            let path = if store_id.ends_with('/') { store_id.to_string() } else { format!("{store_id}/") };
            let mut values = std::collections::BTreeMap::new();
            let mut next: Option<String> = None;
            loop {
                let page = client
                    .get_parameters_by_path()
                    .path(&path)
                    .recursive(true)
                    .with_decryption(true)
                    .set_next_token(next.take())
                    .send()
                    .await
                    .map_err(|error| ConfigError::new(ConfigErrorKind::Store, describe_error(&error)))?;
                for parameter in page.parameters() {
                    let (Some(name), Some(value)) = (parameter.name(), parameter.value()) else { continue };
                    let key = name.strip_prefix(path.as_str()).unwrap_or(name);
                    values.insert(key.to_string(), value.to_string());
                }
                match page.next_token() {
                    Some(token) if !token.is_empty() => next = Some(token.to_string()),
                    _ => return Ok(Values::from_map(values)),
                }
            }
        })
    }
}

/// How long the extension, a process beside the function, may take before
/// the service itself is asked.
const EXTENSION_TIMEOUT: Duration = Duration::from_secs(5);

/// A secret read through the Lambda Parameters and Secrets extension on
/// `localhost:<port>`, which caches it; anything wrong with the extension
/// falls back to Secrets Manager, with a warning.
pub(crate) struct Extension {
    port: u16,
    token: String,
    fallback: SecretsManager,
}

impl Extension {
    async fn read(&self, store_id: &str) -> Result<String, String> {
        let query: String =
            percent_encoding::utf8_percent_encode(store_id, percent_encoding::NON_ALPHANUMERIC).collect();
        let stream =
            tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.map_err(|error| error.to_string())?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|error| error.to_string())?;
        tokio::spawn(connection);
        let request = http::Request::get(format!("/secretsmanager/get?secretId={query}"))
            .header(http::header::HOST, format!("localhost:{}", self.port))
            .header("X-Aws-Parameters-Secrets-Token", &self.token)
            .body(Empty::<Bytes>::new())
            .map_err(|error| error.to_string())?;
        let response = sender.send_request(request).await.map_err(|error| error.to_string())?;
        let status = response.status();
        let body = response.into_body().collect().await.map_err(|error| error.to_string())?.to_bytes();
        if !status.is_success() {
            return Err(format!("the extension answered {status}"));
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            #[serde(rename = "SecretString", default)]
            secret_string: String,
        }
        serde_json::from_slice::<Answer>(&body)
            .map(|answer| answer.secret_string)
            .map_err(|_| "the extension's answer is not the JSON of a secret".to_string())
    }
}

impl Backend for Extension {
    fn describe(&self) -> String {
        format!("the Parameters and Secrets extension on port {}", self.port)
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        Box::pin(async move {
            let read = match tokio::time::timeout(EXTENSION_TIMEOUT, self.read(store_id)).await {
                Ok(read) => read,
                Err(_) => Err(format!("it did not answer within {} s", EXTENSION_TIMEOUT.as_secs())),
            };
            match read {
                Ok(text) if text.is_empty() => Ok(Values::default()),
                Ok(text) => Values::from_json_object(text.as_bytes(), &format!("the secret {store_id:?}")),
                Err(error) => {
                    tracing::warn!(
                        store = store_id,
                        "could not read configuration through the Parameters and Secrets extension ({error}); reading \
                         it from Secrets Manager"
                    );
                    self.fallback.fetch(store_id).await
                }
            }
        })
    }

    fn caches(&self) -> bool {
        true
    }
}
