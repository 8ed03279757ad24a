//! What ElastiCache and RDS take in place of a password on AWS: a
//! connection token signed with the application's own credentials (IAM
//! authentication), or a password held in Secrets Manager.
//!
//! Neither service has a call that issues a token. A token is a request to
//! connect, presigned with SigV4 for the service (`elasticache`,
//! `rds-db`), which the server checks against IAM; what is sent as the
//! password is that URL without its scheme. Both accept a token for 15
//! minutes to open a connection.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign};
use aws_sigv4::sign::v4;

use super::error::{Fault, ResourceErrorKind};
use crate::aws::{describe_error, sdk_config};

/// How long a token is accepted for: the services' own limit.
pub(crate) const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// How often a new token is signed for the connections yet to be opened:
/// well within the lifetime.
pub(crate) const RESIGN_EVERY: Duration = Duration::from_secs(10 * 60);

/// A request to connect to one server as one user, to be signed.
pub(crate) struct ConnectRequest<'a> {
    /// The signing name of the service: `elasticache`, `rds-db`.
    pub(crate) service: &'static str,
    /// The server as the token names it: `host`, or `host:port`.
    pub(crate) endpoint: &'a str,
    /// The query naming the user: `Action=connect&User=...` or
    /// `Action=connect&DBUser=...`, its values already encoded.
    pub(crate) query: &'a str,
}

/// The token for `request`, signed now with the application's credentials,
/// in `region` (the AWS configuration's where `None`).
pub(crate) async fn signed_now(request: &ConnectRequest<'_>, region: Option<&str>) -> Result<String, String> {
    let config = sdk_config().await;
    let endpoint = request.endpoint;
    let region = match region {
        Some(region) => region.to_string(),
        None => config.region().map(|region| region.to_string()).ok_or_else(|| {
            format!(
                "signing a connection token for {endpoint} needs its region, and neither its `_region` nor the AWS \
                 configuration gives one"
            )
        })?,
    };
    let provider = config.credentials_provider().ok_or_else(|| {
        format!("signing a connection token for {endpoint} needs AWS credentials, and there are none")
    })?;
    let credentials = provider
        .provide_credentials()
        .await
        .map_err(|error| format!("signing a connection token for {endpoint}: {error}"))?;
    presigned(request, &region, &credentials, SystemTime::now())
}

/// The token for `request`, signed at `time`.
pub(crate) fn presigned(
    request: &ConnectRequest<'_>,
    region: &str,
    credentials: &Credentials,
    time: SystemTime,
) -> Result<String, String> {
    let failed =
        |error: &dyn std::fmt::Display| format!("signing a connection token for {}: {error}", request.endpoint);
    let url = format!("https://{}/?{}", request.endpoint, request.query);
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(TOKEN_LIFETIME);
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(request.service)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|error| failed(&error))?
        .into();
    let signable = SignableRequest::new("GET", &url, std::iter::empty(), SignableBody::Bytes(&[]))
        .map_err(|error| failed(&error))?;
    let (instructions, _) = sign(signable, &params).map_err(|error| failed(&error))?.into_parts();
    let mut signed = http::Request::get(&url).body(()).map_err(|error| failed(&error))?;
    instructions.apply_to_request_http1x(&mut signed);
    let signed = signed.uri().to_string();
    Ok(signed.strip_prefix("https://").unwrap_or(&signed).to_string())
}

/// The text of the Secrets Manager secret `id`, which holds the password
/// of `what` ("the cache", "the SQL database `ordersDb`").
pub(crate) async fn secret(id: &str, what: &str) -> Result<String, Fault> {
    let client = aws_sdk_secretsmanager::Client::new(sdk_config().await);
    let output = client.get_secret_value().secret_id(id).send().await.map_err(|error| {
        Fault::new(
            ResourceErrorKind::Config,
            None,
            format!("the password of {what} could not be read from the secret {id:?}: {}", describe_error(&error)),
        )
    })?;
    output.secret_string().map(str::to_string).ok_or_else(|| {
        Fault::new(
            ResourceErrorKind::Config,
            None,
            format!("the secret {id:?} holding the password of {what} is empty"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector of the AWS SDK for Rust's RDS token generator
    /// (`aws-sdk-rds`, `signing_works`): the same token, byte for byte.
    #[test]
    fn an_rds_token_is_the_aws_sdks_to_the_byte() {
        let credentials = Credentials::new("akid", "secret", None, None, "test");
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_724_709_600);
        let endpoint = "prod-instance.us-east-1.rds.amazonaws.com:3306";
        let request = ConnectRequest { service: "rds-db", endpoint, query: "Action=connect&DBUser=peccy" };
        assert_eq!(
            presigned(&request, "us-east-1", &credentials, time).unwrap(),
            "prod-instance.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=peccy&X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=akid%2F20240826%2Fus-east-1%2Frds-db%2Faws4_request&X-Amz-Date=20240826T220000Z\
             &X-Amz-Expires=900&X-Amz-SignedHeaders=host\
             &X-Amz-Signature=dd0cba843009474347af724090233265628ace491ea17ce3eb3da098b983ad89"
        );
    }

    /// The vector of botocore's `generate_db_auth_token` test, which lists
    /// the same parameters in another order: the same parameters, and the
    /// same signature.
    #[test]
    fn an_rds_token_has_botocores_signature() {
        let credentials = Credentials::new("akid", "skid", None, None, "test");
        // 2016-11-07T17:39:33Z.
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_478_540_373);
        let endpoint = "prod-instance.us-east-1.rds.amazonaws.com:3306";
        let request = ConnectRequest { service: "rds-db", endpoint, query: "Action=connect&DBUser=someusername" };
        let token = presigned(&request, "us-east-1", &credentials, time).unwrap();
        let (head, query) = token.split_once('?').unwrap();
        assert_eq!(head, "prod-instance.us-east-1.rds.amazonaws.com:3306/");
        let mut ours: Vec<&str> = query.split('&').collect();
        ours.sort_unstable();
        let mut expected = vec![
            "Action=connect",
            "DBUser=someusername",
            "X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "X-Amz-Date=20161107T173933Z",
            "X-Amz-SignedHeaders=host",
            "X-Amz-Expires=900",
            "X-Amz-Credential=akid%2F20161107%2Fus-east-1%2Frds-db%2Faws4_request",
            "X-Amz-Signature=d1138cdbc0ca63eec012ec0fc6c2267e03642168f5884a7795320d4c18374c61",
        ];
        expected.sort_unstable();
        assert_eq!(ours, expected);
    }
}
