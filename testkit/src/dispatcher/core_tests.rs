//! The dispatcher's rules, one by one, on a fake clock.

use super::*;
use celerity_proto::v1::{
    Ack, CreditGrant, Draining, HandlerConfig, HandlerLimit, ProtocolVersion, Ready, WsOutbound, WsSend,
    result::Outcome,
};

const T0: i64 = 1_000_000;

fn ready(tags: &[&str], credit: u32) -> Ready {
    Ready {
        handler_tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        initial_credit: credit,
        sdk_version: "test".into(),
        limits: Vec::new(),
        protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
    }
}

fn capped(mut r: Ready, tag: &str, cap: u32) -> Ready {
    r.limits.push(HandlerLimit { handler_tag: tag.into(), max_concurrent: cap });
    r
}

/// An event for `tag` with id `id` and a deadline `deadline_ms` after T0
/// (0: none).
fn event(id: &str, tag: &str, deadline_ms: i64) -> Dispatch {
    Dispatch {
        id: id.into(),
        handler_tag: tag.into(),
        deadline_unix_ms: if deadline_ms > 0 { T0 + deadline_ms } else { 0 },
        ..Default::default()
    }
}

fn result(id: &str, grant: u32) -> HandlerMessage {
    HandlerMessage {
        frame: Some(handler_message::Frame::Result(pb::Result {
            id: id.into(),
            credit_grant: grant,
            outcome: Some(Outcome::Schedule(Ack { success: true, error_message: String::new() })),
        })),
    }
}

fn grant(additional: u32) -> HandlerMessage {
    HandlerMessage { frame: Some(handler_message::Frame::Credit(CreditGrant { additional })) }
}

fn core() -> Core {
    Core::new(CoreConfig::default())
}

/// The ids dispatched (to any stream), in order, taking every action.
fn dispatched(core: &mut Core) -> Vec<(StreamId, String)> {
    sent(core)
        .into_iter()
        .filter_map(|(s, f)| match f {
            runtime_message::Frame::Dispatch(d) => Some((s, d.id)),
            _ => None,
        })
        .collect()
}

fn sent(core: &mut Core) -> Vec<(StreamId, runtime_message::Frame)> {
    core.take_actions()
        .into_iter()
        .filter_map(|a| match a {
            Action::Send { stream, frame } => Some((stream, frame)),
            _ => None,
        })
        .collect()
}

fn ids(list: &[(StreamId, String)]) -> Vec<&str> {
    list.iter().map(|(_, id)| id.as_str()).collect()
}

fn completions(actions: &[Action]) -> Vec<(String, EventOutcome)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Complete { id, outcome } => Some((id.clone(), outcome.clone())),
            _ => None,
        })
        .collect()
}

fn cancels(actions: &[Action]) -> Vec<(String, i32)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { frame: runtime_message::Frame::Cancel(c), .. } => Some((c.id.clone(), c.reason)),
            _ => None,
        })
        .collect()
}

#[test]
fn credit_window_bounds_work_in_flight_and_results_return_places() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 2)).unwrap();
    for i in 0..3 {
        c.submit(T0, event(&format!("e{i}"), "a", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["e0", "e1"]);
    assert_eq!(c.queued("a"), 1);
    c.on_frame(T0, s, result("e0", 1));
    let actions = c.take_actions();
    assert_eq!(completions(&actions)[0].0, "e0");
    assert!(matches!(completions(&actions)[0].1, EventOutcome::Result(_)));
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::Send { frame: runtime_message::Frame::Dispatch(d), .. } if d.id == "e2"))
    );
    assert_eq!(c.streams()[0].credit.in_flight, 2);
}

