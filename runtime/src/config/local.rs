//! Local configuration stores: a Valkey (or Redis) key per store holding
//! the store's JSON object, as a local Celerity session writes it.

use redis::AsyncCommands;
use tokio::sync::Mutex;

use super::backend::{Backend, BoxFuture};
use super::environment::Environment;
use super::{ConfigError, ConfigErrorKind, Values};

/// Reads stores from the Valkey at `CELERITY_CONFIG_VALKEY_HOST`:
/// `CELERITY_CONFIG_VALKEY_PORT` (`localhost:6379` by default). One
/// connection is kept and made again after a failure.
pub(crate) struct ValkeyBackend {
    address: String,
    client: Result<redis::Client, String>,
    connection: Mutex<Option<redis::aio::MultiplexedConnection>>,
}

impl ValkeyBackend {
    pub(crate) fn from_environment(env: &Environment) -> Self {
        let host = env.get("CELERITY_CONFIG_VALKEY_HOST").unwrap_or("localhost");
        let port = env.get("CELERITY_CONFIG_VALKEY_PORT").unwrap_or("6379");
        let address = format!("{host}:{port}");
        let client = redis::Client::open(format!("redis://{address}/")).map_err(|error| error.to_string());
        ValkeyBackend { address, client, connection: Mutex::new(None) }
    }

    async fn read(&self, key: &str) -> Result<Option<String>, String> {
        let client = self.client.as_ref().map_err(|error| format!("its address is not valid ({error})"))?;
        let mut slot = self.connection.lock().await;
        let connection = match slot.as_mut() {
            Some(connection) => connection,
            None => slot.insert(client.get_multiplexed_async_connection().await.map_err(|error| error.to_string())?),
        };
        match connection.get::<_, Option<String>>(key).await {
            Ok(value) => Ok(value),
            Err(error) => {
                // Made again on the next read.
                *slot = None;
                Err(error.to_string())
            }
        }
    }
}

impl Backend for ValkeyBackend {
    fn describe(&self) -> String {
        format!("the local Valkey at {}", self.address)
    }

    fn fetch<'a>(&'a self, store_id: &'a str) -> BoxFuture<'a, Result<Values, ConfigError>> {
        Box::pin(async move {
            match self.read(store_id).await {
                // A store nothing has written yet is empty, not missing.
                Ok(None) => Ok(Values::default()),
                Ok(Some(raw)) => Values::from_json_object(raw.as_bytes(), &format!("the Valkey key {store_id:?}")),
                Err(error) => Err(ConfigError::new(ConfigErrorKind::Store, error)),
            }
        })
    }
}
