//! What an application checks of its configuration and resources before it
//! serves: every resource a handler takes is linked, and every typed
//! configuration a handler takes binds.

use super::Configuration;
use crate::error::Error;
use crate::registry::Registration;

/// Checks the handlers' resources against the links and binds their typed
/// configuration, so that a missing resource or a value that does not fit
/// stops the application at its start, naming the handler.
pub(crate) async fn prepare(config: &Configuration, registrations: &[Registration]) -> Result<(), Error> {
    let resources = config.resources();
    for registration in registrations {
        for (kind, name) in &registration.needs.resources {
            resources.find(kind.clone(), *name).map_err(|error| {
                Error::typed(
                    "ResourceError",
                    format!("the handler {} takes a resource that cannot be found: {error}", registration.origin),
                )
            })?;
        }
    }
    let mut primed = Vec::new();
    for registration in registrations {
        for need in &registration.needs.configs {
            if primed.contains(&need.key) {
                continue;
            }
            (need.prime)(config).await.map_err(|error| {
                Error::typed(
                    "ConfigError",
                    format!(
                        "the handler {} takes Config<{}>, which cannot be bound: {error}",
                        registration.origin, need.type_name
                    ),
                )
            })?;
            primed.push(need.key);
        }
    }
    Ok(())
}
