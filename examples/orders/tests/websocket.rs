//! Live order updates over WebSocket in `orders`.

mod common;

use common::{PANICKED, Service, event, handler_error, http, websocket_ack};
use serde_json::json;

fn subscribe(connection: &str, order_ids: &[&str]) -> event::WebSocketEvent {
    event::websocket("subscribe", connection)
        .with_text(json!({"event": "subscribe", "data": {"orderIds": order_ids}}).to_string())
}

fn pay(id: &str) -> event::HttpEvent {
    event::http("PATCH", format!("/orders/{id}"))
        .route("/orders/{id}")
        .path_param("id", id)
        .json_text(r#"{"status": "paid"}"#)
}

#[tokio::test]
async fn subscribers_get_each_update_until_they_disconnect() {
    let service = Service::start().await;
    let id = service.create_order("Ada", &[("latte", 1)], &[]).await;
    for connection in ["ws-1", "ws-2"] {
        let ack = websocket_ack(&service.call(event::websocket_connect(connection)).await).clone();
        assert!(ack.success, "{ack:?}");
        let ack = websocket_ack(&service.call(subscribe(connection, &[&id])).await).clone();
        assert!(ack.success && ack.error_message.is_empty(), "{ack:?}");
    }

    assert_eq!(http(&service.call(pay(&id)).await).status, 200);
    // One WsSend to both subscribers, each message asking its client to
    // acknowledge it, with an id the client can recognise.
    let send = service.conn.next_ws_send().await.unwrap();
    let ids: Vec<&str> = send.messages.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, [format!("{id}:v2:ws-1"), format!("{id}:v2:ws-2")]);
    for message in &send.messages {
        assert!(message.wait_for_ack);
        let payload: serde_json::Value = serde_json::from_slice(&message.message).unwrap();
        assert_eq!(payload["event"], "orderUpdated");
        assert_eq!(payload["data"]["status"], "paid");
        assert_eq!(payload["messageId"], message.message_id.as_str());
        assert_eq!(payload["ack"], true);
    }
    // ws-2's client never acknowledged: exactly that message is sent again.
    service
        .conn
        .ws_ack(celerity_testkit::proto::v1::WsSendAck {
            correlation_id: send.correlation_id.clone(),
            success: false,
            failures: vec![celerity_testkit::proto::v1::WsSendFailure {
                index: 1,
                connection_id: "ws-2".into(),
                error_message: "message lost".into(),
            }],
        })
        .unwrap();
    let retry = service.conn.next_ws_send().await.unwrap();
    assert_eq!(retry.messages, vec![send.messages[1].clone()]);
    service.conn.ws_ack_success(&retry.correlation_id).unwrap();

    assert!(websocket_ack(&service.call(event::websocket_disconnect("ws-1")).await).success);
    let cancel = event::http("DELETE", format!("/orders/{id}")).route("/orders/{id}").path_param("id", &id);
    assert_eq!(http(&service.call(cancel).await).status, 200);
    // After ws-1 went away, only ws-2 is sent the next update.
    let send = service.conn.next_ws_send().await.unwrap();
    let connections: Vec<&str> = send.messages.iter().map(|m| m.connection_id.as_str()).collect();
    assert_eq!(connections, ["ws-2"]);
    service.conn.ws_ack_success(&send.correlation_id).unwrap();
    service.finish().await;
}

#[tokio::test]
async fn a_bad_subscription_fails_the_ack_with_its_reason() {
    let service = Service::start().await;
    assert!(websocket_ack(&service.call(event::websocket_connect("ws-1")).await).success);

    let result = service.call(subscribe("ws-1", &["ord-404"])).await;
    let ack = websocket_ack(&result);
    assert!(!ack.success);
    assert_eq!(ack.error_message, "cannot subscribe to order \"ord-404\": no such order");

    let result = service
        .call(
            event::websocket("subscribe", "ws-1").with_text(r#"{"event": "subscribe", "data": {"orderIds": "ord-1"}}"#),
        )
        .await;
    let ack = websocket_ack(&result);
    assert!(!ack.success);
    assert!(ack.error_message.contains("`data.orderIds`"), "{ack:?}");

    let result = service.call(event::websocket("subscribe", "ws-1").with_binary(vec![1, 2, 3])).await;
    let ack = websocket_ack(&result);
    assert!(!ack.success && ack.error_message.contains("binary"), "{ack:?}");

    assert!(websocket_ack(&service.call(event::websocket_disconnect("ws-1")).await).success);
    service.finish().await;
}

#[tokio::test]
async fn a_panic_is_a_handler_error_and_serving_goes_on() {
    let service = Service::start_with(&[("ORDERS_CHAOS", "1")]).await;
    let result = service.call(subscribe("ws-1", &["chaos:panic"])).await;
    let error = handler_error(&result);
    assert_eq!(error.r#type, "panic");
    assert_eq!(error.message, PANICKED, "the panic's message stays in the process's log");

    let id = service.create_order("Ada", &[("latte", 1)], &[]).await;
    assert!(websocket_ack(&service.call(subscribe("ws-1", &[&id])).await).success);
    service.finish().await;
}
