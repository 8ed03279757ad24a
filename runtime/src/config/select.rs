//! Which backend reads a store: chosen from its kind and the platform the
//! deployment is on, with the features this build has.

use std::sync::Arc;

use super::ConfigError;
use super::backend::{Backend, kinds};
use super::environment::Environment;
use super::platform::Platform;

/// The backend that reads a store of `kind` on `platform`, or why none can.
pub(crate) fn select(
    platform: Platform,
    kind: Option<&str>,
    env: &Environment,
) -> Result<Arc<dyn Backend>, ConfigError> {
    if kind == Some(kinds::FILE) {
        return Ok(Arc::new(super::backend::FileBackend));
    }
    let platform = match platform {
        // Nothing said: the AWS kinds say AWS, and a Valkey named says a
        // local session.
        Platform::Other if matches!(kind, Some(kinds::SECRETS_MANAGER | kinds::PARAMETER_STORE)) => Platform::Aws,
        Platform::Other if env.get("CELERITY_CONFIG_VALKEY_HOST").is_some() => Platform::Local,
        Platform::Other if env.get("AWS_LAMBDA_RUNTIME_API").is_some() => Platform::Aws,
        other => other,
    };
    match platform {
        Platform::Local => local(env),
        Platform::Aws => aws(kind, env),
        Platform::Gcp | Platform::Azure => Err(ConfigError::unsupported(format!(
            "configuration stores on {platform} are not supported: the SDK reads them on AWS and locally"
        ))),
        Platform::Other => Err(ConfigError::unsupported(
            "the deployment describes a configuration store but not the platform it is on: set CELERITY_PLATFORM \
             (aws or local), or CELERITY_CONFIG_STORE_KIND=file for a store held in a JSON file",
        )),
    }
}

#[cfg(feature = "redis")]
fn local(env: &Environment) -> Result<Arc<dyn Backend>, ConfigError> {
    Ok(Arc::new(super::local::ValkeyBackend::from_environment(env)))
}

#[cfg(not(feature = "redis"))]
fn local(_env: &Environment) -> Result<Arc<dyn Backend>, ConfigError> {
    Err(ConfigError::unsupported(
        "a local session keeps configuration in Valkey, which this build cannot read: enable celerity's `redis` \
         feature (or give the store as a file: CELERITY_CONFIG_STORE_KIND=file)",
    ))
}

#[cfg(feature = "aws")]
fn aws(kind: Option<&str>, env: &Environment) -> Result<Arc<dyn Backend>, ConfigError> {
    super::aws::backend(kind, env)
}

#[cfg(not(feature = "aws"))]
fn aws(kind: Option<&str>, _env: &Environment) -> Result<Arc<dyn Backend>, ConfigError> {
    Err(ConfigError::unsupported(format!(
        "the store is held in AWS ({}), which this build cannot read: enable celerity's `aws` feature",
        kind.unwrap_or(kinds::SECRETS_MANAGER)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigErrorKind;

    #[test]
    fn no_platform_and_no_kind_is_an_error_naming_the_variables() {
        let error = select(Platform::Other, None, &Environment::default()).err().unwrap();
        assert_eq!(error.kind(), ConfigErrorKind::Unsupported);
        assert!(error.message().contains("CELERITY_PLATFORM"), "{error}");
        let error = select(Platform::Gcp, None, &Environment::default()).err().unwrap();
        assert!(error.message().contains("gcp"), "{error}");
    }
}
