//! Schedule events: a handler run when a schedule fires.
//!
//! A schedule handler's tag is `source::{scheduleId}::{handlerName}`, such as
//! `source::nightly::cleanup`. It takes arguments from the [`Trigger`]
//! ([`Schedule`]: the trigger, its input as `Json<T>` or `Bytes`, and
//! `Context`, `State<T>`, `WsSender`) and returns `()` or a `Result`. The runtime is
//! answered with an `Ack`: a success acknowledges the trigger, a failure
//! (carrying the error's message) leaves it to be delivered again by the
//! schedule's own rules. A panic is answered as an unhandled `HandlerError`,
//! which the runtime also treats as a failure.
//!
//! ```
//! use celerity::schedule::Trigger;
//! use celerity::{Json, Result};
//!
//! #[derive(serde::Deserialize)]
//! struct Cleanup { older_than_days: u32 }
//!
//! async fn cleanup(trigger: Trigger, Json(input): Json<Option<Cleanup>>) -> Result<()> {
//!     let days = input.map_or(30, |c| c.older_than_days);
//!     println!("{} fired ({}): removing what is older than {days} days", trigger.schedule_id(), trigger.schedule());
//!     Ok(())
//! }
//!
//! let app = celerity::App::new().schedule("source::nightly::cleanup", cleanup);
//! # drop(app);
//! ```

use bytes::Bytes;
use celerity_proto::v1::{self as pb, Ack, result::Outcome};
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::error::Error;
use crate::json::{Json, JsonError, decode_json_input};
use crate::pipeline::{FromEvent, IntoAnswer, kind_diagnostics, whole_event_kind};

/// How a JSON decoding error names the input.
pub(crate) const INPUT: &str = "the schedule's input";

/// A schedule firing, as the runtime delivered it.
///
/// ```
/// use celerity::schedule::Trigger;
///
/// #[derive(serde::Deserialize)]
/// struct Cleanup { limit: u32 }
///
/// let trigger = Trigger::new("nightly", "rate(1 day)").with_input(r#"{"limit": 10}"#);
/// let input: Cleanup = trigger.input().unwrap();
/// assert_eq!(input.limit, 10);
/// // No input at all reads as `null`:
/// assert_eq!(Trigger::new("nightly", "rate(1 day)").input::<Option<u32>>().unwrap(), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trigger {
    schedule_id: String,
    message_id: String,
    schedule: String,
    input: Bytes,
    vendor: Bytes,
}

impl Trigger {
    /// A trigger of schedule `schedule_id` with the expression `schedule`,
    /// for calling a handler directly in a test.
    pub fn new(schedule_id: impl Into<String>, schedule: impl Into<String>) -> Self {
        Trigger { schedule_id: schedule_id.into(), schedule: schedule.into(), ..Trigger::default() }
    }

    /// Sets the message id.
    pub fn with_message_id(mut self, id: impl Into<String>) -> Self {
        self.message_id = id.into();
        self
    }

    /// Sets the input.
    pub fn with_input(mut self, input: impl Into<Bytes>) -> Self {
        self.input = input.into();
        self
    }

    /// Sets the vendor data.
    pub fn with_vendor(mut self, vendor: impl Into<Bytes>) -> Self {
        self.vendor = vendor.into();
        self
    }

    /// The schedule's id, as the blueprint names it.
    pub fn schedule_id(&self) -> &str {
        &self.schedule_id
    }

    /// The id of this firing's message.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// The schedule expression, such as `rate(1 hour)` or a cron expression.
    pub fn schedule(&self) -> &str {
        &self.schedule
    }

    /// The input configured for the schedule, deserialized from JSON into
    /// `T`. An empty input reads as `null`, so `Option<T>` takes it.
    pub fn input<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        decode_json_input(&self.input, INPUT)
    }

    /// The input as the runtime sent it.
    pub fn raw_input(&self) -> &Bytes {
        &self.input
    }

    /// The source's own data about the firing, as the runtime sent it.
    pub fn vendor(&self) -> &Bytes {
        &self.vendor
    }

    /// The vendor data deserialized from JSON; empty reads as `null`.
    pub fn vendor_json<T: DeserializeOwned>(&self) -> Result<T, JsonError> {
        decode_json_input(&self.vendor, "the schedule's vendor data")
    }

    pub(crate) fn from_wire(trigger: pb::ScheduleTrigger) -> Self {
        Trigger {
            schedule_id: trigger.schedule_id,
            message_id: trigger.message_id,
            schedule: trigger.schedule,
            input: trigger.input,
            vendor: trigger.vendor,
        }
    }
}

