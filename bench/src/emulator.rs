//! The AWS SDK's clients of the test kit's AWS API emulator, for setting up
//! and checking what the bucket and datastore cases use.

use celerity_testkit::servers::Moto;

/// The region the cases' bucket and table are in: the one the test kit
/// gives a process it points at the emulator (`Moto::environment`).
pub const REGION: &str = "eu-west-2";

/// The AWS SDK's configuration for the emulator: its endpoint, [`REGION`]
/// and test credentials, over rustls as the SDK's own.
pub async fn config(moto: &Moto) -> aws_config::SdkConfig {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(http)
        .endpoint_url(moto.endpoint())
        .region(aws_config::Region::new(REGION))
        .credentials_provider(aws_sdk_s3::config::Credentials::new("testing", "testing", None, None, "bench"))
        .load()
        .await
}

/// An S3 client of the emulator, with path-style addressing (the bucket in
/// the path, as an emulator on loopback takes it).
pub async fn s3(moto: &Moto) -> aws_sdk_s3::Client {
    let config = config(moto).await;
    aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(&config).force_path_style(true).build())
}

/// A DynamoDB client of the emulator.
pub async fn dynamodb(moto: &Moto) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&config(moto).await)
}

/// Makes `bucket` on the emulator, or finds it made.
pub async fn make_bucket(moto: &Moto, bucket: &str) -> Result<(), String> {
    use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};

    let location =
        CreateBucketConfiguration::builder().location_constraint(BucketLocationConstraint::from(REGION)).build();
    match s3(moto).await.create_bucket().bucket(bucket).create_bucket_configuration(location).send().await {
        Ok(_) => Ok(()),
        Err(error) if error.as_service_error().is_some_and(|e| e.is_bucket_already_owned_by_you()) => Ok(()),
        Err(error) => Err(format!("the emulator would not make the bucket {bucket}: {error:?}")),
    }
}