#[test]
fn credit_is_replenished_only_by_grants() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.submit(T0, event("e2", "a", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["e1"]);
    // A Result with grant 0 withholds: its place is not returned.
    c.on_frame(T0, s, result("e1", 0));
    assert!(dispatched(&mut c).is_empty());
    assert!(c.streams()[0].credit.withheld);
    // A CreditGrant ends the withhold and adds its places.
    c.on_frame(T0, s, grant(1));
    assert_eq!(ids(&dispatched(&mut c)), ["e2"]);
    // A grant of 2 on a result grows the window.
    c.on_frame(T0, s, result("e2", 2));
    assert_eq!(c.streams()[0].credit.window(), 2);
}

#[test]
fn per_tag_cap_stops_one_tag_taking_the_window() {
    let mut c = core();
    c.attach(T0, &capped(ready(&["slow", "fast"], 4), "slow", 1)).unwrap();
    for i in 0..3 {
        c.submit(T0, event(&format!("s{i}"), "slow", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["s0"]);
    c.submit(T0, event("f0", "fast", 0)).unwrap();
    c.submit(T0, event("f1", "fast", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["f0", "f1"]);
    assert_eq!(c.streams()[0].in_flight.get("slow"), Some(&1));
}

#[test]
fn places_are_kept_for_idle_tags_and_released_as_they_are_served() {
    // Three tags, window 4: the busy tag leaves one place for each idle tag,
    // within half the window.
    let mut c = core();
    c.attach(T0, &ready(&["a", "b", "c"], 4)).unwrap();
    for i in 0..4 {
        c.submit(T0, event(&format!("a{i}"), "a", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["a0", "a1"], "two places kept for b and c");
    // b is served from the reservation, which then keeps one for c only.
    c.submit(T0, event("b0", "b", 0)).unwrap();
    c.submit(T0, event("b1", "b", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["b0"]);
    // The last tag to arrive is not asked to leave room for busy ones.
    c.submit(T0, event("c0", "c", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["c0"]);
    assert_eq!(c.streams()[0].credit.available, 0);
}

#[test]
fn the_reservation_is_never_more_than_half_the_window() {
    let mut c = core();
    c.attach(T0, &ready(&["a", "b", "c", "d", "e"], 4)).unwrap();
    for i in 0..4 {
        c.submit(T0, event(&format!("a{i}"), "a", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["a0", "a1"], "4 idle tags, but only half of 4 kept back");

    let mut c = core();
    c.attach(T0, &ready(&["a", "b"], 1)).unwrap();
    c.submit(T0, event("a0", "a", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["a0"], "a window of 1 keeps nothing back");
}

#[test]
fn selection_is_round_robin_across_tag_queues() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["report", "health"], 1)).unwrap();
    for i in 0..5 {
        c.submit(T0, event(&format!("r{i}"), "report", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["r0"]);
    c.submit(T0, event("h0", "health", 0)).unwrap();
    assert!(dispatched(&mut c).is_empty());
    // The health check is offered the next place, not the fifth report.
    c.on_frame(T0, s, result("r0", 1));
    assert_eq!(ids(&dispatched(&mut c)), ["h0"]);
    c.on_frame(T0, s, result("h0", 1));
    assert_eq!(ids(&dispatched(&mut c)), ["r1"]);
}

#[test]
fn several_events_of_one_tag_run_together() {
    let mut c = core();
    c.attach(T0, &ready(&["a"], 8)).unwrap();
    for i in 0..5 {
        c.submit(T0, event(&format!("a{i}"), "a", 0)).unwrap();
    }
    assert_eq!(dispatched(&mut c).len(), 5);
}

#[test]
fn events_for_a_tag_spread_across_its_streams() {
    let mut c = core();
    let s1 = c.attach(T0, &ready(&["a"], 4)).unwrap();
    let s2 = c.attach(T0, &ready(&["a"], 4)).unwrap();
    for i in 0..4 {
        c.submit(T0, event(&format!("a{i}"), "a", 0)).unwrap();
    }
    let streams: Vec<StreamId> = dispatched(&mut c).into_iter().map(|(s, _)| s).collect();
    assert_eq!(streams, [s1, s2, s1, s2]);
}

#[test]
fn an_event_for_a_tag_nothing_serves_is_held_for_the_attach_grace() {
    let mut c = core();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.tick(T0 + 2_999);
    assert!(completions(&c.take_actions()).is_empty());
    // A stream attaching within the grace gets it.
    c.attach(T0 + 2_999, &ready(&["a"], 1)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["e1"]);

    let mut c = core();
    c.submit(T0, event("e2", "b", 0)).unwrap();
    assert_eq!(c.next_wakeup(), Some(T0 + 3_000));
    c.tick(T0 + 3_000);
    assert_eq!(completions(&c.take_actions()), [("e2".into(), EventOutcome::Shed(ShedReason::NoHandler))]);
}

#[test]
fn the_grace_starts_again_when_the_last_stream_of_a_tag_goes() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.submit(T0, event("e2", "a", 0)).unwrap();
    dispatched(&mut c);
    c.tick(T0 + 10_000);
    assert!(completions(&c.take_actions()).is_empty(), "a served tag's queue is not shed");
    c.stream_ended(T0 + 10_000, s);
    let actions = c.take_actions();
    assert_eq!(completions(&actions), [("e1".into(), EventOutcome::Abandoned(AbandonReason::StreamGone))]);
    c.tick(T0 + 12_999);
    assert!(completions(&c.take_actions()).is_empty());
    c.tick(T0 + 13_000);
    assert_eq!(completions(&c.take_actions()), [("e2".into(), EventOutcome::Shed(ShedReason::NoHandler))]);
}

#[test]
fn a_producer_waits_a_quarter_of_the_timeout_for_room() {
    let mut c = Core::new(CoreConfig { queue_capacity: 1, ..CoreConfig::default() });
    c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap(); // dispatched
    c.submit(T0, event("e2", "a", 0)).unwrap(); // queued
    c.submit(T0, event("e3", "a", 8_000)).unwrap(); // waits 2 s
    assert_eq!((c.queued("a"), c.waiting("a")), (1, 1));
    c.tick(T0 + 1_999);
    assert!(completions(&c.take_actions()).is_empty());
    c.tick(T0 + 2_000);
    let done = completions(&c.take_actions());
    assert_eq!(done, [("e3".into(), EventOutcome::Shed(ShedReason::QueueFull))]);
}

#[test]
fn the_producer_wait_is_never_more_than_five_seconds() {
    let mut c = Core::new(CoreConfig { queue_capacity: 1, ..CoreConfig::default() });
    c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.submit(T0, event("e2", "a", 0)).unwrap();
    // No deadline: the tag's timeout (60 s default) / 4 = 15 s, capped at 5 s.
    c.submit(T0, event("e3", "a", 0)).unwrap();
    c.tick(T0 + 4_999);
    assert!(completions(&c.take_actions()).is_empty());
    c.tick(T0 + 5_000);
    assert_eq!(completions(&c.take_actions()), [("e3".into(), EventOutcome::Shed(ShedReason::QueueFull))]);
}

#[test]
fn a_waiting_producer_gets_room_when_the_queue_moves() {
    let mut c = Core::new(CoreConfig { queue_capacity: 1, ..CoreConfig::default() });
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    for id in ["e1", "e2", "e3"] {
        c.submit(T0, event(id, "a", 0)).unwrap();
    }
    assert_eq!(ids(&dispatched(&mut c)), ["e1"]);
    c.on_frame(T0 + 100, s, result("e1", 1));
    assert_eq!(ids(&dispatched(&mut c)), ["e2"]);
    assert_eq!((c.queued("a"), c.waiting("a")), (1, 0));
    c.tick(T0 + 60_000 - 1);
    assert!(completions(&c.take_actions()).is_empty(), "admitted to the queue, it no longer gives up");
}

#[test]
fn the_handler_timeout_of_the_config_sets_the_wait() {
    let config = RuntimeConfig {
        handlers: vec![HandlerConfig { handler_tag: "a".into(), timeout_ms: 4_000, ..Default::default() }],
        ..Default::default()
    };
    let mut c = Core::new(CoreConfig { queue_capacity: 1, ..CoreConfig::from_runtime_config(&config) });
    c.attach(T0, &ready(&["a"], 1)).unwrap();
    for id in ["e1", "e2", "e3"] {
        c.submit(T0, event(id, "a", 0)).unwrap();
    }
    c.tick(T0 + 1_000);
    assert_eq!(completions(&c.take_actions()), [("e3".into(), EventOutcome::Shed(ShedReason::QueueFull))]);
}

#[test]
fn a_deadline_cancels_releases_the_caller_and_reclaims_after_five_seconds() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 1_000)).unwrap();
    c.submit(T0, event("e2", "a", 0)).unwrap();
    assert_eq!(ids(&dispatched(&mut c)), ["e1"]);
    c.tick(T0 + 1_000);
    let actions = c.take_actions();
    assert_eq!(completions(&actions), [("e1".into(), EventOutcome::Abandoned(AbandonReason::Deadline))]);
    assert_eq!(cancels(&actions), [("e1".into(), cancel::Reason::DeadlineExceeded as i32)]);
    // The place is still held for the answer...
    c.tick(T0 + 5_999);
    assert!(dispatched(&mut c).is_empty());
    assert_eq!(c.streams()[0].credit.in_flight, 1);
    // ... until 5 s after the Cancel, when the runtime takes it back itself.
    c.tick(T0 + 6_000);
    assert_eq!(ids(&dispatched(&mut c)), ["e2"]);
    assert!(c.remembers_late("e1"));
    // A late grant is ignored: returning the place twice would grow the window.
    c.on_frame(T0 + 7_000, s, result("e1", 1));
    let st = &c.streams()[0];
    assert_eq!((st.credit.available, st.credit.in_flight, st.credit.window()), (0, 1, 1));
    assert!(!c.remembers_late("e1"));
    assert!(completions(&c.take_actions()).is_empty());
}

#[test]
fn an_answer_after_cancel_but_before_the_reclaim_returns_its_place() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    c.cancel(T0, "e1", cancel::Reason::CallerGone);
    let actions = c.take_actions();
    assert_eq!(cancels(&actions), [("e1".into(), cancel::Reason::CallerGone as i32)]);
    c.on_frame(T0 + 100, s, result("e1", 1));
    assert!(completions(&c.take_actions()).is_empty(), "nobody waits for it any more");
    c.tick(T0 + 5_000);
    let st = &c.streams()[0];
    assert_eq!((st.credit.available, st.credit.in_flight), (1, 0));
    assert!(!c.remembers_late("e1"));
}

#[test]
fn a_late_grant_of_zero_still_withholds_and_gives_up_the_returned_place() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 2)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    c.cancel(T0, "e1", cancel::Reason::CallerGone);
    c.tick(T0 + 5_000);
    assert_eq!(c.streams()[0].credit.available, 2);
    c.on_frame(T0 + 6_000, s, result("e1", 0));
    let st = &c.streams()[0];
    assert!(st.credit.withheld);
    assert_eq!((st.credit.available, st.credit.window()), (1, 1));
    c.submit(T0 + 6_000, event("e2", "a", 0)).unwrap();
    assert!(dispatched(&mut c).is_empty(), "withheld until a CreditGrant");
    c.on_frame(T0 + 6_000, s, grant(0));
    assert_eq!(ids(&dispatched(&mut c)), ["e2"]);
}

#[test]
fn late_answers_are_remembered_for_sixty_seconds() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    c.cancel(T0, "e1", cancel::Reason::Shutdown);
    c.tick(T0 + 5_000);
    assert!(c.remembers_late("e1"));
    c.tick(T0 + 64_999);
    assert!(c.remembers_late("e1"));
    c.tick(T0 + 65_000);
    assert!(!c.remembers_late("e1"));
    // Past the memory, a Result is for an unknown id: ignored entirely.
    c.on_frame(T0 + 70_000, s, result("e1", 0));
    assert!(!c.streams()[0].credit.withheld);
    assert!(c.take_actions().iter().any(|a| matches!(a, Action::Note(n) if n.contains("unknown id"))));
}

#[test]
fn cancelling_an_event_not_yet_dispatched_withdraws_it() {
    let mut c = core();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.cancel(T0, "e1", cancel::Reason::CallerGone);
    assert_eq!(c.queued("a"), 0);
    c.attach(T0, &ready(&["a"], 1)).unwrap();
    assert!(dispatched(&mut c).is_empty(), "no Dispatch, and so no Cancel either");
}

#[test]
fn a_deadline_that_passes_in_the_queue_sheds_the_event() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.submit(T0, event("e2", "a", 500)).unwrap();
    dispatched(&mut c);
    c.tick(T0 + 500);
    assert_eq!(completions(&c.take_actions()), [("e2".into(), EventOutcome::Shed(ShedReason::DeadlinePassed))]);
    c.on_frame(T0 + 600, s, result("e1", 1));
    assert!(dispatched(&mut c).is_empty());
    assert_eq!(c.submit(T0 + 600, event("e3", "a", 500)), Err(ShedReason::DeadlinePassed));
    assert_eq!(c.submit(T0, event("e1", "a", 0)).map(|_| ()), Ok(()));
    assert_eq!(c.submit(T0, event("e1", "a", 0)), Err(ShedReason::DuplicateId));
}

