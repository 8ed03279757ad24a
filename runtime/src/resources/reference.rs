//! Finding a resource: its link, then what the deployment recorded for it.

use std::any::{Any, TypeId};
use std::fmt;
use std::str::FromStr;

use super::{Link, Links, ResourceHandle, ResourceKind};
use crate::config::{ConfigError, ConfigErrorKind, Configuration, Deployment, RESOURCES_NAMESPACE};

/// The application's resources: its links, and the `resources` namespace
/// of its [`Configuration`]. Cloning is cheap.
#[derive(Clone)]
pub struct Resources {
    config: Configuration,
}

impl Resources {
    pub(crate) fn new(config: Configuration) -> Self {
        Resources { config }
    }

    /// The links, or why there are none.
    pub fn links(&self) -> Result<&Links, ConfigError> {
        self.config.links()
    }

    /// The resource `name`, which must be of `kind`.
    pub fn get(&self, kind: ResourceKind, name: &str) -> Result<ResourceRef, ConfigError> {
        self.find(kind, Some(name))
    }

    /// The application's one resource of `kind`.
    pub fn default_of(&self, kind: ResourceKind) -> Result<ResourceRef, ConfigError> {
        self.find(kind, None)
    }

    /// The resource `name` of `kind`, or the default one for `None`.
    pub fn find(&self, kind: ResourceKind, name: Option<&str>) -> Result<ResourceRef, ConfigError> {
        let link = self.link(kind, name)?.clone();
        Ok(ResourceRef { link, config: self.config.clone() })
    }

    fn link(&self, kind: ResourceKind, name: Option<&str>) -> Result<&Link, ConfigError> {
        let links = self.links()?;
        match name {
            Some(name) => links.find(kind, name),
            None => links.only(kind),
        }
    }

    /// The handle of type `H` on the resource `name` (the default one of
    /// its kind for `None`). One handle per resource and type is made, and
    /// every later call gets a clone of it, so that handles share their
    /// connections.
    pub fn handle<H: ResourceHandle>(&self, name: Option<&str>) -> Result<H, ConfigError> {
        let link = self.link(H::kind(), name)?;
        let mut handles = self.config.handles();
        // Looked for by the borrowed name, as handlers take their handles
        // on every event: nothing is cloned or hashed until one is made.
        let existing = handles
            .iter()
            .find(|((type_id, name), _)| *type_id == TypeId::of::<H>() && *name == link.name)
            .and_then(|(_, handle)| handle.downcast_ref::<H>());
        if let Some(existing) = existing {
            return Ok(existing.clone());
        }
        let handle = H::from_resource(ResourceRef { link: link.clone(), config: self.config.clone() });
        handles.insert((TypeId::of::<H>(), link.name.clone()), Box::new(handle.clone()) as Box<dyn Any + Send + Sync>);
        Ok(handle)
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let links: Vec<String> = match self.links() {
            Ok(links) => links.iter().map(|link| format!("{} ({})", link.name, link.kind)).collect(),
            Err(_) => Vec::new(),
        };
        f.debug_struct("Resources").field("links", &links).finish()
    }
}

/// One linked resource: its name, kind and key, and what the deployment
/// recorded for it in the `resources` namespace, read when asked for.
#[derive(Clone)]
pub struct ResourceRef {
    link: Link,
    config: Configuration,
}

impl ResourceRef {
    /// The blueprint resource's name.
    pub fn name(&self) -> &str {
        &self.link.name
    }

    /// Its kind.
    pub fn kind(&self) -> &ResourceKind {
        &self.link.kind
    }

    /// The key of the `resources` namespace holding its identifier.
    pub fn config_key(&self) -> &str {
        &self.link.config_key
    }

    /// How the application is deployed, which picks the resource's backend.
    pub fn deployment(&self) -> &Deployment {
        self.config.deployment()
    }

    /// The application's configuration.
    pub fn configuration(&self) -> &Configuration {
        &self.config
    }

    /// The deployed identifier: a table or bucket name, a queue URL, a
    /// topic ARN.
    pub async fn identifier(&self) -> Result<String, ConfigError> {
        self.setting("").await?.ok_or_else(|| {
            ConfigError::new(
                ConfigErrorKind::MissingKey,
                format!(
                    "the deployment recorded no identifier for the {} `{}` (the key `{}` of the `{RESOURCES_NAMESPACE}` \
                     config namespace)",
                    self.link.kind, self.link.name, self.link.config_key
                ),
            )
        })
    }

    /// A connection setting the deployment recorded, `<key><suffix>` in
    /// the `resources` namespace (`suffix` such as `_host`). Empty counts
    /// as absent.
    pub async fn setting(&self, suffix: &str) -> Result<Option<String>, ConfigError> {
        let namespace = self.config.namespace(RESOURCES_NAMESPACE).map_err(|error| {
            ConfigError::new(
                error.kind(),
                format!(
                    "the {} `{}` cannot be resolved: the deployment describes no `{RESOURCES_NAMESPACE}` config store \
                     (CELERITY_CONFIG_RESOURCES_STORE_ID)",
                    self.link.kind, self.link.name
                ),
            )
        })?;
        let key = format!("{}{suffix}", self.link.config_key);
        Ok(namespace.get(&key).await?.filter(|value| !value.is_empty()))
    }

    /// A setting the resource cannot be reached without: absent is an error
    /// naming the resource and the setting.
    pub async fn required_setting(&self, suffix: &str) -> Result<String, ConfigError> {
        self.setting(suffix).await?.ok_or_else(|| {
            ConfigError::new(
                ConfigErrorKind::MissingKey,
                format!(
                    "the deployment recorded no `{suffix}` for the {} `{}` (the key `{}{suffix}` of the \
                     `{RESOURCES_NAMESPACE}` config namespace), which is needed to reach it",
                    self.link.kind, self.link.name, self.link.config_key
                ),
            )
        })
    }

    /// A number setting, or `fallback` when absent; a value that is not a
    /// number of that type is an error naming the resource and the setting.
    pub async fn number_setting<T: FromStr>(&self, suffix: &str, fallback: T) -> Result<T, ConfigError> {
        match self.setting(suffix).await? {
            None => Ok(fallback),
            Some(value) => value.trim().parse().map_err(|_| {
                ConfigError::new(
                    ConfigErrorKind::Malformed,
                    format!(
                        "the `{suffix}` recorded for the {} `{}` is not a number of the kind it must be ({})",
                        self.link.kind,
                        self.link.name,
                        std::any::type_name::<T>()
                    ),
                )
            }),
        }
    }

    /// A flag setting: on unless the deployment wrote exactly `false`, as
    /// every Celerity SDK reads it; `fallback` when absent.
    pub async fn flag_setting(&self, suffix: &str, fallback: bool) -> Result<bool, ConfigError> {
        Ok(self.setting(suffix).await?.map_or(fallback, |value| value != "false"))
    }
}

impl fmt::Debug for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceRef")
            .field("name", &self.link.name)
            .field("kind", &self.link.kind)
            .field("config_key", &self.link.config_key)
            .finish()
    }
}