impl From<pb::ScheduleTrigger> for Trigger {
    fn from(trigger: pb::ScheduleTrigger) -> Self {
        Trigger::from_wire(trigger)
    }
}

/// The trigger itself.
impl FromEvent<Schedule> for Trigger {
    fn from_event(trigger: &mut Trigger, _cx: &Context) -> Result<Self, Error> {
        Ok(trigger.clone())
    }

    fn from_event_owned(trigger: Trigger, _cx: &Context) -> Result<Self, Error> {
        Ok(trigger)
    }
}

/// The input, deserialized from JSON (an empty input reads as `null`).
impl<T: DeserializeOwned> FromEvent<Schedule> for Json<T> {
    fn from_event(trigger: &mut Trigger, _cx: &Context) -> Result<Self, Error> {
        Ok(Json(trigger.input()?))
    }
}

/// The raw input.
impl FromEvent<Schedule> for Bytes {
    fn from_event(trigger: &mut Trigger, _cx: &Context) -> Result<Self, Error> {
        Ok(trigger.input.clone())
    }
}

/// A success acknowledges the trigger.
///
/// ```
/// use celerity::proto::v1::{Ack, result::Outcome};
/// use celerity::schedule::Schedule;
/// use celerity::IntoAnswer;
/// assert_eq!(
///     IntoAnswer::<Schedule>::into_answer(()),
///     Outcome::Schedule(Ack { success: true, error_message: String::new() })
/// );
/// ```
impl IntoAnswer<Schedule> for () {
    fn into_answer(self) -> Outcome {
        Outcome::Schedule(Ack { success: true, error_message: String::new() })
    }
}

/// A success, or a failed `Ack` carrying the error's message, which leaves
/// the trigger to be delivered again.
impl<R: IntoAnswer<Schedule>, E: Into<Error>> IntoAnswer<Schedule> for Result<R, E> {
    fn into_answer(self) -> Outcome {
        match self {
            Ok(value) => value.into_answer(),
            Err(error) => failed(&error.into()),
        }
    }
}

fn failed(error: &Error) -> Outcome {
    Outcome::Schedule(Ack { success: false, error_message: error.message().to_string() })
}

whole_event_kind! {
    /// The schedule kind of event: a handler takes arguments from a
    /// [`Trigger`] and answers with an `Ack`, failed when it returns an error
    /// (or an argument cannot be taken).
    pub struct Schedule;
    serves: Schedule from Source::Schedule,
    event: Trigger = |wire| Ok(Trigger::from_wire(wire)),
    rejection: Error = |rejection: Error| failed(&rejection),
    answer: ::celerity_proto::v1::result::Outcome,
}