#[test]
fn drain_sends_the_deadline_sheds_the_queue_and_waits_for_work_in_flight() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    c.submit(T0, event("e2", "a", 0)).unwrap();
    dispatched(&mut c);
    assert_eq!(c.drain(T0, T0 + 10_000), T0 + 10_000);
    let actions = c.take_actions();
    assert!(actions.contains(&Action::Send {
        stream: s,
        frame: runtime_message::Frame::Drain(Drain { deadline_unix_ms: T0 + 10_000 })
    }));
    assert_eq!(completions(&actions), [("e2".into(), EventOutcome::Shed(ShedReason::Draining))]);
    assert_eq!(c.submit(T0, event("e3", "a", 0)), Err(ShedReason::Draining));
    assert_eq!(c.attach(T0, &ready(&["a"], 1)), Err(CloseReason::RefusedDraining));
    // Results are still taken.
    c.on_frame(T0 + 100, s, result("e1", 1));
    assert!(matches!(&completions(&c.take_actions())[0].1, EventOutcome::Result(_)));
    assert_eq!(c.in_flight(), 0);
}

#[test]
fn at_the_drain_deadline_work_in_flight_is_abandoned_and_streams_closed() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 2)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    c.drain(T0, T0 + 1_000);
    c.take_actions();
    assert_eq!(c.next_wakeup(), Some(T0 + 1_000));
    c.tick(T0 + 1_000);
    let actions = c.take_actions();
    assert_eq!(completions(&actions), [("e1".into(), EventOutcome::Abandoned(AbandonReason::DrainDeadline))]);
    assert!(actions.contains(&Action::Close { stream: s, reason: CloseReason::DrainDeadline }));
    assert_eq!((c.in_flight(), c.drain_abandoned()), (0, 1));
}

