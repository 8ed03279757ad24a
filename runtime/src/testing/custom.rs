//! Building a custom invocation event.

use std::time::SystemTime;

use bytes::Bytes;
use celerity_proto::v1::{self as pb, dispatch::Source};
use serde::Serialize;

use super::envelope::{Envelope, envelope_setters};
use crate::custom::Invocation;

/// A custom invocation to call a handler with, built the way the runtime
/// would send it.
///
/// The handler name defaults to the one in the tag the invocation is sent to
/// (`custom::resizeImage` gives `resizeImage`).
///
/// ```
/// use celerity::testing::TestInvocation;
///
/// #[derive(serde::Serialize)]
/// struct Resize { width: u32 }
///
/// let wire = TestInvocation::json(&Resize { width: 100 }).into_wire(Some("custom::resizeImage"));
/// assert_eq!(wire.handler_name, "resizeImage");
/// assert_eq!(&wire.input[..], br#"{"width":100}"#);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TestInvocation {
    pub(super) envelope: Envelope,
    handler_name: Option<String>,
    input: Bytes,
}

impl TestInvocation {
    /// An invocation with `input`.
    pub fn new(input: impl Into<Bytes>) -> Self {
        TestInvocation { envelope: Envelope::default(), handler_name: None, input: input.into() }
    }

    /// An invocation with no input.
    pub fn empty() -> Self {
        TestInvocation::default()
    }

    /// An invocation whose input is `value` as JSON.
    ///
    /// # Panics
    ///
    /// When `value` cannot be serialized as JSON.
    pub fn json(value: &impl Serialize) -> Self {
        let input = serde_json::to_vec(value).unwrap_or_else(|error| panic!("the input is not serializable: {error}"));
        TestInvocation::new(input)
    }

    envelope_setters!();

    /// Sets the input.
    pub fn input(mut self, input: impl Into<Bytes>) -> Self {
        self.input = input.into();
        self
    }

    /// Sets the name the handler is invoked by.
    pub fn handler_name(mut self, name: impl Into<String>) -> Self {
        self.handler_name = Some(name.into());
        self
    }

    /// The tag of a dispatch that is built: `custom::{handlerName}` (the
    /// name defaulting to `handler`).
    pub(crate) fn default_tag(&self) -> String {
        format!("custom::{}", self.handler_name.as_deref().filter(|name| !name.is_empty()).unwrap_or("handler"))
    }

    /// The whole `Dispatch`, for the tag set with `tag` (by default
    /// `custom::{handlerName}`; another kind's tag invokes that handler, as
    /// the runtime's local invoke endpoint can).
    pub fn build(mut self) -> pb::Dispatch {
        let tag = self.envelope.tag().map_or_else(|| self.default_tag(), str::to_string);
        let envelope = std::mem::take(&mut self.envelope);
        let invoke = self.into_wire(Some(&tag));
        envelope.into_dispatch(tag, String::new(), SystemTime::now(), Some(Source::Custom(invoke)))
    }

    /// The invocation a wire invocation is, every field kept.
    pub(crate) fn from_wire(invoke: pb::CustomInvoke) -> Self {
        TestInvocation { envelope: Envelope::default(), handler_name: Some(invoke.handler_name), input: invoke.input }
    }

    /// The wire invocation, for the handler bound to `tag` (whose name is
    /// the default).
    pub fn into_wire(self, tag: Option<&str>) -> pb::CustomInvoke {
        let handler_name = self
            .handler_name
            .or_else(|| tag.map(|tag| tag.strip_prefix("custom::").unwrap_or(tag).to_string()))
            .unwrap_or_default();
        pb::CustomInvoke { handler_name, input: self.input }
    }
}

/// An invocation built with [`Invocation::new`]: every field is kept.
impl From<Invocation> for TestInvocation {
    fn from(invocation: Invocation) -> Self {
        TestInvocation {
            envelope: Envelope::default(),
            handler_name: Some(invocation.handler_name().to_string()),
            input: invocation.into_input(),
        }
    }
}

impl From<TestInvocation> for pb::Dispatch {
    fn from(invocation: TestInvocation) -> Self {
        invocation.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_comes_from_the_tag_unless_set() {
        assert_eq!(TestInvocation::empty().into_wire(Some("custom::resize")).handler_name, "resize");
        assert_eq!(TestInvocation::empty().into_wire(Some("resizeImage")).handler_name, "resizeImage");
        let invocation = Invocation::new("mine", "in");
        assert_eq!(Invocation::from(TestInvocation::from(invocation.clone()).into_wire(Some("custom::x"))), invocation);
    }
}
