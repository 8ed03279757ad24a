//! What a handler's arguments need before it can serve, checked when the
//! application starts rather than discovered on a request.

use std::any::TypeId;

use crate::config::ConfigNeed;
use crate::config::resource_kind::ResourceKind;
use crate::session::RouteCheck;

/// What a handler's arguments need: shared state the application must
/// provide, and what the handler's route must offer. Gathered from each
/// argument ([`super::FromEvent::needs`]) when the handler is registered,
/// and checked before the application connects (and before it prints its
/// manifest). Not a public API: an argument of your own needs nothing.
#[doc(hidden)]
#[derive(Debug, Default, Clone)]
pub struct Needs {
    pub(crate) states: Vec<StateNeed>,
    pub(crate) route: Vec<RouteCheck>,
    /// The type of an `Identity<T>` an argument takes, which a guard must
    /// give.
    pub(crate) identity: Option<&'static str>,
    /// The resources the handler takes, by kind and name (`None`: the
    /// default one of the kind), which the links must have.
    pub(crate) resources: Vec<(ResourceKind, Option<&'static str>)>,
    /// The typed configuration the handler takes, bound when the
    /// application starts.
    pub(crate) configs: Vec<ConfigNeed>,
}

/// A `State<T>` an argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StateNeed {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
}

impl Needs {
    /// The application must provide a `State<T>`.
    pub fn state<T: 'static>(&mut self) {
        let need = StateNeed { type_id: TypeId::of::<T>(), type_name: std::any::type_name::<T>() };
        if !self.states.contains(&need) {
            self.states.push(need);
        }
    }

    /// A guard must protect the handler, to give it an identity of type
    /// `type_name`.
    pub fn identity(&mut self, type_name: &'static str) {
        self.identity.get_or_insert(type_name);
    }

    /// The links must have the resource `name` of `kind` (the default one
    /// of the kind for `None`).
    pub fn resource(&mut self, kind: ResourceKind, name: Option<&'static str>) {
        if !self.resources.iter().any(|(k, n)| *k == kind && *n == name) {
            self.resources.push((kind, name));
        }
    }

    /// Typed configuration to bind when the application starts.
    pub(crate) fn config(&mut self, need: ConfigNeed) {
        if !self.configs.iter().any(|existing| existing.key == need.key) {
            self.configs.push(need);
        }
    }

    /// The handler's route must pass `check`.
    pub fn route(&mut self, check: fn(&[String]) -> Result<(), String>) {
        self.route.push(check);
    }
}