#[test]
fn the_drain_deadline_comes_from_the_environment_or_the_longest_timeout() {
    let config = |timeouts: &[i64]| RuntimeConfig {
        handlers: timeouts.iter().map(|t| HandlerConfig { timeout_ms: *t, ..Default::default() }).collect(),
        ..Default::default()
    };
    assert_eq!(drain_timeout(Some("12"), &config(&[1_000])), Ok(Duration::from_secs(12)));
    assert_eq!(drain_timeout(Some("1500ms"), &config(&[])), Ok(Duration::from_millis(1_500)));
    assert_eq!(drain_timeout(Some(" 7s "), &config(&[])), Ok(Duration::from_secs(7)));
    assert!(drain_timeout(Some("soon"), &config(&[])).is_err());
    assert_eq!(drain_timeout(None, &config(&[2_000, 30_000, 5_000])), Ok(Duration::from_secs(30)));
    assert_eq!(drain_timeout(None, &config(&[600_000])), Ok(Duration::from_secs(300)), "capped at 5 min");
    assert_eq!(drain_timeout(None, &config(&[0])), Ok(Duration::from_secs(60)), "60 s when unset");
    assert_eq!(drain_timeout(Some(""), &config(&[1_000])), Ok(Duration::from_secs(1)));
}

#[test]
fn a_draining_handler_gets_no_new_work_but_its_results_are_taken() {
    let mut c = core();
    let s1 = c.attach(T0, &ready(&["a"], 2)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    let draining =
        HandlerMessage { frame: Some(handler_message::Frame::Draining(Draining { deadline_unix_ms: T0 + 2_000 })) };
    c.on_frame(T0, s1, draining);
    c.submit(T0, event("e2", "a", 0)).unwrap();
    assert!(dispatched(&mut c).is_empty());
    // A stream rolling in takes the new work; the old one finishes its own.
    let s2 = c.attach(T0 + 100, &ready(&["a"], 2)).unwrap();
    assert_eq!(dispatched(&mut c), [(s2, "e2".to_owned())]);
    c.on_frame(T0 + 200, s1, result("e1", 1));
    assert!(matches!(&completions(&c.take_actions())[0].1, EventOutcome::Result(_)));
}

#[test]
fn at_its_draining_deadline_a_stream_is_closed_and_its_callers_released_at_once() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 2)).unwrap();
    c.submit(T0, event("e1", "a", 60_000)).unwrap();
    dispatched(&mut c);
    let draining =
        HandlerMessage { frame: Some(handler_message::Frame::Draining(Draining { deadline_unix_ms: T0 + 2_000 })) };
    c.on_frame(T0, s, draining);
    assert_eq!(c.next_wakeup(), Some(T0 + 2_000));
    c.tick(T0 + 2_000);
    let actions = c.take_actions();
    assert_eq!(completions(&actions), [("e1".into(), EventOutcome::Abandoned(AbandonReason::StreamGone))]);
    assert!(actions.contains(&Action::Close { stream: s, reason: CloseReason::HandlerDrainingDeadline }));
    assert!(c.streams().is_empty());
    assert!(cancels(&actions).is_empty(), "nothing is sent on a closed stream");
}

