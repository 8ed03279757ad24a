//! How a cache or a SQL database checks who connects (`_authMode`).

use super::ResourceRef;
use super::error::{Fault, ResourceErrorKind};

/// How a cache or a SQL database checks who connects, as the deployment
/// recorded it (`<key>_authMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthMode {
    /// A password the deployment recorded or holds in the platform's secret
    /// store, or none at all (`password`, and where nothing was recorded).
    Password,
    /// The platform's own identity (`iam`): on AWS, a connection token
    /// signed with the application's credentials for each connection.
    Iam,
}

impl AuthMode {
    /// What the deployment recorded for `resource`: `password` where
    /// nothing was; anything else is an error naming the setting.
    pub(crate) async fn read(resource: &ResourceRef) -> Result<AuthMode, Fault> {
        match resource.setting("_authMode").await?.as_deref() {
            None | Some("password") => Ok(AuthMode::Password),
            Some("iam") => Ok(AuthMode::Iam),
            Some(other) => Err(Fault::new(
                ResourceErrorKind::Config,
                None,
                format!(
                    "the deployment recorded the `_authMode` {other:?} for the {} `{}`, which takes `password` or \
                     `iam`",
                    resource.kind(),
                    resource.name()
                ),
            )),
        }
    }
}
