//! Unit tests of the protocol core, with a fake clock.

use bytes::Bytes;
use celerity_proto::v1::{
    self as pb, Dispatch, Draining, HandlerConfig, HandlerMessage, ProtocolVersion, ReadyAck, RuntimeConfig,
    RuntimeMessage, handler_message, result::Outcome, runtime_message,
};

use prost::Message as _;

use super::*;
use crate::kind::HandlerKind;
use crate::reply::{HttpReply, Reply};

const T0: i64 = 1_000_000;

fn spec(tag: &str) -> HandlerSpec {
    HandlerSpec::new(HandlerKey::Tag(tag.to_string()), HandlerKind::Http, format!("app::{tag}"))
}

fn named(name: &str) -> HandlerSpec {
    HandlerSpec::new(HandlerKey::Name(name.to_string()), HandlerKind::Http, format!("app::{name}"))
}

fn handler_config(name: &str, tag: &str) -> HandlerConfig {
    HandlerConfig {
        handler_name: name.to_string(),
        handler_tag: tag.to_string(),
        timeout_ms: 30_000,
        tracing_enabled: false,
        published_name: String::new(),
    }
}

fn config_frame(handlers: &[(&str, &str)], version: Option<(u32, u32)>) -> Input {
    Input::from(RuntimeMessage {
        frame: Some(runtime_message::Frame::Config(RuntimeConfig {
            tracing_enabled: false,
            metrics_enabled: false,
            handlers: handlers.iter().map(|(n, t)| handler_config(n, t)).collect(),
            protocol_version: version.map(|(major, minor)| ProtocolVersion { major, minor }),
        })),
    })
}

fn ack(accepted: bool) -> Input {
    Input::from(RuntimeMessage {
        frame: Some(runtime_message::Frame::ReadyAck(ReadyAck { accepted, ..Default::default() })),
    })
}

fn dispatch(id: &str, tag: &str, deadline: i64) -> Input {
    Input::from(RuntimeMessage {
        frame: Some(runtime_message::Frame::Dispatch(Dispatch {
            id: id.to_string(),
            handler_tag: tag.to_string(),
            deadline_unix_ms: deadline,
            source: Some(pb::dispatch::Source::Http(pb::HttpRequest::default())),
            ..Default::default()
        })),
    })
}

fn cancel(id: &str, reason: pb::cancel::Reason) -> Input {
    Input::from(RuntimeMessage {
        frame: Some(runtime_message::Frame::Cancel(pb::Cancel { id: id.to_string(), reason: reason as i32 })),
    })
}

fn ok_outcome() -> Outcome {
    Outcome::Http(pb::HttpResponse { status: 200, ..Default::default() })
}

fn completed(id: &str) -> Input {
    Input::Completed { id: id.into(), outcome: ok_outcome().into() }
}

fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

/// The frames sent, an HTTP reply of the SDK's own in the protocol's form.
fn sent(actions: &[Action]) -> Vec<handler_message::Frame> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(HandlerMessage { frame: Some(frame) }) => Some(frame.clone()),
            Action::SendHttp(result) => result.clone().into_message().frame,
            _ => None,
        })
        .collect()
}

fn results(actions: &[Action]) -> Vec<pb::Result> {
    sent(actions)
        .into_iter()
        .filter_map(|f| match f {
            handler_message::Frame::Result(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn warned(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Warn(line) => Some(line.clone()),
            _ => None,
        })
        .collect()
}

fn exit(actions: &[Action]) -> Option<Result<(), SessionError>> {
    actions.iter().find_map(|a| match a {
        Action::Exit(result) => Some(result.clone()),
        _ => None,
    })
}

/// A session past the handshake, serving `tags` with `credit`.
fn serving(tags: &[&str], credit: u32) -> Session {
    past_handshake(SessionConfig::new(tags.iter().map(|t| spec(t)).collect(), credit), tags)
}

/// A session of `config` past the handshake, the runtime declaring each of
/// `tags` as the handler `h-{tag}`.
fn past_handshake(config: SessionConfig, tags: &[&str]) -> Session {
    let mut session = Session::new(config, T0);
    let declared: Vec<(String, String)> = tags.iter().map(|t| (format!("h-{t}"), t.to_string())).collect();
    let declared: Vec<(&str, &str)> = declared.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    session.handle(T0, config_frame(&declared, Some((1, 0))));
    session.handle(T0, ack(true));
    drain(&mut session);
    session
}

#[test]
fn ready_follows_the_config_with_sorted_tags_credit_caps_and_version() {
    let mut handlers = vec![spec("POST::/b"), spec("GET::/a")];
    handlers[0].max_concurrent = Some(3);
    let mut session = Session::new(SessionConfig::new(handlers, 16), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a"), ("b", "POST::/b")], Some((1, 0))));
    let actions = drain(&mut session);
    let report = actions.iter().find_map(|a| match a {
        Action::Report(r) => Some(r.clone()),
        _ => None,
    });
    assert!(report.unwrap().is_complete());
    let ready = match &sent(&actions)[..] {
        [handler_message::Frame::Ready(ready)] => ready.clone(),
        other => panic!("expected Ready alone, got {other:?}"),
    };
    assert_eq!(ready.handler_tags, ["GET::/a", "POST::/b"]);
    assert_eq!(ready.initial_credit, 16);
    assert_eq!(ready.sdk_version, crate::version::SDK_VERSION);
    assert_eq!(ready.limits, [pb::HandlerLimit { handler_tag: "POST::/b".into(), max_concurrent: 3 }]);
    assert_eq!(ready.protocol_version, Some(ProtocolVersion { major: 1, minor: 0 }));
}

#[test]
fn a_first_frame_other_than_config_is_an_error() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, ack(true));
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    let error = exit(&actions).unwrap().unwrap_err();
    assert_eq!(error, SessionError::UnexpectedFirstFrame("ReadyAck"));
    assert!(error.to_string().contains("must be RuntimeConfig"));
    assert!(session.is_closed());
}

#[test]
fn another_major_version_is_refused_without_ready() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((2, 0))));
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty(), "no Ready on a version mismatch");
    let error = exit(&actions).unwrap().unwrap_err();
    assert_eq!(error, SessionError::VersionMismatch { ours: (1, 0), theirs: (2, 0) });
    let text = error.to_string();
    assert!(text.contains("1.0") && text.contains("2.0"), "{text}");
}

#[test]
fn a_later_minor_is_served() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 7))));
    let actions = drain(&mut session);
    assert!(matches!(&sent(&actions)[..], [handler_message::Frame::Ready(_)]));
}

#[test]
fn a_runtime_without_a_version_is_served_and_noted() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], None));
    let actions = drain(&mut session);
    assert!(actions.contains(&Action::UnversionedRuntime));
    assert!(matches!(&sent(&actions)[..], [handler_message::Frame::Ready(_)]));
}

#[test]
fn a_refusal_names_both_lists() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("b", "GET::/b")], Some((1, 0))));
    drain(&mut session);
    session.handle(
        T0,
        Input::from(RuntimeMessage {
            frame: Some(runtime_message::Frame::ReadyAck(ReadyAck {
                accepted: false,
                unknown_tags: vec!["GET::/a".into()],
                unhandled_tags: vec!["GET::/b".into()],
                refused_reason: pb::ready_ack::RefusedReason::Tags as i32,
            })),
        }),
    );
    let error = exit(&drain(&mut session)).unwrap().unwrap_err();
    let text = error.to_string();
    assert!(text.contains("GET::/a") && text.contains("GET::/b"), "{text}");
    assert!(text.contains("not declared by the blueprint"), "{text}");
}

