//! ElastiCache on AWS: connection tokens signed with the application's own
//! credentials (IAM authentication), and passwords held in Secrets Manager.
//!
//! ElastiCache has no call that issues a token. A token is a request to
//! connect, presigned with SigV4 for the `elasticache` service, which the
//! cache checks against IAM; what is sent as the password is that URL
//! without its scheme. A token is accepted for 15 minutes to open a
//! connection, so every connection the client opens signs a fresh one.

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign};
use aws_sigv4::sign::v4;
use futures_util::Stream;
use redis::RedisResult;
use redis::auth::{BasicAuth, StreamingCredentialsProvider};

use super::backend::Credentials as ConnectionCredentials;
use super::settings::CacheSettings;
use crate::aws::{describe_error, sdk_config};
use crate::resources::error::{Fault, ResourceErrorKind};

/// How long ElastiCache accepts a token for: its own limit.
const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// How often a new token is signed for the connections already open, to
/// re-authenticate with: well within the lifetime.
const RESIGN_EVERY: Duration = Duration::from_secs(10 * 60);

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

/// The password held in the Secrets Manager secret `id`.
pub(super) async fn secret(id: &str) -> Result<String, Fault> {
    let client = aws_sdk_secretsmanager::Client::new(sdk_config().await);
    let output = client.get_secret_value().secret_id(id).send().await.map_err(|error| {
        Fault::new(
            ResourceErrorKind::Config,
            None,
            format!("the cache's password could not be read from the secret {id:?}: {}", describe_error(&error)),
        )
    })?;
    output.secret_string().map(str::to_string).ok_or_else(|| {
        Fault::new(ResourceErrorKind::Config, None, format!("the secret {id:?} holding the cache's password is empty"))
    })
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
                let signed = signed_now(&host, &user, region.as_deref()).await.map_err(|message| {
                    redis::RedisError::from((redis::ErrorKind::AuthenticationFailed, "IAM token", message))
                });
                Some((signed.map(|token| BasicAuth::new(user, token)), false))
            }
        }))
    }
}

/// A token signed now with the application's credentials.
async fn signed_now(host: &str, user: &str, region: Option<&str>) -> Result<String, String> {
    let config = sdk_config().await;
    let region = match region {
        Some(region) => region.to_string(),
        None => config.region().map(|region| region.to_string()).ok_or_else(|| {
            format!(
                "signing a connection token for {host} needs its region, and neither its `_region` nor the AWS \
                 configuration gives one"
            )
        })?,
    };
    let provider = config
        .credentials_provider()
        .ok_or_else(|| format!("signing a connection token for {host} needs AWS credentials, and there are none"))?;
    let credentials = provider
        .provide_credentials()
        .await
        .map_err(|error| format!("signing a connection token for {host}: {error}"))?;
    token(host, user, &region, &credentials, SystemTime::now())
}

/// The token for `user` of the cache at `host`, signed at `time`.
fn token(host: &str, user: &str, region: &str, credentials: &Credentials, time: SystemTime) -> Result<String, String> {
    let failed = |error: &dyn std::fmt::Display| format!("signing a connection token for {host}: {error}");
    let user_query: String = form_urlencoded::byte_serialize(user.as_bytes()).collect();
    let url = format!("http://{host}/?Action=connect&User={user_query}");
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(TOKEN_LIFETIME);
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("elasticache")
        .time(time)
        .settings(settings)
        .build()
        .map_err(|error| failed(&error))?
        .into();
    let signable = SignableRequest::new("GET", &url, std::iter::empty(), SignableBody::Bytes(&[]))
        .map_err(|error| failed(&error))?;
    let (instructions, _) = sign(signable, &params).map_err(|error| failed(&error))?.into_parts();
    let mut request = http::Request::get(&url).body(()).map_err(|error| failed(&error))?;
    instructions.apply_to_request_http1x(&mut request);
    let signed = request.uri().to_string();
    Ok(signed.strip_prefix("http://").unwrap_or(&signed).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_a_presigned_connect_request_without_its_scheme() {
        let credentials =
            Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None, None, "test");
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let signed =
            token("orders-cache.abc123.euw2.cache.amazonaws.com", "app user", "eu-west-2", &credentials, time).unwrap();
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
        let again = token("orders-cache.abc123.euw2.cache.amazonaws.com", "app user", "eu-west-2", &credentials, time);
        assert_eq!(again.unwrap(), signed);
        let later = token(
            "orders-cache.abc123.euw2.cache.amazonaws.com",
            "app user",
            "eu-west-2",
            &credentials,
            time + Duration::from_secs(1),
        );
        assert_ne!(later.unwrap(), signed);
    }
}
