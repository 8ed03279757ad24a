//! Handles: what a handler takes to use a resource.

use super::{ResourceKind, ResourceRef};
use crate::config::{ConfigError, Configuration};
use crate::context::Context;
use crate::error::Error;

/// A handle on one resource of a kind: a queue, a bucket, a cache. Made
/// from the resource's [`ResourceRef`] without any I/O: a handle connects
/// on first use. Cloning is cheap, and clones share connections.
///
/// The handle type itself, taken as a handler's argument, is the
/// application's one resource of its kind; [`resource!`](crate::resource)
/// declares a type for a resource by name.
pub trait ResourceHandle: Clone + Send + Sync + 'static {
    /// The kind of resource this handle serves.
    fn kind() -> ResourceKind;

    /// The handle on `resource`, which is of [`ResourceHandle::kind`].
    fn from_resource(resource: ResourceRef) -> Self;
}

/// A handle on the blueprint resource named [`Named::NAME`], as
/// [`resource!`](crate::resource) declares it.
pub trait Named: Sized {
    /// The handle it wraps.
    type Handle: ResourceHandle;
    /// The blueprint resource's name.
    const NAME: &'static str;
    /// Wraps the handle.
    fn from_handle(handle: Self::Handle) -> Self;
}

/// The handle `H` on the resource `name` (the default one of its kind for
/// `None`) of the application the event belongs to, or an error that says
/// which resource is missing and why.
pub fn from_context<H: ResourceHandle>(cx: &Context, name: Option<&str>) -> Result<H, Error> {
    let config = cx.state::<Configuration>().ok_or_else(|| {
        Error::typed(
            "MissingConfiguration",
            "the handler takes a resource handle, but it runs outside an application: give the call a \
             Configuration (App::configuration)",
        )
    })?;
    config.resources().handle::<H>(name).map_err(|error: ConfigError| Error::typed("ResourceError", error))
}

/// Declares a handler argument for a blueprint resource by name: a type
/// that wraps the kind's handle (and derefs to it), takes it from the
/// application, and is checked when the application starts, so that a
/// resource the links do not have stops it with a message naming it.
///
/// ```
/// # use celerity::resources::{ResourceHandle, ResourceKind, ResourceRef};
/// # #[derive(Clone, Debug)]
/// # pub struct Queue(ResourceRef);
/// # impl ResourceHandle for Queue {
/// #     fn kind() -> ResourceKind { ResourceKind::Queue }
/// #     fn from_resource(resource: ResourceRef) -> Self { Queue(resource) }
/// # }
/// celerity::resource! {
///     /// The blueprint's `ordersQueue`.
///     pub OrdersQueue: Queue = "ordersQueue"
/// }
///
/// async fn place(orders: OrdersQueue) -> &'static str {
///     let _queue: &Queue = &orders;
///     "placed"
/// }
/// # let _ = celerity::App::new().http("POST::/orders", place);
/// ```
#[macro_export]
macro_rules! resource {
    ($(#[$meta:meta])* $vis:vis $name:ident : $handle:ty = $resource:literal $(;)?) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        $vis struct $name(pub $handle);

        impl ::std::ops::Deref for $name {
            type Target = $handle;
            fn deref(&self) -> &$handle {
                &self.0
            }
        }

        impl $crate::resources::Named for $name {
            type Handle = $handle;
            const NAME: &'static str = $resource;
            fn from_handle(handle: $handle) -> Self {
                $name(handle)
            }
        }

        impl<K: $crate::Kind> $crate::FromEvent<K> for $name {
            fn from_event(_event: &mut K::Event, cx: &$crate::Context) -> ::std::result::Result<Self, K::Rejection> {
                $crate::resources::from_context::<$handle>(cx, ::std::option::Option::Some($resource))
                    .map($name)
                    .map_err(K::Rejection::from)
            }

            fn needs(needs: &mut $crate::__private::Needs) {
                needs.resource(
                    <$handle as $crate::resources::ResourceHandle>::kind(),
                    ::std::option::Option::Some($resource),
                );
            }
        }
    };
}

/// Makes a handle type an argument of every kind, as the application's one
/// resource of its kind.
#[allow(unused_macros)]
macro_rules! default_handle_argument {
    ($handle:ty) => {
        impl<K: $crate::Kind> $crate::FromEvent<K> for $handle {
            fn from_event(_event: &mut K::Event, cx: &$crate::Context) -> ::std::result::Result<Self, K::Rejection> {
                $crate::resources::from_context::<$handle>(cx, None).map_err(K::Rejection::from)
            }

            fn needs(needs: &mut $crate::pipeline::Needs) {
                needs.resource(<$handle as $crate::resources::ResourceHandle>::kind(), None);
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use default_handle_argument;