#[test]
fn the_report_lists_served_undeclared_and_unregistered() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a"), spec("GET::/x")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a"), ("b", "GET::/b")], Some((1, 0))));
    let report = drain(&mut session)
        .into_iter()
        .find_map(|a| match a {
            Action::Report(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(report.served, [("GET::/a".to_string(), "app::GET::/a".to_string())]);
    assert_eq!(report.undeclared, [("GET::/x".to_string(), "app::GET::/x".to_string())]);
    assert_eq!(report.unregistered, [("GET::/b".to_string(), "b".to_string())]);
    assert!(!report.is_complete());
}

#[test]
fn by_name_binding_takes_the_tag_from_the_config() {
    let mut session = Session::new(SessionConfig::new(vec![named("getOrder")], 4), T0);
    session.handle(T0, config_frame(&[("getOrder", "GET::/orders/{id}")], Some((1, 0))));
    let actions = drain(&mut session);
    match &sent(&actions)[..] {
        [handler_message::Frame::Ready(ready)] => assert_eq!(ready.handler_tags, ["GET::/orders/{id}"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_name_lists_the_declared_ones() {
    let mut session = Session::new(SessionConfig::new(vec![named("getOrdr")], 4), T0);
    session.handle(T0, config_frame(&[("getOrder", "GET::/o"), ("listOrders", "GET::/l")], Some((1, 0))));
    let error = exit(&drain(&mut session)).unwrap().unwrap_err();
    let text = error.to_string();
    assert!(text.contains("getOrdr") && text.contains("getOrder, listOrders"), "{text}");
}

#[test]
fn a_name_whose_route_does_not_fit_the_handler_stops_before_ready() {
    fn two_parameters(params: &[String]) -> Result<(), String> {
        if params.len() == 2 {
            Ok(())
        } else {
            Err(format!("Path<(String, String)> takes 2 values; the route has {params:?}"))
        }
    }
    let mut handler = named("getOrder");
    handler.route.push(two_parameters);
    let mut session = Session::new(SessionConfig::new(vec![handler.clone()], 4), T0);
    session.handle(T0, config_frame(&[("getOrder", "GET::/orders/{id}")], Some((1, 0))));
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty(), "nothing is sent, Ready least of all: {actions:?}");
    let text = exit(&actions).unwrap().unwrap_err().to_string();
    assert!(text.contains("\"getOrder\"") && text.contains("GET::/orders/{id}"), "{text}");
    assert!(text.contains("takes 2 values; the route has [\"id\"]"), "{text}");

    // The same handler on a route that fits is served.
    let mut session = Session::new(SessionConfig::new(vec![handler], 4), T0);
    session.handle(T0, config_frame(&[("getOrder", "GET::/customers/{customer}/orders/{id}")], Some((1, 0))));
    assert!(matches!(&sent(&drain(&mut session))[..], [handler_message::Frame::Ready(_)]));
}

#[test]
fn a_tag_bound_twice_names_both_handlers() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/o"), named("getOrder")], 4), T0);
    session.handle(T0, config_frame(&[("getOrder", "GET::/o")], Some((1, 0))));
    let error = exit(&drain(&mut session)).unwrap().unwrap_err();
    assert!(matches!(error, SessionError::DuplicateTag { .. }), "{error}");
}

#[test]
fn the_handshake_times_out() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    assert_eq!(session.next_timer(), Some(T0 + 30_000));
    session.handle(T0 + 29_999, Input::Tick);
    assert!(exit(&drain(&mut session)).is_none());
    session.handle(T0 + 30_000, Input::Tick);
    let error = exit(&drain(&mut session)).unwrap().unwrap_err();
    assert!(matches!(error, SessionError::HandshakeTimeout { expected: "RuntimeConfig", .. }));
}

#[test]
fn each_dispatch_is_started_then_answered_once_with_a_grant() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    let actions = drain(&mut session);
    assert!(matches!(&actions[..], [Action::Start { handler: 0, .. }]));
    session.handle(T0, completed("1"));
    let answered = results(&drain(&mut session));
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].id, "1");
    assert_eq!(answered[0].credit_grant, 1);
    // A second completion for the same id sends nothing.
    session.handle(T0, completed("1"));
    assert!(drain(&mut session).is_empty());
    assert_eq!(session.in_flight(), 0);
}

#[test]
fn an_unknown_tag_is_answered_with_its_credit() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/nope", 0));
    let answered = results(&drain(&mut session));
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].credit_grant, 1);
    match &answered[0].outcome {
        Some(Outcome::Error(e)) => {
            assert_eq!(e.r#type, error_type::UNKNOWN_TAG);
            assert!(e.message.contains("GET::/nope"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dispatch_beyond_the_window_is_answered_without_running() {
    let mut session = serving(&["GET::/a"], 1);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, dispatch("2", "GET::/a", 0));
    let actions = drain(&mut session);
    assert_eq!(actions.iter().filter(|a| matches!(a, Action::Start { .. })).count(), 1);
    let answered = results(&actions);
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].id, "2");
    assert_eq!(answered[0].credit_grant, 1);
}

#[test]
fn a_cap_is_enforced_locally() {
    let mut handlers = vec![spec("GET::/a")];
    handlers[0].max_concurrent = Some(1);
    let mut session = Session::new(SessionConfig::new(handlers, 8), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    session.handle(T0, ack(true));
    drain(&mut session);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, dispatch("2", "GET::/a", 0));
    let answered = results(&drain(&mut session));
    assert_eq!(answered.len(), 1);
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::OVER_CAPACITY));
}

#[test]
fn a_duplicate_id_in_flight_is_not_run_and_its_place_is_returned() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    let actions = drain(&mut session);
    assert!(results(&actions).is_empty());
    assert!(sent(&actions).contains(&handler_message::Frame::Credit(CreditGrant { additional: 1 })));
}

#[test]
fn the_deadline_cancels_then_abandons_and_answers() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", T0 + 100));
    drain(&mut session);
    assert_eq!(session.next_timer(), Some(T0 + 100));
    session.handle(T0 + 100, Input::Tick);
    assert_eq!(drain(&mut session), [Action::Cancel { id: "1".into(), reason: CancelReason::DeadlineExceeded }]);
    session.handle(T0 + 100 + 999, Input::Tick);
    assert!(drain(&mut session).is_empty());
    session.handle(T0 + 100 + 1000, Input::Tick);
    let actions = drain(&mut session);
    assert!(actions.contains(&Action::Abandon { id: "1".into() }));
    let answered = results(&actions);
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].credit_grant, 1);
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::DEADLINE_EXCEEDED));
    // The handler finishing late sends nothing.
    session.handle(T0 + 2000, completed("1"));
    assert!(drain(&mut session).is_empty());
}

#[test]
fn a_handler_finishing_within_the_grace_is_answered_by_its_outcome() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", T0 + 100));
    session.handle(T0 + 100, Input::Tick);
    drain(&mut session);
    session.handle(T0 + 150, completed("1"));
    let answered = results(&drain(&mut session));
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].outcome, Some(ok_outcome()));
    assert_eq!(session.next_timer(), None);
}

#[test]
fn cancel_fires_then_abandons_after_the_grace() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0 + 10, cancel("1", pb::cancel::Reason::CallerGone));
    assert_eq!(drain(&mut session), [Action::Cancel { id: "1".into(), reason: CancelReason::CallerGone }]);
    session.handle(T0 + 1010, Input::Tick);
    let answered = results(&drain(&mut session));
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::CANCELLED));
}