kind_diagnostics! {
    kind: Schedule,
    argument: ScheduleArgument {
        message: "`{Self}` cannot be an argument of a schedule handler",
        label: "not something a schedule handler can take",
        notes: [
            "a schedule handler takes: `Trigger`, `Json<T>` (the input), `Bytes` (the raw input), `Context`, `State<T>` and `WsSender`",
            "a type of your own can be one by implementing `celerity::FromEvent<celerity::schedule::Schedule>`",
        ],
    },
    answer: ScheduleAnswer {
        message: "`{Self}` cannot be returned from a schedule handler",
        label: "not a schedule handler's result",
        notes: [
            "a schedule handler returns: `()` or `Result<(), E>` where `E` is `celerity::Error` or any `std::error::Error`",
        ],
    },
    handler:
        /// An `async fn` usable as a schedule handler: every argument can be
        /// taken from a trigger ([`crate::FromEvent`]`<Schedule>`) and it
        /// returns `()` or a `Result`. The same as
        /// [`crate::Handler`]`<Schedule, Args>`, in the words of a schedule
        /// handler.
        ScheduleHandler {
        message: "`{Self}` is not a schedule handler",
        label: "not a schedule handler",
        notes: [
            "a schedule handler is an `async fn` whose arguments are schedule extractors (`Trigger`, `Json<T>`, `Bytes`, `Context`, `State<T>`) and that returns `()` or `Result<(), E>`",
        ],
    },
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use std::sync::Arc;

    use celerity_proto::v1::{Dispatch, dispatch::Source};
    use serde::Deserialize;

    use super::*;
    use crate::context::State;
    use crate::kind::HandlerKind;
    use crate::pipeline::Handler;
    use crate::pipeline::{dispatch_to, other_sources, serve_once};
    use crate::session::error_type;

    const TAG: &str = "source::nightly::cleanup";

    fn dispatch(source: Source) -> Dispatch {
        dispatch_to(TAG, source)
    }

    fn trigger(input: &'static str) -> Dispatch {
        dispatch(Source::Schedule(pb::ScheduleTrigger {
            schedule_id: "nightly".into(),
            message_id: "m-1".into(),
            schedule: "cron(0 3 * * ? *)".into(),
            input: Bytes::from_static(input.as_bytes()),
            vendor: Bytes::from_static(br#"{"region":"eu"}"#),
        }))
    }

    async fn run<Args: 'static>(handler: impl Handler<Schedule, Args>, dispatch: Dispatch) -> Outcome {
        let outcome = serve_once(handler, (), dispatch, Context::detached(TAG)).await;
        assert!(
            matches!(outcome, Outcome::Schedule(_) | Outcome::Error(_)),
            "a schedule handler answered with another shape: {outcome:?}"
        );
        outcome
    }

    fn ok() -> Outcome {
        Outcome::Schedule(Ack { success: true, error_message: String::new() })
    }

    fn failure(outcome: Outcome) -> String {
        match outcome {
            Outcome::Schedule(Ack { success: false, error_message }) => error_message,
            other => panic!("expected a failed Ack, got {other:?}"),
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Input {
        limit: u32,
    }

    #[tokio::test]
    async fn a_success_acknowledges_and_the_trigger_carries_everything() {
        let seen = Arc::new(Mutex::new(None));
        let keep = Arc::clone(&seen);
        let handler = move |trigger: Trigger| {
            let keep = Arc::clone(&keep);
            async move {
                *keep.lock().unwrap() = Some(trigger);
            }
        };
        assert_eq!(run(handler, trigger(r#"{"limit":5}"#)).await, ok());
        let trigger = seen.lock().unwrap().take().unwrap();
        assert_eq!(trigger.schedule_id(), "nightly");
        assert_eq!(trigger.message_id(), "m-1");
        assert_eq!(trigger.schedule(), "cron(0 3 * * ? *)");
        assert_eq!(trigger.input::<Input>().unwrap(), Input { limit: 5 });
        assert_eq!(trigger.raw_input(), &Bytes::from_static(br#"{"limit":5}"#));
        assert_eq!(trigger.vendor_json::<serde_json::Value>().unwrap()["region"], "eu");
    }

    #[tokio::test]
    async fn typed_input_beside_the_context() {
        async fn handler(cx: Context, Json(input): Json<Input>, raw: Bytes) -> Result<(), Error> {
            if cx.tag() == TAG && input.limit == 5 && raw.len() == 11 { Ok(()) } else { Err(Error::msg("no")) }
        }
        assert_eq!(run(handler, trigger(r#"{"limit":5}"#)).await, ok());
    }

    #[tokio::test]
    async fn an_empty_input_reads_as_null() {
        async fn handler(Json(input): Json<Option<Input>>) -> Result<(), Error> {
            if input.is_none() { Ok(()) } else { Err(Error::msg("an input")) }
        }
        assert_eq!(run(handler, trigger("")).await, ok());
    }

    #[tokio::test]
    async fn an_error_fails_the_ack_with_its_message() {
        async fn handler() -> Result<(), Error> {
            Err(Error::msg("the database is down"))
        }
        assert_eq!(failure(run(handler, trigger("")).await), "the database is down");
    }

    #[tokio::test]
    async fn input_that_does_not_fit_fails_naming_the_field() {
        async fn handler(_input: Json<Input>) {
            panic!("must not run");
        }
        let message = failure(run(handler, trigger(r#"{"limit":"many"}"#)).await);
        assert!(message.starts_with("the schedule's input does not fit at `limit`"), "{message}");
    }

    #[tokio::test]
    async fn missing_state_fails_the_ack() {
        async fn handler(_store: State<String>) {}
        assert!(failure(run(handler, trigger("")).await).contains("App::state"));
    }

    #[tokio::test]
    async fn another_source_is_a_wrong_source_error() {
        async fn handler() {}
        for source in other_sources(HandlerKind::Schedule) {
            match run(handler, dispatch(source)).await {
                Outcome::Error(error) => {
                    assert_eq!(error.r#type, error_type::WRONG_SOURCE);
                    assert!(error.message.contains("schedule"), "{}", error.message);
                }
                other => panic!("expected a wrong-source error, got {other:?}"),
            }
        }
    }
}
