//! Where the application runs, as the deployment says.

use std::fmt;

use super::environment::Environment;

/// The platform the application is deployed to, from `CELERITY_PLATFORM`
/// (any case). It picks the backend of each configuration store and of each
/// resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Platform {
    /// Amazon Web Services.
    Aws,
    /// Google Cloud.
    Gcp,
    /// Microsoft Azure.
    Azure,
    /// A local development session (`celerity dev`, `celerity-dev run`).
    Local,
    /// Anything else, or nothing said.
    Other,
}

impl Platform {
    /// The platform the process's environment names.
    ///
    /// ```
    /// use celerity::config::Platform;
    /// // Whatever the environment says; `Other` when it says nothing.
    /// let platform = Platform::current();
    /// # let _ = platform;
    /// ```
    pub fn current() -> Platform {
        Deployment::from_environment(&Environment::process()).platform
    }

    /// The name the deployment writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Aws => "aws",
            Platform::Gcp => "gcp",
            Platform::Azure => "azure",
            Platform::Local => "local",
            Platform::Other => "other",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the application is deployed: its platform, its deploy target, and
/// whether it runs under the long-running Celerity runtime or as functions
/// (which decides, for one, how large connection pools are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    /// `CELERITY_PLATFORM`.
    pub platform: Platform,
    /// `CELERITY_DEPLOY_TARGET`, such as `aws-serverless`, when set.
    pub deploy_target: Option<String>,
    /// Whether a long-running runtime serves the handlers: `CELERITY_RUNTIME`
    /// is set, or the process was started on the runtime's socket
    /// (`CELERITY_RUNTIME_SOCKET`), which only the long-running runtime
    /// gives. Otherwise functions, such as AWS Lambda.
    pub long_running: bool,
    /// Where a local session, or an emulator, serves what resources use.
    pub endpoints: Endpoints,
}

/// Where resources are served when not at their platform's own endpoints:
/// a local session's servers, or an emulator's. Each is read from its
/// variable; empty counts as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Endpoints {
    /// `CELERITY_REDIS_ENDPOINT`: the local session's Redis, which holds
    /// its queues and topics (`redis://localhost:6379` when unset).
    pub redis: Option<String>,
    /// `CELERITY_AWS_SQS_ENDPOINT`: SQS (else `AWS_ENDPOINT_URL`, as the
    /// AWS SDK reads it).
    pub sqs: Option<String>,
    /// `CELERITY_AWS_SNS_ENDPOINT`: SNS (else `AWS_ENDPOINT_URL`).
    pub sns: Option<String>,
    /// `CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`: the local session's SQL
    /// database, as a URL (`postgres://celerity:celerity@localhost:5432/celerity`
    /// when unset).
    pub sql: Option<String>,
    /// `CELERITY_AWS_S3_ENDPOINT`: an S3-compatible server for buckets
    /// (MinIO in a `celerity dev` session; else `AWS_ENDPOINT_URL`).
    pub s3: Option<String>,
    /// `CELERITY_AWS_DYNAMODB_ENDPOINT`: a DynamoDB API server for
    /// datastores (DynamoDB Local in a `celerity dev` session; else
    /// `AWS_ENDPOINT_URL`).
    pub dynamodb: Option<String>,
    /// `CELERITY_LOCAL_BUCKET_ACCESS_KEY`: the access key of a local
    /// session's S3-compatible server.
    pub bucket_access_key: Option<String>,
    /// `CELERITY_LOCAL_BUCKET_SECRET_KEY`: its secret key.
    pub bucket_secret_key: Option<String>,
    /// `CELERITY_LOCAL_BUCKET_DIR`: in a local session with no S3 endpoint,
    /// the folder that holds the buckets, one folder each (what
    /// `celerity-dev run` gives on a machine with no S3 server).
    pub bucket_dir: Option<String>,
    /// `CELERITY_LOCAL_DATASTORE_DIR`: in a local session with no DynamoDB
    /// endpoint, the folder that holds the datastores, one file each.
    pub datastore_dir: Option<String>,
}