#[test]
fn cancel_for_an_unknown_id_is_ignored_quietly() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, cancel("nope", pb::cancel::Reason::DeadlineExceeded));
    assert!(drain(&mut session).is_empty());
}

#[test]
fn drain_finishes_what_is_held_then_closes() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(
        T0,
        Input::from(RuntimeMessage {
            frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: T0 + 5000 })),
        }),
    );
    assert!(drain(&mut session).is_empty());
    session.handle(T0 + 10, dispatch("2", "GET::/a", 0));
    let refused = results(&drain(&mut session));
    assert!(matches!(&refused[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::NOT_ACCEPTING));
    session.handle(T0 + 20, completed("1"));
    let actions = drain(&mut session);
    assert_eq!(results(&actions).len(), 1);
    assert!(actions.contains(&Action::Close));
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn drain_deadline_answers_for_what_is_left() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(
        T0,
        Input::from(RuntimeMessage {
            frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: T0 + 5000 })),
        }),
    );
    drain(&mut session);
    // One grace (1 s) before the deadline, what is held is told to stop.
    assert_eq!(session.next_timer(), Some(T0 + 4000));
    session.handle(T0 + 4000, Input::Tick);
    assert_eq!(drain(&mut session), [Action::Cancel { id: "1".into(), reason: CancelReason::Shutdown }]);
    // At the deadline, what is left is dropped and answered for.
    assert_eq!(session.next_timer(), Some(T0 + 5000));
    session.handle(T0 + 5000, Input::Tick);
    let actions = drain(&mut session);
    assert!(actions.contains(&Action::Abandon { id: "1".into() }));
    let answered = results(&actions);
    assert_eq!(answered.len(), 1);
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::CANCELLED));
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn a_handler_told_to_stop_before_the_drain_deadline_answers_for_itself() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, drain_frame(T0 + 5000));
    session.handle(T0 + 4000, Input::Tick);
    drain(&mut session);
    session.handle(T0 + 4100, completed("1"));
    let actions = drain(&mut session);
    assert_eq!(results(&actions)[0].outcome, Some(ok_outcome()));
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn shutdown_sends_draining_and_a_second_stops_at_once() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::Shutdown);
    let actions = drain(&mut session);
    assert_eq!(sent(&actions), [handler_message::Frame::Draining(Draining { deadline_unix_ms: T0 + 10_000 })]);
    // Work that crossed with Draining is still run.
    session.handle(T0 + 1, dispatch("2", "GET::/a", 0));
    assert!(matches!(&drain(&mut session)[..], [Action::Start { .. }]));
    session.handle(T0 + 2, Input::Shutdown);
    let actions = drain(&mut session);
    assert_eq!(results(&actions).len(), 2);
    assert_eq!(exit(&actions), Some(Err(SessionError::Interrupted)));
}

#[test]
fn a_stream_that_ends_without_drain_is_fatal_and_sends_nothing() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::StreamEnded { error: None });
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    assert!(actions.contains(&Action::Abandon { id: "1".into() }));
    assert_eq!(exit(&actions), Some(Err(SessionError::StreamEnded { in_flight: 1, error: None })));
    session.handle(T0, completed("1"));
    assert!(drain(&mut session).is_empty(), "nothing after the stream closes");
}

#[test]
fn withhold_and_resume() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, Input::Withhold);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, completed("1"));
    let answered = results(&drain(&mut session));
    assert_eq!(answered[0].credit_grant, 0);
    session.handle(T0, Input::Resume);
    assert_eq!(sent(&drain(&mut session)), [handler_message::Frame::Credit(CreditGrant { additional: 1 })]);
}

#[test]
fn resize_grows_with_a_grant_and_shrinks_on_results() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, Input::Resize(5));
    assert_eq!(sent(&drain(&mut session)), [handler_message::Frame::Credit(CreditGrant { additional: 3 })]);
    session.handle(T0, Input::Resize(4));
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, completed("1"));
    let frames = sent(&drain(&mut session));
    assert!(matches!(&frames[0], handler_message::Frame::Result(r) if r.credit_grant == 0));
    assert_eq!(frames[1], handler_message::Frame::Credit(CreditGrant { additional: 0 }));
    assert_eq!(session.credit().window(), 4);
}

#[test]
fn a_dispatch_before_the_ack_is_still_answered() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    drain(&mut session);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    let answered = results(&drain(&mut session));
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0].credit_grant, 1);
}

#[test]
fn nothing_is_sent_for_ids_never_dispatched() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, completed("ghost"));
    assert!(drain(&mut session).is_empty());
}

fn drain_frame(deadline: i64) -> Input {
    Input::from(RuntimeMessage { frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: deadline })) })
}

#[test]
fn a_signal_after_the_runtimes_drain_is_the_first_not_the_second() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, drain_frame(T0 + 60_000));
    drain(&mut session);
    session.handle(T0 + 5, Input::Shutdown);
    let actions = drain(&mut session);
    // Draining is announced with the earlier of the two deadlines, and the
    // held work goes on.
    assert_eq!(sent(&actions), [handler_message::Frame::Draining(Draining { deadline_unix_ms: T0 + 10_005 })]);
    assert!(exit(&actions).is_none(), "the first signal must not stop the process");
    assert_eq!(session.next_timer(), Some(T0 + 10_005 - 1_000), "held work is told to stop a grace before");
    session.handle(T0 + 6, Input::Shutdown);
    let actions = drain(&mut session);
    assert_eq!(results(&actions).len(), 1, "what is held is answered even when stopping at once");
    assert_eq!(exit(&actions), Some(Err(SessionError::Interrupted)));
}

#[test]
fn a_drain_after_draining_keeps_the_earlier_deadline() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, Input::Shutdown);
    session.handle(T0 + 1, drain_frame(T0 + 60_000));
    drain(&mut session);
    assert_eq!(session.next_timer(), Some(T0 + 9_000));
    session.handle(T0 + 9_000, Input::Tick);
    drain(&mut session);
    assert_eq!(session.next_timer(), Some(T0 + 10_000));
    session.handle(T0 + 10_000, Input::Tick);
    let actions = drain(&mut session);
    assert_eq!(results(&actions).len(), 1);
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn a_drain_whose_deadline_has_passed_drops_what_is_held_at_once() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0 + 10, drain_frame(T0));
    let actions = drain(&mut session);
    assert!(actions.contains(&Action::Cancel { id: "1".into(), reason: CancelReason::Shutdown }));
    assert!(actions.contains(&Action::Abandon { id: "1".into() }));
    assert_eq!(results(&actions).len(), 1);
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn the_applications_stop_is_idempotent_and_a_signal_after_it_is_the_first() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::Stop);
    assert_eq!(sent(&drain(&mut session)).len(), 1, "Draining");
    session.handle(T0, Input::Stop);
    assert!(drain(&mut session).is_empty(), "asking again changes nothing");
    session.handle(T0, Input::Shutdown);
    assert!(drain(&mut session).is_empty(), "Draining was already sent");
    session.handle(T0, Input::Shutdown);
    assert_eq!(exit(&drain(&mut session)), Some(Err(SessionError::Interrupted)));
}

