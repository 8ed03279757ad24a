//! The AWS SDK's shared configuration: loaded once per process (region,
//! credentials, endpoint overrides such as `AWS_ENDPOINT_URL`), over an
//! HTTPS client of rustls with ring, so that no build needs cmake or a C
//! toolchain.

use aws_config::{BehaviorVersion, SdkConfig};
use aws_smithy_http_client::tls;
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

/// An AWS SDK error with all it says (service, code, message), which names
/// no value of the request.
pub(crate) fn describe_error<E: std::error::Error>(error: &E) -> String {
    aws_smithy_types::error::display::DisplayErrorContext(error).to_string()
}
