//! Custom invocation events.

use bytes::Bytes;
use celerity_proto::v1::{CustomInvoke, Dispatch, dispatch::Source};

use super::envelope::{Envelope, envelope_setters};

/// Starts a custom invocation of handler `handler_name`; tag
/// `custom::{handler_name}` (override with `.tag()` to invoke, as the local
/// invoke endpoint can, a handler of another kind under its own tag).
pub fn custom(handler_name: impl Into<String>) -> CustomEvent {
    CustomEvent { envelope: Envelope::default(), handler_name: handler_name.into(), input: Bytes::new() }
}

/// Builds a Dispatch with a `CustomInvoke` source.
#[derive(Debug, Clone)]
#[must_use]
pub struct CustomEvent {
    envelope: Envelope,
    handler_name: String,
    input: Bytes,
}

impl CustomEvent {
    envelope_setters!();

    /// Sets the input bytes.
    pub fn input(mut self, input: impl Into<Bytes>) -> Self {
        self.input = input.into();
        self
    }

    /// The Dispatch.
    pub fn build(self) -> Dispatch {
        let tag = format!("custom::{}", self.handler_name);
        self.envelope
            .into_dispatch(tag, Source::Custom(CustomInvoke { handler_name: self.handler_name, input: self.input }))
    }
}

impl From<CustomEvent> for Dispatch {
    fn from(e: CustomEvent) -> Dispatch {
        e.build()
    }
}