#[test]
fn draining_with_nothing_held_closes_once_crossing_dispatches_had_time_to_arrive() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, Input::Stop);
    let actions = drain(&mut session);
    assert!(matches!(&sent(&actions)[..], [handler_message::Frame::Draining(_)]));
    assert!(exit(&actions).is_none());
    assert_eq!(session.next_timer(), Some(T0 + 250));
    // A dispatch the runtime sent before it read Draining is served.
    session.handle(T0 + 1, dispatch("crossed", "GET::/a", 0));
    assert!(matches!(&drain(&mut session)[..], [Action::Start { .. }]));
    session.handle(T0 + 300, completed("crossed"));
    let actions = drain(&mut session);
    assert_eq!(results(&actions).len(), 1);
    assert_eq!(exit(&actions), Some(Ok(())), "past the settle time with nothing held: closed");
}

#[test]
fn draining_with_nothing_held_closes_at_the_end_of_the_settle_time() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, Input::Shutdown);
    drain(&mut session);
    session.handle(T0 + 249, Input::Tick);
    assert!(drain(&mut session).is_empty());
    session.handle(T0 + 250, Input::Tick);
    let actions = drain(&mut session);
    assert!(actions.contains(&Action::Close));
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn a_signal_before_the_ack_drains_once_it_arrives() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    drain(&mut session);
    session.handle(T0, Input::Shutdown);
    assert!(drain(&mut session).is_empty(), "Ready is out: wait for the ack rather than vanish");
    session.handle(T0 + 5, ack(true));
    let actions = drain(&mut session);
    assert_eq!(actions[0], Action::Serving);
    assert_eq!(sent(&actions), [handler_message::Frame::Draining(Draining { deadline_unix_ms: T0 + 10_005 })]);
    // What the runtime dispatched before it read Draining is run.
    session.handle(T0 + 6, dispatch("1", "GET::/a", 0));
    assert!(matches!(&drain(&mut session)[..], [Action::Start { .. }]));
    session.handle(T0 + 7, Input::Shutdown);
    assert_eq!(exit(&drain(&mut session)), Some(Err(SessionError::Interrupted)));
}

#[test]
fn a_second_signal_before_the_ack_stops_at_once() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    drain(&mut session);
    session.handle(T0, Input::Shutdown);
    session.handle(T0, Input::Shutdown);
    assert_eq!(exit(&drain(&mut session)), Some(Err(SessionError::Interrupted)));
}

#[test]
fn a_signal_during_the_handshake_stops_cleanly() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, Input::Shutdown);
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn a_resize_before_ready_sets_the_declared_credit() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, Input::Resize(9));
    assert!(drain(&mut session).is_empty());
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    match &sent(&drain(&mut session))[..] {
        [handler_message::Frame::Ready(ready)] => assert_eq!(ready.initial_credit, 9),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_grant_asked_for_before_the_ack_waits_for_it() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 2), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    drain(&mut session);
    session.handle(T0, Input::Resize(5));
    assert!(sent(&drain(&mut session)).is_empty(), "nothing but Ready before ReadyAck");
    session.handle(T0, ack(true));
    let actions = drain(&mut session);
    assert_eq!(actions[0], Action::Serving);
    assert_eq!(sent(&actions), [handler_message::Frame::Credit(CreditGrant { additional: 3 })]);
}

#[test]
fn a_duplicate_during_a_withhold_does_not_end_it() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, Input::Withhold);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, dispatch("2", "GET::/a", 0));
    session.handle(T0, completed("1"));
    assert_eq!(results(&drain(&mut session))[0].credit_grant, 0);
    // The runtime ignores the withhold and repeats an id in flight: a
    // CreditGrant to return that place would end the withhold, so it is owed.
    session.handle(T0, dispatch("2", "GET::/a", 0));
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty(), "{actions:?}");
    assert_eq!(session.credit().owed(), 1);
    session.handle(T0, Input::Resume);
    assert_eq!(sent(&drain(&mut session)), [handler_message::Frame::Credit(CreditGrant { additional: 2 })]);
}

#[test]
fn a_dispatch_without_an_id_is_not_answered_and_its_place_is_returned() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("", "GET::/a", 0));
    let actions = drain(&mut session);
    assert!(results(&actions).is_empty());
    assert!(actions.iter().any(|a| matches!(a, Action::Warn(_))));
    assert_eq!(sent(&actions), [handler_message::Frame::Credit(CreditGrant { additional: 1 })]);
}

#[test]
fn over_dispatch_is_answered_at_once_and_logged_at_a_bounded_rate() {
    let mut session = serving(&["GET::/a"], 1);
    session.handle(T0, dispatch("held", "GET::/a", 0));
    drain(&mut session);
    let mut warnings = Vec::new();
    for i in 0..100 {
        session.handle(T0 + i, dispatch(&format!("over-{i}"), "GET::/a", 0));
        let actions = drain(&mut session);
        let answered = results(&actions);
        assert_eq!(answered.len(), 1, "never queued");
        assert_eq!(answered[0].credit_grant, 1);
        assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::OVER_CAPACITY));
        warnings.extend(warned(&actions));
    }
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("\"over-0\" beyond the credit window of 1"), "{}", warnings[0]);
    assert_eq!(session.next_timer(), Some(T0 + WARNING_INTERVAL_MS));
    session.handle(T0 + WARNING_INTERVAL_MS, Input::Tick);
    let counted = warned(&drain(&mut session));
    assert!(
        matches!(&counted[..], [line] if line.contains("99 more dispatch(es) beyond the credit window")),
        "{counted:?}"
    );
    assert_eq!(session.in_flight(), 1);
}

#[test]
fn a_deadline_already_passed_cancels_at_once() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("1", "GET::/a", T0 - 10));
    let actions = drain(&mut session);
    assert!(matches!(actions[0], Action::Start { .. }));
    assert_eq!(actions[1], Action::Cancel { id: "1".into(), reason: CancelReason::DeadlineExceeded });
    session.handle(T0 + 990, Input::Tick);
    let answered = results(&drain(&mut session));
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::DEADLINE_EXCEEDED));
}

#[test]
fn a_cancel_after_the_deadline_fired_changes_nothing() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("1", "GET::/a", T0 + 100));
    session.handle(T0 + 100, Input::Tick);
    drain(&mut session);
    session.handle(T0 + 200, cancel("1", pb::cancel::Reason::CallerGone));
    assert!(drain(&mut session).is_empty());
    session.handle(T0 + 1100, Input::Tick);
    let answered = results(&drain(&mut session));
    assert!(matches!(&answered[0].outcome, Some(Outcome::Error(e)) if e.r#type == error_type::DEADLINE_EXCEEDED));
}

#[test]
fn a_cancel_for_a_finished_id_is_ignored_quietly() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, completed("1"));
    drain(&mut session);
    session.handle(T0, cancel("1", pb::cancel::Reason::CallerGone));
    assert!(drain(&mut session).is_empty());
    assert!(session.tables_empty());
}

#[test]
fn stale_timers_do_not_pile_up() {
    let mut session = serving(&["GET::/a"], 4);
    for i in 0..10_000 {
        let id = format!("{i}");
        session.handle(T0, dispatch(&id, "GET::/a", T0 + 3_600_000));
        session.handle(T0, completed(&id));
    }
    drain(&mut session);
    assert!(session.timer_entries() <= 64, "{}", session.timer_entries());
    assert!(session.tables_empty());
}

#[test]
fn a_stream_error_without_drain_names_the_error_and_the_lost_events() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, dispatch("2", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::StreamEnded { error: Some("connection reset by peer".into()) });
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty(), "nothing is sent once the stream is gone");
    let error = exit(&actions).unwrap().unwrap_err();
    let text = error.to_string();
    assert!(text.contains("without draining") && text.contains("connection reset by peer"), "{text}");
    assert!(text.contains("2 event(s) in flight were abandoned"), "{text}");
}

