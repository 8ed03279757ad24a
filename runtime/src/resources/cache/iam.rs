//! ElastiCache on AWS: connection tokens signed with the application's own
//! credentials (IAM authentication), re-signed while connections are open.
//! A token is accepted for 15 minutes to open a connection, so every
//! connection the client opens signs a fresh one, and open ones
//! re-authenticate with a new one before the old lapses.

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use redis::RedisResult;
use redis::auth::{BasicAuth, StreamingCredentialsProvider};

use super::backend::Credentials as ConnectionCredentials;
use super::settings::CacheSettings;
use crate::resources::aws_auth::{ConnectRequest, RESIGN_EVERY, signed_now};
use crate::resources::error::{Fault, ResourceErrorKind};

/// The credentials of a cache reached with IAM authentication.
pub(super) fn credentials(settings: &CacheSettings) -> Result<ConnectionCredentials, Fault> {
    let Some(user) = settings.user.clone() else {
        return Err(Fault::new(
            ResourceErrorKind::Config,
            None,
            "the cache is reached with IAM authentication, which signs a token for one user, and the deployment \
             recorded no `_user`",
        ));
    };
    let signer = Signer { host: settings.host.clone(), user, region: settings.region.clone() };
    Ok(ConnectionCredentials::Streaming(Arc::new(signer)))
}

/// Signs tokens for one user of one cache.
struct Signer {
    host: String,
    user: String,
    region: Option<String>,
}

impl StreamingCredentialsProvider for Signer {
    fn subscribe(&self) -> Pin<Box<dyn Stream<Item = RedisResult<BasicAuth>> + Send + 'static>> {
        let (host, user, region) = (self.host.clone(), self.user.clone(), self.region.clone());
        Box::pin(futures_util::stream::unfold(true, move |first| {
            let (host, user, region) = (host.clone(), user.clone(), region.clone());
            async move {
                if !first {
                    tokio::time::sleep(RESIGN_EVERY).await;
                }
                let query = query(&user);
                let request = ConnectRequest { service: "elasticache", endpoint: &host, query: &query };
                let signed = signed_now(&request, region.as_deref()).await.map_err(|message| {
                    redis::RedisError::from((redis::ErrorKind::AuthenticationFailed, "IAM token", message))
                });
                Some((signed.map(|token| BasicAuth::new(user, token)), false))
            }
        }))
    }
}

/// The query of an ElastiCache connect request for `user`: the cache names
/// the user `User` (RDS names it `DBUser`), and takes no port.
fn query(user: &str) -> String {
    let user: String = form_urlencoded::byte_serialize(user.as_bytes()).collect();
    format!("Action=connect&User={user}")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use aws_credential_types::Credentials;

    use super::*;
    use crate::resources::aws_auth::presigned;

    #[test]
    fn a_token_is_a_presigned_connect_request_without_its_scheme() {
        let credentials =
            Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None, None, "test");
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let host = "orders-cache.abc123.euw2.cache.amazonaws.com";
        let query = query("app user");
        let request = ConnectRequest { service: "elasticache", endpoint: host, query: &query };
        let signed = presigned(&request, "eu-west-2", &credentials, time).unwrap();
        assert!(
            signed.starts_with("orders-cache.abc123.euw2.cache.amazonaws.com/?Action=connect&User=app+user&"),
            "{signed}"
        );
        for part in [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "X-Amz-Credential=AKIDEXAMPLE%2F20260101%2Feu-west-2%2Felasticache%2Faws4_request",
            "X-Amz-Date=20260101T000000Z",
            "X-Amz-Expires=900",
            "X-Amz-SignedHeaders=host",
            "X-Amz-Signature=",
        ] {
            assert!(signed.contains(part), "{part} is missing from {signed}");
        }
        // The same request signed at the same time is the same token; a
        // moment later it is another.
        assert_eq!(presigned(&request, "eu-west-2", &credentials, time).unwrap(), signed);
        let later = presigned(&request, "eu-west-2", &credentials, time + Duration::from_secs(1));
        assert_ne!(later.unwrap(), signed);
    }
}