impl Endpoints {
    pub(crate) fn from_environment(env: &Environment) -> Endpoints {
        let read = |name: &str| env.get(name).filter(|value| !value.is_empty()).map(str::to_string);
        Endpoints {
            redis: read("CELERITY_REDIS_ENDPOINT"),
            sqs: read("CELERITY_AWS_SQS_ENDPOINT"),
            sns: read("CELERITY_AWS_SNS_ENDPOINT"),
            sql: read("CELERITY_LOCAL_SQL_DATABASE_ENDPOINT"),
            s3: read("CELERITY_AWS_S3_ENDPOINT"),
            dynamodb: read("CELERITY_AWS_DYNAMODB_ENDPOINT"),
            bucket_access_key: read("CELERITY_LOCAL_BUCKET_ACCESS_KEY"),
            bucket_secret_key: read("CELERITY_LOCAL_BUCKET_SECRET_KEY"),
            bucket_dir: read("CELERITY_LOCAL_BUCKET_DIR"),
            datastore_dir: read("CELERITY_LOCAL_DATASTORE_DIR"),
        }
    }
}

impl Deployment {
    /// The deployment the process's environment describes.
    pub fn current() -> Deployment {
        Deployment::from_environment(&Environment::process())
    }

    pub(crate) fn from_environment(env: &Environment) -> Deployment {
        let platform = match env.get("CELERITY_PLATFORM").map(str::to_ascii_lowercase).as_deref() {
            Some("aws") => Platform::Aws,
            Some("gcp") => Platform::Gcp,
            Some("azure") => Platform::Azure,
            Some("local") => Platform::Local,
            _ => Platform::Other,
        };
        Deployment {
            platform,
            deploy_target: env.get("CELERITY_DEPLOY_TARGET").map(str::to_string),
            long_running: env.is_set("CELERITY_RUNTIME") || env.is_set("CELERITY_RUNTIME_SOCKET"),
            endpoints: Endpoints::from_environment(env),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_platform_is_read_in_any_case_and_anything_else_is_other() {
        let of = |value: &str| {
            Deployment::from_environment(&Environment::from_pairs([("CELERITY_PLATFORM", value)])).platform
        };
        assert_eq!(of("AWS"), Platform::Aws);
        assert_eq!(of("Local"), Platform::Local);
        assert_eq!(of("azure"), Platform::Azure);
        assert_eq!(of("digitalocean"), Platform::Other);
        assert_eq!(of(""), Platform::Other);
        assert_eq!(Deployment::from_environment(&Environment::default()).platform, Platform::Other);
    }

    #[test]
    fn a_runtime_set_even_empty_or_its_socket_is_long_running() {
        assert!(Deployment::from_environment(&Environment::from_pairs([("CELERITY_RUNTIME", "")])).long_running);
        let on_the_socket = Environment::from_pairs([("CELERITY_RUNTIME_SOCKET", "/run/celerity.sock")]);
        assert!(Deployment::from_environment(&on_the_socket).long_running);
        assert!(
            !Deployment::from_environment(&Environment::from_pairs([("AWS_LAMBDA_FUNCTION_NAME", "f")])).long_running
        );
        assert!(!Deployment::from_environment(&Environment::default()).long_running);
    }

    #[test]
    fn endpoints_are_read_and_empty_is_unset() {
        let env = Environment::from_pairs([
            ("CELERITY_REDIS_ENDPOINT", "redis://127.0.0.1:7001"),
            ("CELERITY_AWS_SQS_ENDPOINT", "http://127.0.0.1:5000"),
            ("CELERITY_AWS_SNS_ENDPOINT", ""),
        ]);
        let endpoints = Deployment::from_environment(&env).endpoints;
        assert_eq!(endpoints.redis.as_deref(), Some("redis://127.0.0.1:7001"));
        assert_eq!(endpoints.sqs.as_deref(), Some("http://127.0.0.1:5000"));
        assert_eq!(endpoints.sns, None);
    }
}
