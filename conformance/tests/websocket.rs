//! The WebSocket side channel end to end: handlers send with `WsSender`,
//! the test kit plays the runtime and answers each `WsSend` with the
//! `WsSendAck` a test chooses.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use celerity_testkit::event;
use celerity_testkit::proto::v1::{self as pb, result::Outcome};
use common::{WAIT, start, start_unversioned};

fn send_request(body: serde_json::Value) -> event::HttpEvent {
    event::http("POST", "/ws/send").header("content-type", "application/json").body(body.to_string())
}

fn json_answer(result: &pb::Result) -> serde_json::Value {
    match &result.outcome {
        Some(Outcome::Http(response)) => {
            assert_eq!(response.status, 200, "{response:?}");
            serde_json::from_slice(&response.body).expect("a JSON answer")
        }
        other => panic!("expected an HTTP answer, got {other:?}"),
    }
}

fn failure(index: u32, connection: &str, error: &str) -> pb::WsSendFailure {
    pb::WsSendFailure { index, connection_id: connection.to_string(), error_message: error.to_string() }
}

#[tokio::test]
async fn a_failure_in_the_middle_is_reported_by_index_and_only_it_is_retried() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    let id = conn
        .dispatch(send_request(serde_json::json!({
            "messages": [
                {"connection": "c1", "text": "{\"n\":1}", "message_id": "m-1"},
                {"connection": "c2", "text": "{\"n\":2}", "wait_for_ack": true},
                {"connection": "c3", "text": "{\"n\":3}", "message_id": "m-3"},
            ],
            "retry_failed": true,
        })))
        .unwrap();
    let first = conn.next_ws_send().await.unwrap();
    assert_eq!(first.messages.len(), 3);
    let connections: Vec<&str> = first.messages.iter().map(|m| m.connection_id.as_str()).collect();
    assert_eq!(connections, ["c1", "c2", "c3"]);
    let generated_id = first.messages[1].message_id.clone();
    assert!(!generated_id.is_empty(), "wait_for_ack needs an id");
    conn.ws_ack(pb::WsSendAck {
        correlation_id: first.correlation_id.clone(),
        success: false,
        failures: vec![failure(1, "c2", "client did not acknowledge")],
    })
    .unwrap();

    let retry = conn.next_ws_send().await.unwrap();
    assert_ne!(retry.correlation_id, first.correlation_id, "a retry is a new WsSend");
    assert_eq!(retry.messages, vec![first.messages[1].clone()], "exactly the failed message, byte for byte");
    conn.ws_ack_success(&retry.correlation_id).unwrap();

    let answer = json_answer(&conn.result(&id).await.unwrap());
    assert_eq!(answer["result"], "failed");
    assert_eq!(answer["failed"], serde_json::json!([[1, "c2", "client did not acknowledge"]]));
    assert_eq!(answer["retry"]["result"], "ok");
    served.drain_and_exit().await;
}

#[tokio::test]
async fn acknowledgements_out_of_order_reach_their_own_senders() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    let first_id =
        conn.dispatch(send_request(serde_json::json!({"messages": [{"connection": "a", "text": "x"}]}))).unwrap();
    let first = conn.next_ws_send().await.unwrap();
    let second_id =
        conn.dispatch(send_request(serde_json::json!({"messages": [{"connection": "b", "text": "y"}]}))).unwrap();
    let second = conn.next_ws_send().await.unwrap();
    assert_eq!(second.messages[0].connection_id, "b");
    // The later send is answered first, and fails; the earlier succeeds.
    conn.ws_ack(pb::WsSendAck {
        correlation_id: second.correlation_id.clone(),
        success: false,
        failures: vec![failure(0, "b", "gone")],
    })
    .unwrap();
    conn.ws_ack_success(&first.correlation_id).unwrap();
    assert_eq!(json_answer(&conn.result(&second_id).await.unwrap())["result"], "failed");
    assert_eq!(json_answer(&conn.result(&first_id).await.unwrap())["result"], "ok");
    served.drain_and_exit().await;
}

#[tokio::test]
async fn a_thousand_concurrent_sends_from_a_hundred_handlers_each_get_their_own_outcome() {
    const HANDLERS: usize = 100;
    const SENDS: usize = 10;
    let mut served = start(&[("CELERITY_HANDLER_CONCURRENCY", "100")]).await;
    let conn = &served.conn;
    let mut ids = Vec::new();
    for _ in 0..HANDLERS {
        ids.push(conn.dispatch(event::http("POST", "/ws/fanout").query("sends", SENDS.to_string()).body("")).unwrap());
    }
    // Answer every send as it comes: those to an odd-numbered connection
    // fail, naming the connection, so each outcome is recognisably its own.
    let mut expected: HashMap<String, String> = HashMap::new();
    for _ in 0..HANDLERS * SENDS {
        let send = conn.take_frame("a WsSend", WAIT, |m| match &m.frame {
            Some(pb::handler_message::Frame::WsSend(w)) => Some(w.clone()),
            _ => None,
        });
        let send = send.await.unwrap();
        assert_eq!(send.messages.len(), 1);
        let connection = send.messages[0].connection_id.clone();
        let odd = connection.rsplit('-').next().and_then(|n| n.parse::<usize>().ok()).unwrap() % 2 == 1;
        let ack = if odd {
            expected.insert(connection.clone(), format!("{connection}:failed:refused {connection}"));
            pb::WsSendAck {
                correlation_id: send.correlation_id,
                success: false,
                failures: vec![failure(0, &connection, &format!("refused {connection}"))],
            }
        } else {
            expected.insert(connection.clone(), format!("{connection}:ok"));
            pb::WsSendAck { correlation_id: send.correlation_id, success: true, failures: vec![] }
        };
        conn.ws_ack(ack).unwrap();
    }
    for id in &ids {
        let answer = json_answer(&conn.result(id).await.unwrap());
        let outcomes: Vec<String> = serde_json::from_value(answer).unwrap();
        assert_eq!(outcomes.len(), SENDS);
        for (i, outcome) in outcomes.iter().enumerate() {
            let connection = format!("{id}-{i}");
            assert_eq!(Some(outcome), expected.get(&connection), "send {i} of {id}");
        }
    }
    served.drain_and_exit().await;
}

