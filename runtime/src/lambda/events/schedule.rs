//! A schedule's invocation as the runtime's `ScheduleTrigger`.
//!
//! An EventBridge rule on a schedule sends its event (`source`,
//! `detail-type`, `detail`), or, when the rule is given a constant input,
//! that input in its place. The trigger's input is the event's `detail`
//! where it carries one (an empty `{}`, what a plain schedule sends, is
//! none), or the whole payload when it is not an event; its id is the
//! event's, or the invocation's. The schedule id is the tag's
//! `source::{id}::` part. The event itself is the trigger's vendor data.

use bytes::Bytes;
use celerity_proto::v1::ScheduleTrigger;
use serde_json::Value;

use super::{Invocation, source_id};
use crate::lambda::form::{Form, detect};

pub(super) fn read(invocation: &Invocation<'_>) -> ScheduleTrigger {
    let schedule_id = source_id(invocation.tag).unwrap_or_default().to_string();
    let event = invocation.json.filter(|json| detect(Some(json)) == Form::Schedule);
    match event {
        Some(event) => {
            let detail = event.get("detail").unwrap_or(&Value::Null);
            let carried = !(detail.is_null() || detail.as_object().is_some_and(|detail| detail.is_empty()));
            let input =
                if carried { serde_json::to_vec(detail).map(Bytes::from).unwrap_or_default() } else { Bytes::new() };
            let id = event.get("id").and_then(Value::as_str);
            ScheduleTrigger {
                schedule_id,
                message_id: id.unwrap_or(invocation.request_id).to_string(),
                schedule: String::new(),
                input,
                vendor: invocation.raw.clone(),
            }
        }
        None => ScheduleTrigger {
            schedule_id,
            message_id: invocation.request_id.to_string(),
            schedule: String::new(),
            input: invocation.raw.clone(),
            vendor: Bytes::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn trigger(raw: &[u8]) -> ScheduleTrigger {
        let raw = Bytes::copy_from_slice(raw);
        let json: Option<Value> = serde_json::from_slice(&raw).ok();
        read(&Invocation {
            raw: &raw,
            json: json.as_ref(),
            tag: "source::nightly-cleanup::cleanupOrders",
            request_id: "lambda-9",
        })
    }

    #[test]
    fn a_scheduled_event_is_a_trigger_with_no_input() {
        let event = json!({
            "version": "0", "id": "ev-1", "detail-type": "Scheduled Event", "source": "aws.events",
            "account": "123456789012", "time": "2026-01-01T03:00:00Z", "region": "eu-west-1",
            "resources": ["arn:aws:events:eu-west-1:123456789012:rule/nightly-cleanup"], "detail": {}
        });
        let trigger = trigger(event.to_string().as_bytes());
        assert_eq!((trigger.schedule_id.as_str(), trigger.message_id.as_str()), ("nightly-cleanup", "ev-1"));
        assert!(trigger.input.is_empty());
        let vendor: Value = serde_json::from_slice(&trigger.vendor).unwrap();
        assert_eq!(vendor["resources"][0], "arn:aws:events:eu-west-1:123456789012:rule/nightly-cleanup");
    }

    #[test]
    fn the_input_is_the_detail_or_the_payload_in_the_events_place() {
        let event = json!({"id": "ev-2", "detail-type": "Scheduled Event", "source": "aws.scheduler",
                           "detail": {"olderThanSeconds": 60}});
        let carried = trigger(event.to_string().as_bytes());
        assert_eq!(serde_json::from_slice::<Value>(&carried.input).unwrap(), json!({"olderThanSeconds": 60}));
        let constant = trigger(br#"{"olderThanSeconds": 0}"#);
        assert_eq!(
            (constant.input.as_ref(), constant.message_id.as_str()),
            (&br#"{"olderThanSeconds": 0}"#[..], "lambda-9")
        );
        assert!(constant.vendor.is_empty());
        assert_eq!(trigger(b"not json").input.as_ref(), b"not json");
    }
}