#[test]
fn the_stream_ending_after_drain_is_a_clean_end() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, drain_frame(T0 + 5_000));
    drain(&mut session);
    session.handle(T0 + 1, Input::StreamEnded { error: None });
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn a_second_drain_cannot_push_the_deadline_back() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("1", "GET::/a", 0));
    session.handle(T0, drain_frame(T0 + 1_000));
    session.handle(T0 + 1, drain_frame(T0 + 60_000));
    drain(&mut session);
    assert_eq!(session.next_timer(), Some(T0 + 1_000));
    session.handle(T0 + 1_000, Input::Tick);
    assert_eq!(exit(&drain(&mut session)), Some(Ok(())));
}

fn ws_send(id: &str, timeout_ms: u64) -> Input {
    Input::WsSend {
        correlation_id: id.to_string(),
        messages: vec![pb::WsOutbound { connection_id: "c".into(), ..Default::default() }],
        timeout_ms,
    }
}

fn ws_ack(id: &str) -> Input {
    Input::from(RuntimeMessage {
        frame: Some(runtime_message::Frame::WsAck(pb::WsSendAck {
            correlation_id: id.to_string(),
            success: true,
            failures: vec![],
        })),
    })
}

fn ws_done(actions: &[Action]) -> Vec<(String, WsOutcome)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::WsDone { correlation_id, outcome } => Some((correlation_id.clone(), outcome.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_ws_send_is_sent_and_answered_by_its_acknowledgement() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, ws_send("w1", 1000));
    let frames = sent(&drain(&mut session));
    assert!(matches!(&frames[..], [handler_message::Frame::WsSend(w)] if w.correlation_id == "w1"));
    assert_eq!(session.ws_pending(), 1);
    session.handle(T0 + 10, ws_ack("w1"));
    let done = ws_done(&drain(&mut session));
    assert!(matches!(&done[..], [(id, WsOutcome::Acked(_))] if id == "w1"));
    assert!(session.tables_empty());
}

#[test]
fn a_runtime_without_a_version_answers_sends_as_written_and_the_log_says_so_once() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("h", "GET::/a")], None));
    session.handle(T0, ack(true));
    drain(&mut session);
    let asking = |id: &str| Input::WsSend {
        correlation_id: id.to_string(),
        messages: vec![pb::WsOutbound { connection_id: "c".into(), wait_for_ack: true, ..Default::default() }],
        timeout_ms: 1000,
    };
    session.handle(T0, ws_send("plain", 1000));
    assert!(warned(&drain(&mut session)).is_empty(), "a send that asks for no acknowledgement is unaffected");
    session.handle(T0, asking("w1"));
    let said = warned(&drain(&mut session));
    assert!(matches!(&said[..], [line] if line.contains("does not wait for a client's acknowledgement")), "{said:?}");
    session.handle(T0, asking("w2"));
    assert!(warned(&drain(&mut session)).is_empty(), "said once");
    for id in ["plain", "w1", "w2"] {
        session.handle(T0 + 10, ws_ack(id));
        let done = ws_done(&drain(&mut session));
        assert!(matches!(&done[..], [(answered, WsOutcome::Written(_))] if answered == id), "{done:?}");
    }
    assert!(session.tables_empty());
}

#[test]
fn a_ws_send_times_out_and_its_late_ack_is_only_noted() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, ws_send("w1", 500));
    drain(&mut session);
    assert_eq!(session.next_timer(), Some(T0 + 500));
    session.handle(T0 + 500, Input::Tick);
    assert_eq!(ws_done(&drain(&mut session)), [("w1".to_string(), WsOutcome::TimedOut)]);
    session.handle(T0 + 600, ws_ack("w1"));
    let actions = drain(&mut session);
    assert!(ws_done(&actions).is_empty());
    assert!(matches!(&actions[..], [Action::Warn(_)]));
    assert!(session.tables_empty());
}

#[test]
fn ws_sends_before_the_handshake_go_out_once_it_completes() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, ws_send("early", 1000));
    assert!(sent(&drain(&mut session)).is_empty());
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    let frames = sent(&drain(&mut session));
    assert!(matches!(&frames[..], [handler_message::Frame::Ready(_)]), "nothing but Ready before ReadyAck");
    session.handle(T0, ack(true));
    let frames = sent(&drain(&mut session));
    assert!(matches!(&frames[..], [handler_message::Frame::WsSend(w)] if w.correlation_id == "early"));
}

#[test]
fn a_drain_waits_for_acknowledgements_until_its_deadline() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, ws_send("w1", 60_000));
    drain(&mut session);
    session.handle(
        T0,
        Input::from(RuntimeMessage {
            frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: T0 + 5000 })),
        }),
    );
    assert!(exit(&drain(&mut session)).is_none(), "still waiting for the acknowledgement");
    session.handle(T0 + 100, ws_ack("w1"));
    let actions = drain(&mut session);
    assert_eq!(ws_done(&actions).len(), 1);
    assert_eq!(exit(&actions), Some(Ok(())));

    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, ws_send("w2", 60_000));
    session.handle(
        T0,
        Input::from(RuntimeMessage {
            frame: Some(runtime_message::Frame::Drain(pb::Drain { deadline_unix_ms: T0 + 5000 })),
        }),
    );
    drain(&mut session);
    session.handle(T0 + 5000, Input::Tick);
    let actions = drain(&mut session);
    assert_eq!(ws_done(&actions), [("w2".to_string(), WsOutcome::Disconnected)]);
    assert_eq!(exit(&actions), Some(Ok(())));
}

#[test]
fn the_stream_ending_cuts_off_waiting_sends_and_later_ones() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, ws_send("w1", 1000));
    drain(&mut session);
    session.handle(T0, Input::StreamEnded { error: None });
    assert_eq!(ws_done(&drain(&mut session)), [("w1".to_string(), WsOutcome::Disconnected)]);
    session.handle(T0, ws_send("w2", 1000));
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    assert_eq!(ws_done(&actions), [("w2".to_string(), WsOutcome::Disconnected)]);
    assert!(session.tables_empty());
}

// ----- hostile input and limits -------------------------------------------------

/// A session past the handshake whose largest frame is the smallest allowed.
fn serving_small_frames(tags: &[&str]) -> Session {
    let mut config = SessionConfig::new(tags.iter().map(|t| spec(t)).collect(), 4);
    config.max_message_bytes = 1; // raised to the minimum
    past_handshake(config, tags)
}

#[test]
fn an_http_reply_of_the_sdks_own_goes_out_as_itself_with_its_place() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("e1", "GET::/a", 0));
    drain(&mut session);
    let reply = HttpReply::new(http::StatusCode::CREATED, Some("application/json"), Bytes::from_static(b"{}"));
    session.handle(T0, Input::Completed { id: "e1".into(), outcome: Reply::Http(reply.clone()) });
    let actions = drain(&mut session);
    let sent: Vec<_> = actions.iter().filter(|a| matches!(a, Action::Send(_) | Action::SendHttp(_))).collect();
    match &sent[..] {
        [Action::SendHttp(result)] => {
            assert_eq!((result.id.as_str(), result.credit_grant), ("e1", 1));
            assert_eq!(result.reply, reply);
        }
        other => panic!("expected the reply as itself, got {other:?}"),
    }
    assert!(session.tables_empty());
}

