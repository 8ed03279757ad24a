//! The Redis of a local session (`celerity dev`, `celerity-dev run`), which
//! holds its queues and topics: a connection made on first use, which
//! reconnects after it fails.

#[cfg(messaging)]
use std::sync::Arc;
#[cfg(messaging)]
use std::time::Duration;

#[cfg(messaging)]
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
#[cfg(messaging)]
use tokio::sync::OnceCell;

#[cfg(messaging)]
use super::error::{Fault, ResourceErrorKind};

/// Where a session runs Redis when `CELERITY_REDIS_ENDPOINT` does not say.
pub const DEFAULT_ENDPOINT: &str = "redis://localhost:6379";

/// How long connecting, and then each answer, may take.
#[cfg(messaging)]
const TIMEOUT: Duration = Duration::from_secs(5);

/// The connection to a session's Redis.
#[cfg(messaging)]
pub(crate) struct SessionRedis {
    endpoint: String,
    connection: OnceCell<ConnectionManager>,
}

#[cfg(messaging)]
impl SessionRedis {
    /// The connection to the Redis at `endpoint` (the default one for
    /// `None`), made on first use. One per handle, shared by its clones: a
    /// connection's driver runs on the tokio runtime that made it, so one
    /// shared by the whole process would end with the first runtime that
    /// used it (a test's, say).
    pub(crate) fn at(endpoint: Option<&str>) -> Arc<SessionRedis> {
        let endpoint = endpoint.unwrap_or(DEFAULT_ENDPOINT).to_string();
        Arc::new(SessionRedis { endpoint, connection: OnceCell::new() })
    }

    /// The connection, made on the first call. A failure to connect is
    /// tried again on the next call; once made, the connection reconnects
    /// by itself.
    pub(crate) async fn connection(&self) -> Result<ConnectionManager, Fault> {
        // Every send after the first finds the connection made; the boxed
        // first-use future keeps the connecting code out of each send's
        // future.
        if let Some(connection) = self.connection.get() {
            return Ok(connection.clone());
        }
        self.connect().await
    }

    fn connect(&self) -> crate::future::BoxFuture<'_, Result<ConnectionManager, Fault>> {
        Box::pin(async move {
            let connection = self
                .connection
                .get_or_try_init(|| async {
                    let client = redis::Client::open(self.endpoint.as_str()).map_err(|error| {
                        Fault::new(
                            ResourceErrorKind::Config,
                            None,
                            format!(
                                "CELERITY_REDIS_ENDPOINT is not a Redis URL ({}): {error}",
                                super::shown::shown(&self.endpoint)
                            ),
                        )
                    })?;
                    let config = ConnectionManagerConfig::new()
                        .set_connection_timeout(Some(TIMEOUT))
                        .set_response_timeout(Some(TIMEOUT))
                        .set_number_of_retries(1);
                    ConnectionManager::new_with_config(client, config).await.map_err(|error| self.fault(&error))
                })
                .await?;
            Ok(connection.clone())
        })
    }

    /// Runs `command`: its answer, or the failure.
    pub(crate) async fn query<T: redis::FromRedisValue>(&self, command: &redis::Cmd) -> Result<T, Fault> {
        let mut connection = self.connection().await?;
        command.query_async(&mut connection).await.map_err(|error| self.fault(&error))
    }

    /// Runs `commands` as one pipeline, in one round trip: their answers,
    /// in order, or the failure of the first that failed.
    pub(crate) async fn query_all<T: redis::FromRedisValue>(
        &self,
        commands: impl IntoIterator<Item = redis::Cmd>,
    ) -> Result<Vec<T>, Fault> {
        let mut connection = self.connection().await?;
        let mut pipeline = redis::pipe();
        for command in commands {
            pipeline.add_command(command);
        }
        pipeline.query_async(&mut connection).await.map_err(|error| self.fault(&error))
    }

    /// A Redis error as a failure of this session's Redis: unreachable
    /// when the connection failed or timed out, refused with Redis's code
    /// (`WRONGTYPE`) when Redis answered with an error.
    pub(crate) fn fault(&self, error: &redis::RedisError) -> Fault {
        if error.is_io_error() || error.is_timeout() || error.is_connection_refusal() || error.is_connection_dropped() {
            Fault::unreachable(format!(
                "the session's Redis at {} cannot be reached: {error}",
                super::shown::shown(&self.endpoint)
            ))
        } else {
            Fault::new(ResourceErrorKind::Refused, error.code(), format!("the session's Redis refused it: {error}"))
        }
    }
}