#[test]
fn a_stream_that_fails_releases_its_callers_without_redispatching() {
    let mut c = core();
    let s1 = c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.submit(T0, event("e1", "a", 0)).unwrap();
    dispatched(&mut c);
    c.attach(T0, &ready(&["a"], 1)).unwrap();
    c.stream_ended(T0 + 10, s1);
    let actions = c.take_actions();
    assert_eq!(completions(&actions), [("e1".into(), EventOutcome::Abandoned(AbandonReason::StreamGone))]);
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { frame: runtime_message::Frame::Dispatch(_), .. })));
}

#[test]
fn ws_sends_are_handed_to_the_driver() {
    let mut c = core();
    let s = c.attach(T0, &ready(&["a"], 1)).unwrap();
    let send = WsSend { correlation_id: "c1".into(), messages: vec![WsOutbound::default()] };
    c.on_frame(T0, s, HandlerMessage { frame: Some(handler_message::Frame::WsSend(send.clone())) });
    assert_eq!(c.take_actions(), [Action::WsSend { stream: s, send }]);
}

#[test]
fn ids_are_assigned_when_empty() {
    let mut c = core();
    let a = c.submit(T0, event("", "a", 0)).unwrap();
    let b = c.submit(T0, event("", "a", 0)).unwrap();
    assert!(a.starts_with("evt-") && b.starts_with("evt-") && a != b);
}