#[test]
fn an_answer_too_large_for_a_frame_is_replaced_by_an_error_that_fits() {
    let body = Bytes::from(vec![b'x'; MIN_MESSAGE_BYTES]);
    let wire = Outcome::Http(pb::HttpResponse { status: 200, body: body.clone(), ..Default::default() });
    let own = HttpReply::new(http::StatusCode::OK, Some("application/octet-stream"), body);
    for outcome in [Reply::Outcome(wire), Reply::Http(own)] {
        too_large_is_replaced(outcome);
    }
}

fn too_large_is_replaced(outcome: Reply) {
    let mut session = serving_small_frames(&["GET::/a"]);
    session.handle(T0, dispatch("e1", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::Completed { id: "e1".into(), outcome });
    let actions = drain(&mut session);
    assert!(!actions.iter().any(|a| matches!(a, Action::SendHttp(_))), "{actions:?}");
    let result = &results(&actions)[0];
    assert_eq!(result.credit_grant, 1, "the place goes back as for any answer");
    match &result.outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, error_type::RESULT_TOO_LARGE);
            assert!(error.message.contains(&MIN_MESSAGE_BYTES.to_string()), "{}", error.message);
        }
        other => panic!("expected the error, got {other:?}"),
    }
    for action in &actions {
        if let Action::Send(message) = action {
            assert!(message.encoded_len() <= MIN_MESSAGE_BYTES);
        }
    }
    assert!(actions.iter().any(|a| matches!(a, Action::Warn(w) if w.contains("CELERITY_MAX_MESSAGE_BYTES"))));
    assert!(session.tables_empty());
}

#[test]
fn a_ws_send_too_large_for_a_frame_is_not_sent() {
    let mut session = serving_small_frames(&["GET::/a"]);
    let messages = vec![pb::WsOutbound {
        connection_id: "c".into(),
        message: vec![b'm'; MIN_MESSAGE_BYTES].into(),
        ..Default::default()
    }];
    session.handle(T0, Input::WsSend { correlation_id: "w1".into(), messages, timeout_ms: 1_000 });
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    match &ws_done(&actions)[..] {
        [(id, WsOutcome::TooLarge { bytes, limit })] => {
            assert_eq!(id, "w1");
            assert!(*bytes > MIN_MESSAGE_BYTES);
            assert_eq!(*limit, MIN_MESSAGE_BYTES);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(session.tables_empty());
}

#[test]
fn an_over_long_id_is_dropped_with_its_place_returned_and_a_short_warning() {
    let mut session = serving(&["GET::/a"], 4);
    let id = "i".repeat(MAX_ID_BYTES + 1);
    session.handle(T0, dispatch(&id, "GET::/a", 0));
    let actions = drain(&mut session);
    assert!(results(&actions).is_empty());
    assert!(!actions.iter().any(|a| matches!(a, Action::Start { .. })));
    assert!(matches!(&sent(&actions)[..], [handler_message::Frame::Credit(CreditGrant { additional: 1 })]));
    let warning = actions.iter().find_map(|a| match a {
        Action::Warn(w) => Some(w.clone()),
        _ => None,
    });
    let warning = warning.expect("a warning");
    assert!(warning.len() < 2 * QUOTED_BYTES + 300, "the id is not echoed whole: {} bytes", warning.len());
    assert!(warning.contains(&format!("({} bytes)", MAX_ID_BYTES + 1)), "{warning}");
    // An id at the limit is served.
    let id = "i".repeat(MAX_ID_BYTES);
    session.handle(T0, dispatch(&id, "GET::/a", 0));
    assert!(drain(&mut session).iter().any(|a| matches!(a, Action::Start { .. })));
}

#[test]
fn a_huge_unknown_tag_is_answered_without_being_echoed_whole() {
    let mut session = serving(&["GET::/a"], 4);
    let tag = format!("GET::/{}", "\u{1}".repeat(1_000_000));
    session.handle(T0, dispatch("e1", &tag, 0));
    let actions = drain(&mut session);
    let result = &results(&actions)[0];
    match &result.outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, error_type::UNKNOWN_TAG);
            assert!(error.message.len() < 2_000, "{} bytes", error.message.len());
        }
        other => panic!("expected UnknownHandlerTag, got {other:?}"),
    }
}

#[test]
fn quoting_cuts_at_a_character_boundary() {
    assert_eq!(quoted("abc"), "\"abc\"");
    let long = "é".repeat(QUOTED_BYTES);
    let q = quoted(&long);
    assert!(q.ends_with(&format!("... ({} bytes)", long.len())), "{q}");
    assert!(q.len() < QUOTED_BYTES + 40);
}

// ----- hostile input: frames that do not decode, out of place, in floods -----

/// A `Dispatch` encoded, then made undecodable by writing `to` over the
/// first occurrence of `from`; with the decoder's error.
fn undecodable(id: &str, path: &str, from: &[u8], to: &[u8]) -> Input {
    let message = RuntimeMessage {
        frame: Some(runtime_message::Frame::Dispatch(Dispatch {
            id: id.to_string(),
            handler_tag: "GET::/a".to_string(),
            source: Some(pb::dispatch::Source::Http(pb::HttpRequest { path: path.to_string(), ..Default::default() })),
            ..Default::default()
        })),
    };
    let mut bytes = message.encode_to_vec();
    let at = bytes.windows(from.len()).position(|w| w == from).expect("the bytes to replace");
    bytes[at..at + to.len()].copy_from_slice(to);
    raw_frame(bytes)
}

fn raw_frame(bytes: Vec<u8>) -> Input {
    let error = RuntimeMessage::decode(bytes.as_slice()).expect_err("a frame that does not decode");
    Input::Undecodable { frame: bytes.into(), error }
}

/// `actions` answer `id` alone, as a `Dispatch` of `GET::/a` whose path
/// did not decode: `UndecodableDispatch` naming the field, with its place,
/// and one warning naming the event and its tag.
fn answered_undecodable(actions: &[Action], id: &str) {
    let answered = results(actions);
    assert_eq!(answered.len(), 1);
    assert_eq!((answered[0].id.as_str(), answered[0].credit_grant), (id, 1), "answered, its place back");
    match &answered[0].outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, error_type::UNDECODABLE);
            assert!(error.message.contains("HttpRequest.path"), "the field is named: {}", error.message);
        }
        other => panic!("expected a HandlerError, got {other:?}"),
    }
    let warnings = warned(actions);
    let named = format!("could not decode Dispatch \"{id}\"");
    assert!(matches!(&warnings[..], [w] if w.contains(&named) && w.contains("GET::/a")), "{warnings:?}");
}

#[test]
fn an_undecodable_dispatch_whose_id_can_be_read_is_answered_naming_the_field() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, undecodable("bad-1", "/orders", b"/orders", b"/\xff\xfe\xfd"));
    let actions = drain(&mut session);
    assert!(!actions.iter().any(|a| matches!(a, Action::Start { .. })), "no handler runs");
    answered_undecodable(&actions, "bad-1");
    // Nothing else is lost: the next event is served.
    session.handle(T0, dispatch("good", "GET::/a", 0));
    assert!(drain(&mut session).iter().any(|a| matches!(a, Action::Start { .. })));
}

