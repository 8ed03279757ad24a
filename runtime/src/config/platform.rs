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
    /// Whether `CELERITY_RUNTIME` is set: a long-running runtime serves
    /// the handlers. Unset means functions, such as AWS Lambda.
    pub long_running: bool,
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
            long_running: env.is_set("CELERITY_RUNTIME"),
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
    fn a_runtime_set_even_empty_is_long_running() {
        assert!(Deployment::from_environment(&Environment::from_pairs([("CELERITY_RUNTIME", "")])).long_running);
        assert!(!Deployment::from_environment(&Environment::default()).long_running);
    }
}