#[tokio::test]
async fn a_send_never_acknowledged_times_out_and_a_late_ack_is_ignored() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    let id = conn
        .dispatch(send_request(serde_json::json!({"messages": [{"connection": "c", "text": "x"}], "timeout_ms": 300})))
        .unwrap();
    let send = conn.next_ws_send().await.unwrap();
    let answer = json_answer(&conn.result(&id).await.unwrap());
    assert_eq!(answer["result"], "timed_out");
    // Too late: nobody waits for it any more, and nothing breaks.
    conn.ws_ack_success(&send.correlation_id).unwrap();
    let result = conn.call(event::http("GET", "/fast")).await.unwrap();
    assert!(matches!(result.outcome, Some(Outcome::Http(_))));
    served.drain_and_exit().await;
}

#[tokio::test]
async fn a_send_in_flight_during_drain_still_gets_its_acknowledgement() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    let id = conn.dispatch(send_request(serde_json::json!({"messages": [{"connection": "c", "text": "x"}]}))).unwrap();
    let send = conn.next_ws_send().await.unwrap();
    conn.drain_in(Duration::from_secs(10)).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    conn.ws_ack_success(&send.correlation_id).unwrap();
    let answer = json_answer(&conn.result(&id).await.unwrap());
    assert_eq!(answer["result"], "ok");
    let end = conn.closed_timeout(WAIT).await.unwrap();
    assert!(end.is_clean(), "{end}");
    conn.assert_no_violations();
    let status = served.exit().await;
    assert!(status.success(), "{}", served.process.output_text());
}

#[tokio::test]
async fn wait_for_ack_adds_the_id_and_ack_to_a_json_payload() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    let id = conn
        .dispatch(send_request(serde_json::json!({"messages": [{
            "connection": "c",
            "text": "{\"event\":\"orderShipped\",\"data\":{\"id\":7}}",
            "message_id": "order-7",
            "wait_for_ack": true,
        }]})))
        .unwrap();
    let send = conn.next_ws_send().await.unwrap();
    let message = &send.messages[0];
    assert!(message.wait_for_ack);
    assert_eq!(message.message_id, "order-7");
    let payload: serde_json::Value = serde_json::from_slice(&message.message).unwrap();
    assert_eq!(
        payload,
        serde_json::json!({"event": "orderShipped", "data": {"id": 7}, "messageId": "order-7", "ack": true})
    );
    conn.ws_ack_success(&send.correlation_id).unwrap();
    assert_eq!(json_answer(&conn.result(&id).await.unwrap())["result"], "ok");
    served.drain_and_exit().await;
}

#[tokio::test]
async fn a_runtime_without_version_cannot_confirm_wait_for_ack_and_the_send_says_so() {
    let mut served = start_unversioned(&[]).await;
    let conn = &served.conn;
    let send_twice = || {
        send_request(serde_json::json!({"messages": [
            {"connection": "c1", "text": "{\"n\":1}", "wait_for_ack": true},
            {"connection": "c2", "text": "{\"n\":2}"},
        ]}))
    };
    for _ in 0..2 {
        let id = conn.dispatch(send_twice()).unwrap();
        // Such a runtime writes each message and answers success at once.
        let send = conn.next_ws_send().await.unwrap();
        conn.ws_ack_success(&send.correlation_id).unwrap();
        let answer = json_answer(&conn.result(&id).await.unwrap());
        assert_eq!(answer["result"], "unconfirmed", "{answer}");
        assert_eq!(answer["unconfirmed"], serde_json::json!([0]), "{answer}");
        assert_eq!(answer["failed"], serde_json::json!([]), "{answer}");
    }
    // A send that asks for no acknowledgement is what the runtime says.
    let id = conn.dispatch(send_request(serde_json::json!({"messages": [{"connection": "c3", "text": "x"}]}))).unwrap();
    let send = conn.next_ws_send().await.unwrap();
    conn.ws_ack_success(&send.correlation_id).unwrap();
    assert_eq!(json_answer(&conn.result(&id).await.unwrap())["result"], "ok");
    served.drain_and_exit().await;
    let output = served.process.output_text();
    assert_eq!(output.matches("does not wait for a client's acknowledgement").count(), 1, "said once:\n{output}");
}

#[tokio::test]
async fn invalid_messages_are_refused_before_anything_is_sent() {
    let mut served = start(&[]).await;
    let conn = &served.conn;
    // A truncated binary frame, and text that is not a JSON object with
    // wait_for_ack: each refuses its whole batch.
    for message in [
        serde_json::json!({"connection": "c", "raw_binary": [2, 97, 98, 0]}),
        serde_json::json!({"connection": "c", "text": "plain words", "wait_for_ack": true}),
    ] {
        let batch = serde_json::json!({"messages": [{"connection": "ok", "text": "fine"}, message]});
        let answer = json_answer(&conn.call(send_request(batch)).await.unwrap());
        assert_eq!(answer["result"], "invalid", "{answer}");
    }
    assert!(conn.try_next_frame().is_none(), "nothing was sent");
    served.drain_and_exit().await;
}