#[test]
fn an_undecodable_dispatch_goes_through_the_checks_of_any_other() {
    let mut session = serving(&["GET::/a"], 1);
    session.handle(T0, dispatch("held", "GET::/a", 0));
    drain(&mut session);
    // Beyond the window: answered, outside the accounting.
    session.handle(T0, undecodable("over", "/x", b"/x", b"\xff"));
    let answered = results(&drain(&mut session));
    assert!(matches!(&answered[..], [r] if r.id == "over" && r.credit_grant == 1));
    // An id in flight: not answered, for the answer would be taken as the
    // first one's.
    session.handle(T0, completed("held"));
    drain(&mut session);
    session.handle(T0, dispatch("twice", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, undecodable("twice", "/x", b"/x", b"\xff"));
    let actions = drain(&mut session);
    assert!(results(&actions).is_empty());
    assert_eq!(sent(&actions), [handler_message::Frame::Credit(CreditGrant { additional: 1 })]);
}

/// A `Dispatch` as the driver's decoder gives it: its source still
/// encoded, here an HTTP request whose path is `path`'s bytes.
fn lazy_dispatch(id: &str, tag: &str, path: &[u8]) -> Input {
    let mut request = pb::HttpRequest { path: "p".repeat(path.len()), ..Default::default() }.encode_to_vec();
    let at = request.len() - path.len();
    request[at..].copy_from_slice(path);
    let bytes = bytes::Bytes::from(request);
    Input::Dispatch(Event {
        id: id.to_string(),
        handler_tag: tag.to_string(),
        source: Some(LazySource::encoded(HandlerKind::Http, bytes)),
        ..Default::default()
    })
}

#[test]
fn a_dispatch_with_its_source_encoded_is_checked_and_started_as_a_decoded_one() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, lazy_dispatch("1", "GET::/a", b"/a"));
    let actions = drain(&mut session);
    let [Action::Start { dispatch, .. }] = &actions[..] else { panic!("started: {actions:?}") };
    let source = dispatch.source.clone().unwrap().decode().unwrap();
    assert_eq!(source, pb::dispatch::Source::Http(pb::HttpRequest { path: "/a".into(), ..Default::default() }));
    // Its kind is read without decoding it: a custom handler's tag is
    // answered WrongEventSource, with nothing started.
    let mut session = Session::new(
        SessionConfig::new(vec![HandlerSpec::new(HandlerKey::Tag("c".into()), HandlerKind::Custom, "app::c")], 2),
        T0,
    );
    session.handle(T0, config_frame(&[("h-c", "c")], Some((1, 0))));
    session.handle(T0, ack(true));
    drain(&mut session);
    session.handle(T0, lazy_dispatch("2", "c", b"/a"));
    let actions = drain(&mut session);
    assert!(!actions.iter().any(|a| matches!(a, Action::Start { .. })));
    let answered = results(&actions);
    assert!(
        matches!(&answered[..], [r] if matches!(&r.outcome, Some(Outcome::Error(e)) if e.r#type == error_type::WRONG_SOURCE)),
        "{answered:?}"
    );
}

#[test]
fn a_source_found_undecodable_in_its_task_is_answered_as_an_undecodable_dispatch() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, lazy_dispatch("bad", "GET::/a", b"/\xff"));
    let actions = drain(&mut session);
    let [Action::Start { id, dispatch, .. }] = &actions[..] else { panic!("started: {actions:?}") };
    let error = dispatch.source.clone().unwrap().decode().unwrap_err();
    session.handle(T0, Input::finished(Arc::clone(id), Err(error)));
    answered_undecodable(&drain(&mut session), "bad");
    assert!(session.tables_empty());
    // Too late: one answered already (here, at its deadline) is not answered twice.
    let mut session = serving(&["GET::/a"], 2);
    let Input::Dispatch(mut event) = lazy_dispatch("late", "GET::/a", b"/\xff") else { unreachable!() };
    event.deadline_unix_ms = T0 + 10;
    session.handle(T0, Input::Dispatch(event));
    let actions = drain(&mut session);
    let [Action::Start { id, dispatch, .. }] = &actions[..] else { panic!("started: {actions:?}") };
    let (id, error) = (Arc::clone(id), dispatch.source.clone().unwrap().decode().unwrap_err());
    session.handle(T0 + 10, Input::Tick);
    session.handle(T0 + 10 + DEFAULT_CANCEL_GRACE_MS as i64, Input::Tick);
    assert_eq!(results(&drain(&mut session)).len(), 1, "answered for at the deadline");
    session.handle(T0 + 20_000, Input::finished(id, Err(error)));
    assert!(results(&drain(&mut session)).is_empty());
}

#[test]
fn an_undecodable_dispatch_without_a_readable_id_returns_its_place() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, undecodable("id-\u{e9}", "/x", "id-\u{e9}".as_bytes(), b"id-\xff\xff"));
    let actions = drain(&mut session);
    assert!(results(&actions).is_empty());
    assert_eq!(sent(&actions), [handler_message::Frame::Credit(CreditGrant { additional: 1 })]);
    let warnings = warned(&actions);
    assert!(matches!(&warnings[..], [w] if w.contains("its id is not UTF-8")), "{warnings:?}");
}

#[test]
fn an_undecodable_frame_of_another_kind_is_logged_naming_its_kind() {
    let mut session = serving(&["GET::/a"], 2);
    let cancel =
        RuntimeMessage { frame: Some(runtime_message::Frame::Cancel(pb::Cancel { id: "evt-1".into(), reason: 1 })) };
    let mut bytes = cancel.encode_to_vec();
    let at = bytes.windows(5).position(|w| w == b"evt-1").unwrap();
    bytes[at] = 0xff;
    session.handle(T0, raw_frame(bytes));
    let actions = drain(&mut session);
    let warnings = warned(&actions);
    assert!(
        matches!(&warnings[..], [w] if w.contains("could not decode a Cancel") && w.contains("Cancel.id")),
        "{warnings:?}"
    );
    assert!(sent(&actions).is_empty());
    // Bytes that are no frame at all: named as such, later.
    session.handle(T0 + WARNING_INTERVAL_MS, raw_frame(vec![0xff; 8]));
    let warnings = warned(&drain(&mut session));
    assert!(matches!(&warnings[..], [w] if w.contains("frame of unknown kind")), "{warnings:?}");
    assert!(session.is_serving());
}

#[test]
fn an_undecodable_handshake_frame_ends_the_session_naming_it() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    let config = RuntimeMessage {
        frame: Some(runtime_message::Frame::Config(RuntimeConfig {
            handlers: vec![handler_config("a", "GET::/a")],
            ..Default::default()
        })),
    };
    let mut bytes = config.encode_to_vec();
    let at = bytes.windows(7).position(|w| w == b"GET::/a").unwrap();
    bytes[at] = 0xff;
    session.handle(T0, raw_frame(bytes));
    let error = exit(&drain(&mut session)).unwrap().unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("could not decode the RuntimeConfig") && text.contains("HandlerConfig.handler_tag"),
        "{text}"
    );
}

#[test]
fn a_frame_too_large_is_the_sdks_refusal_naming_size_and_limit() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("held", "GET::/a", 0));
    drain(&mut session);
    session.handle(T0, Input::FrameTooLarge { bytes: 2_097_190, limit: 1_048_576 });
    let actions = drain(&mut session);
    assert!(sent(&actions).is_empty());
    assert!(actions.contains(&Action::Abandon { id: "held".into() }));
    let error = exit(&actions).unwrap().unwrap_err();
    assert_eq!(error, SessionError::FrameTooLarge { bytes: 2_097_190, limit: 1_048_576, in_flight: 1 });
    let text = error.to_string();
    assert!(text.contains("refused a frame of 2097190 bytes"), "{text}");
    assert!(text.contains("1048576 bytes (CELERITY_MAX_MESSAGE_BYTES)"), "{text}");
    assert!(!text.contains("the runtime closed the stream"), "not the runtime's doing: {text}");
    assert!(session.is_closed());
}

