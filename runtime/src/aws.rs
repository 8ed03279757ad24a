//! The AWS SDK's shared configuration: loaded once per process (region,
//! credentials, endpoint overrides such as `AWS_ENDPOINT_URL`), over an
//! HTTPS client of rustls with ring, so that no build needs cmake or a C
//! toolchain.

use aws_config::{BehaviorVersion, SdkConfig};
use aws_smithy_http_client::tls;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use tokio::sync::OnceCell;

static SDK_CONFIG: OnceCell<SdkConfig> = OnceCell::const_new();

/// The process's AWS configuration, loaded on first use.
pub(crate) async fn sdk_config() -> &'static SdkConfig {
    SDK_CONFIG
        .get_or_init(|| async {
            let http = aws_smithy_http_client::Builder::new()
                .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring))
                .build_https();
            aws_config::defaults(BehaviorVersion::latest()).http_client(http).load().await
        })
        .await
}

/// An AWS SDK error as a sentence: the service's code and message where
/// the service answered (`ResourceNotFoundException: Secrets Manager can't
/// find the specified secret.`), else what kept the request from it (a
/// timeout, a connection refused), with its causes. Neither carries a value
/// of the request or the raw response.
pub(crate) fn describe_error<E>(error: &SdkError<E, HttpResponse>) -> String
where
    E: std::error::Error + ProvideErrorMetadata + 'static,
{
    let status = error.raw_response().map(|response| format!("HTTP {}: ", response.status().as_u16()));
    let status = status.unwrap_or_default();
    match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{status}{code}: {message}"),
        (Some(code), None) => format!("{status}{code}"),
        _ => {
            let mut text = format!("{status}{error}");
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}