#[test]
fn a_second_runtime_config_before_the_ack_is_ignored_with_a_warning() {
    let mut session = Session::new(SessionConfig::new(vec![spec("GET::/a")], 4), T0);
    session.handle(T0, config_frame(&[("a", "GET::/a")], Some((1, 0))));
    drain(&mut session);
    session.handle(T0 + 1, config_frame(&[("b", "GET::/b")], Some((1, 0))));
    let actions = drain(&mut session);
    assert_eq!(exit(&actions), None, "the handshake goes on");
    assert!(sent(&actions).is_empty(), "no second Ready");
    let warnings = warned(&actions);
    assert!(matches!(&warnings[..], [w] if w.contains("second RuntimeConfig before ReadyAck")), "{warnings:?}");
    session.handle(T0 + 2, ack(true));
    drain(&mut session);
    // The first config's binding stands.
    session.handle(T0 + 3, dispatch("1", "GET::/a", 0));
    assert!(drain(&mut session).iter().any(|a| matches!(a, Action::Start { handler: 0, .. })));
}

#[test]
fn a_negative_deadline_is_in_the_past_and_only_zero_is_none() {
    assert_eq!(event_deadline(0), None);
    assert_eq!(event_deadline(-1), Some(-1));
    assert_eq!(event_deadline(T0), Some(T0));
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("past", "GET::/a", -5));
    let actions = drain(&mut session);
    assert!(matches!(actions[0], Action::Start { .. }));
    assert!(actions.contains(&Action::Cancel { id: "past".into(), reason: CancelReason::DeadlineExceeded }));
    let answered = results(&actions);
    assert!(
        matches!(&answered[..], [r] if matches!(&r.outcome, Some(Outcome::Error(e)) if e.r#type == error_type::DEADLINE_EXCEEDED)),
        "{answered:?}"
    );
    assert!(session.tables_empty());
}

#[test]
fn warnings_about_the_runtime_are_logged_once_then_counted() {
    let mut session = serving(&["GET::/a"], 4);
    session.handle(T0, dispatch("held", "GET::/a", 0));
    drain(&mut session);
    let mut warnings = Vec::new();
    for i in 0..1000 {
        let now = T0 + i;
        session.handle(now, Input::from(RuntimeMessage { frame: None }));
        session.handle(now, ws_ack(&format!("stray-{i}")));
        session.handle(now, dispatch("", "GET::/a", 0));
        session.handle(now, dispatch("held", "GET::/a", 0));
        let actions = drain(&mut session);
        warnings.extend(warned(&actions));
        // Each dispatch's place still comes back, logged or not.
        assert_eq!(sent(&actions).len(), 2, "{actions:?}");
    }
    assert_eq!(warnings.len(), 3, "one line per kind (no id and an id in flight are one kind): {warnings:#?}");
    assert!(warnings.iter().any(|w| w.contains("frame with nothing in it")));
    assert!(warnings.iter().any(|w| w.contains("\"stray-0\", which is not awaited")));
    assert!(warnings.iter().any(|w| w.contains("it has no id")));
    // Then, once per interval, what was held back.
    assert!(drain(&mut session).is_empty());
    session.handle(T0 + WARNING_INTERVAL_MS, Input::Tick);
    let counted = warned(&drain(&mut session));
    assert_eq!(counted.len(), 3, "{counted:#?}");
    assert!(counted.iter().any(|w| w.contains("999 more frame(s) with nothing in them")), "{counted:#?}");
    assert!(counted.iter().any(|w| w.contains("999 more WebSocket acknowledgement(s)")), "{counted:#?}");
    assert!(counted.iter().any(|w| w.contains("1999 more dispatch(es) that could not be answered")), "{counted:#?}");
    assert!(counted.iter().all(|w| w.contains("in the last 10.0 s")), "{counted:#?}");
}

#[test]
fn what_was_counted_is_said_before_the_session_ends() {
    let mut session = serving(&["GET::/a"], 4);
    for _ in 0..5 {
        session.handle(T0, Input::from(RuntimeMessage { frame: None }));
    }
    drain(&mut session);
    session.handle(T0 + 1, Input::StreamEnded { error: None });
    let actions = drain(&mut session);
    let exit_at = actions.iter().position(|a| matches!(a, Action::Exit(_))).unwrap();
    let counted = actions.iter().position(|a| matches!(a, Action::Warn(w) if w.contains("4 more frame(s)"))).unwrap();
    assert!(counted < exit_at, "{actions:?}");
}

#[test]
fn a_source_the_handler_does_not_take_is_answered_without_starting_it() {
    let mut session = serving(&["custom::quote"], 2);
    let Input::Frame(message) = dispatch("e1", "custom::quote", 0) else { panic!("a frame") };
    let Some(runtime_message::Frame::Dispatch(mut dispatch)) = message.frame else { panic!("a Dispatch") };
    // `spec` registers HTTP handlers: a custom invocation is not one's.
    dispatch.source = Some(pb::dispatch::Source::Custom(pb::CustomInvoke::default()));
    session.handle(T0, Input::from(RuntimeMessage { frame: Some(runtime_message::Frame::Dispatch(dispatch.clone())) }));
    let actions = drain(&mut session);
    assert!(!actions.iter().any(|a| matches!(a, Action::Start { .. })), "{actions:?}");
    let [result] = &results(&actions)[..] else { panic!("one answer: {actions:?}") };
    assert_eq!(result.credit_grant, 1, "its place is given back");
    match &result.outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, error_type::WRONG_SOURCE);
            assert_eq!(
                error.message,
                "handler `app::custom::quote` serves HTTP events, but the runtime sent a custom invocation for tag \"custom::quote\""
            );
        }
        other => panic!("expected WrongEventSource, got {other:?}"),
    }
    // No source at all is answered the same way.
    dispatch.id = "e2".into();
    dispatch.source = None;
    session.handle(T0, Input::from(RuntimeMessage { frame: Some(runtime_message::Frame::Dispatch(dispatch)) }));
    let actions = drain(&mut session);
    assert!(matches!(&results(&actions)[0].outcome, Some(Outcome::Error(e)) if e.message.contains("no source at all")));
    assert!(session.tables_empty());
}

#[test]
fn an_answer_of_another_shape_is_replaced_by_an_error_naming_both() {
    let mut session = serving(&["GET::/a"], 2);
    session.handle(T0, dispatch("e1", "GET::/a", 0));
    drain(&mut session);
    let schedule_ack = Outcome::Schedule(pb::Ack { success: true, error_message: String::new() });
    session.handle(T0, Input::Completed { id: "e1".into(), outcome: schedule_ack.into() });
    let actions = drain(&mut session);
    let [result] = &results(&actions)[..] else { panic!("one answer: {actions:?}") };
    match &result.outcome {
        Some(Outcome::Error(error)) => {
            assert_eq!(error.r#type, error_type::WRONG_OUTCOME);
            assert!(
                error.message.contains("serves HTTP events, but answered with a schedule Ack"),
                "{}",
                error.message
            );
            assert!(error.message.contains("\"GET::/a\""), "{}", error.message);
        }
        other => panic!("expected WrongOutcomeShape, got {other:?}"),
    }
    assert_eq!(result.credit_grant, 1);
}
