//! The WebSocket side of the dev runtime at `/ws`: the capabilities frame
//! first, routing client messages to handler tags (JSON text by a route key,
//! binary frames by their route), `$connect` / `$disconnect`, the reserved
//! ping and ack frames, and the
//! delivery of the handler's `WsSend` messages to connected clients,
//! including waiting for a client's acknowledgement.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use celerity_testkit::dispatcher::ws::{BinaryFrame, DeliveryFuture, ReservedFrame, WsDelivery, WsOutcome};
use celerity_testkit::dispatcher::{Dispatcher, EventOutcome};
use celerity_testkit::proto::v1::{Dispatch, WebSocketMessage, WsOutbound, dispatch::Source, result::Outcome};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::config::App;
use crate::log;

/// WebSocket settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsOptions {
    /// The JSON field naming a text message's route.
    pub route_key: String,
    /// How long to wait for a client's acknowledgement of one attempt.
    pub ack_timeout: Duration,
    /// Whether a message sent with `wait_for_ack` waits for its client's
    /// acknowledgement, as a runtime that negotiated the protocol version
    /// does; without, it is answered once written, as the runtime that
    /// predates negotiation answers.
    pub waits_for_client_acks: bool,
    /// How many attempts before a message is declared lost.
    pub ack_attempts: u32,
}

impl Default for WsOptions {
    fn default() -> Self {
        WsOptions {
            route_key: "event".to_owned(),
            ack_timeout: Duration::from_secs(10),
            ack_attempts: 3,
            waits_for_client_acks: true,
        }
    }
}

/// What a client's frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A ping (`{"ping": true}` or `01 01 00 00`), answered with a pong.
    Ping {
        /// Whether it came as a binary frame.
        binary: bool,
    },
    /// The client acknowledges message `id`.
    Ack(String),
    /// An application message for `route`.
    Message {
        /// The route (`$default` when none was named).
        route: String,
        /// The client's id for it, if any.
        message_id: Option<String>,
        /// What the handler receives: the whole JSON text, or the binary
        /// payload with its framing removed.
        body: Bytes,
        /// Whether it came as a binary frame.
        binary: bool,
        /// Whether the client asked for an acknowledgement.
        wants_ack: bool,
    },
    /// Nothing to do, with why.
    Ignored(String),
}

/// Reads a text frame: reserved keys first, then the route key.
pub fn classify_text(text: &str, route_key: &str) -> Inbound {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let Some(Value::Object(obj)) = parsed else {
        return Inbound::Message {
            route: "$default".to_owned(),
            message_id: None,
            body: Bytes::copy_from_slice(text.as_bytes()),
            binary: false,
            wants_ack: false,
        };
    };
    if obj.get("ping") == Some(&Value::Bool(true)) {
        return Inbound::Ping { binary: false };
    }
    if obj.get("pong") == Some(&Value::Bool(true)) {
        return Inbound::Ignored("pong".to_owned());
    }
    if obj.get("event").and_then(Value::as_str) == Some("ack") {
        return match obj.get("data").and_then(|d| d.get("messageId")).and_then(Value::as_str) {
            Some(id) => Inbound::Ack(id.to_owned()),
            None => Inbound::Ignored("an ack without data.messageId".to_owned()),
        };
    }
    let route = obj.get(route_key).and_then(Value::as_str).filter(|r| !r.is_empty()).unwrap_or("$default");
    let message_id = obj.get("messageId").and_then(Value::as_str).map(str::to_owned);
    let wants_ack = obj.get("ack") == Some(&Value::Bool(true)) && message_id.is_some();
    Inbound::Message {
        route: route.to_owned(),
        message_id,
        body: Bytes::copy_from_slice(text.as_bytes()),
        binary: false,
        wants_ack,
    }
}

/// Reads a binary frame: a reserved frame, or a Celerity binary message.
pub fn classify_binary(bytes: &[u8]) -> Inbound {
    if let Some((kind, body)) = ReservedFrame::parse(bytes) {
        return match kind {
            ReservedFrame::Ping => Inbound::Ping { binary: true },
            ReservedFrame::Ack => {
                let id = serde_json::from_slice::<Value>(body)
                    .ok()
                    .and_then(|v| v.get("messageId").and_then(Value::as_str).map(str::to_owned));
                match id {
                    Some(id) => Inbound::Ack(id),
                    None => Inbound::Ignored("a binary ack without messageId".to_owned()),
                }
            }
            other => Inbound::Ignored(format!("reserved frame {other:?}")),
        };
    }
    match BinaryFrame::decode(bytes) {
        Ok(frame) => Inbound::Message {
            route: frame.route,
            message_id: (!frame.message_id.is_empty()).then_some(frame.message_id),
            body: frame.payload,
            binary: true,
            wants_ack: frame.require_ack,
        },
        Err(e) => Inbound::Ignored(format!("not a Celerity binary message: {e}")),
    }
}

/// The tag for `route`: `{routeKey}::{route}` when served, else
/// `{routeKey}::$default` when served.
pub fn resolve_tag(route: &str, route_key: &str, served: impl Fn(&str) -> bool) -> Option<String> {
    let tag = format!("{route_key}::{route}");
    if served(&tag) {
        return Some(tag);
    }
    let default = format!("{route_key}::$default");
    served(&default).then_some(default)
}

/// The id a client will acknowledge a message by: the `messageId` in a text
/// payload or a binary frame, else the outbound's `message_id`.
pub fn ack_id(out: &WsOutbound) -> Option<String> {
    let from_payload = if out.is_binary {
        BinaryFrame::decode(&out.message).ok().map(|f| f.message_id).filter(|id| !id.is_empty())
    } else {
        serde_json::from_slice::<Value>(&out.message)
            .ok()
            .and_then(|v| v.get("messageId").and_then(Value::as_str).map(str::to_owned))
    };
    from_payload.or_else(|| (!out.message_id.is_empty()).then(|| out.message_id.clone()))
}

fn ack_text(id: &str) -> Message {
    Message::text(json!({"event": "ack", "data": {"messageId": id, "timestamp": log::unix_ms()}}).to_string())
}

fn ack_binary(id: &str) -> Message {
    let mut bytes = ReservedFrame::Ack.header().to_vec();
    bytes.extend_from_slice(json!({"messageId": id, "timestamp": log::unix_ms()}).to_string().as_bytes());
    Message::binary(bytes)
}

struct Client {
    tx: mpsc::UnboundedSender<Message>,
    acks: HashMap<String, oneshot::Sender<()>>,
}

/// The connected clients, and the delivery of `WsSend` messages to them.
#[derive(Clone)]
pub struct Hub {
    clients: Arc<Mutex<HashMap<String, Client>>>,
    options: WsOptions,
}

impl Hub {
    /// No clients yet.
    pub fn new(options: WsOptions) -> Self {
        Hub { clients: Arc::new(Mutex::new(HashMap::new())), options }
    }

    /// The settings.
    pub fn options(&self) -> &WsOptions {
        &self.options
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Client>> {
        self.clients.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn register(&self, id: &str, tx: mpsc::UnboundedSender<Message>) {
        self.lock().insert(id.to_owned(), Client { tx, acks: HashMap::new() });
    }

    fn unregister(&self, id: &str) {
        self.lock().remove(id);
    }

    fn acknowledged(&self, connection: &str, message_id: &str) {
        if let Some(waiter) = self.lock().get_mut(connection).and_then(|c| c.acks.remove(message_id)) {
            let _ = waiter.send(());
        }
    }

    fn send_to(&self, connection: &str, message: Message) -> Result<(), String> {
        let clients = self.lock();
        let client = clients.get(connection).ok_or_else(|| format!("no connection {connection:?}"))?;
        client.tx.send(message).map_err(|_| format!("connection {connection:?} closed"))
    }

    async fn deliver_one(&self, out: WsOutbound) -> WsOutcome {
        let message = if out.is_binary {
            Message::binary(out.message.clone())
        } else {
            match String::from_utf8(out.message.to_vec()) {
                Ok(text) => Message::text(text),
                Err(_) => return WsOutcome::Failed("a text message that is not UTF-8".to_owned()),
            }
        };
        if !out.wait_for_ack || !self.options.waits_for_client_acks {
            return match self.send_to(&out.connection_id, message) {
                Ok(()) => WsOutcome::Delivered,
                Err(e) => WsOutcome::Failed(e),
            };
        }
        let Some(id) = ack_id(&out) else {
            return WsOutcome::Failed("wait_for_ack with no message id to acknowledge".to_owned());
        };
        let attempts = self.options.ack_attempts.max(1);
        for _ in 0..attempts {
            let (tx, rx) = oneshot::channel();
            match self.lock().get_mut(&out.connection_id) {
                Some(client) => {
                    client.acks.insert(id.clone(), tx);
                }
                None => return WsOutcome::Failed(format!("no connection {:?}", out.connection_id)),
            }
            if let Err(e) = self.send_to(&out.connection_id, message.clone()) {
                return WsOutcome::Failed(e);
            }
            match tokio::time::timeout(self.options.ack_timeout, rx).await {
                Ok(Ok(())) => return WsOutcome::Delivered,
                Ok(Err(_)) => return WsOutcome::Failed(format!("connection {:?} closed", out.connection_id)),
                Err(_) => {}
            }
        }
        if let Some(client) = self.lock().get_mut(&out.connection_id) {
            client.acks.remove(&id);
        }
        let lost_id = if out.message_id.is_empty() { id.clone() } else { out.message_id.clone() };
        for informed in &out.inform_clients_on_loss {
            let event = json!({"event": "lostMessage", "data": {"messageId": lost_id, "caller": out.caller}});
            let _ = self.send_to(informed, Message::text(event.to_string()));
        }
        WsOutcome::Failed(format!("message {id:?} not acknowledged after {attempts} attempt(s)"))
    }
}

impl WsDelivery for Hub {
    fn deliver(&self, messages: Vec<WsOutbound>) -> DeliveryFuture {
        let hub = self.clone();
        Box::pin(async move {
            // Grouped by connection, groups sent alongside each other, each in
            // the order listed.
            let mut groups: Vec<(String, Vec<(usize, WsOutbound)>)> = Vec::new();
            for (index, message) in messages.into_iter().enumerate() {
                match groups.iter_mut().find(|(c, _)| *c == message.connection_id) {
                    Some((_, group)) => group.push((index, message)),
                    None => groups.push((message.connection_id.clone(), vec![(index, message)])),
                }
            }
            let total: usize = groups.iter().map(|(_, g)| g.len()).sum();
            let runs = groups.into_iter().map(|(_, group)| {
                let hub = hub.clone();
                async move {
                    let mut out = Vec::new();
                    for (index, message) in group {
                        out.push((index, hub.deliver_one(message).await));
                    }
                    out
                }
            });
            let mut outcomes = vec![WsOutcome::Delivered; total];
            for (index, outcome) in futures_util::future::join_all(runs).await.into_iter().flatten() {
                outcomes[index] = outcome;
            }
            outcomes
        })
    }
}

/// What a WebSocket connection needs.
pub struct WsContext {
    /// The dispatcher.
    pub dispatcher: Dispatcher,
    /// The app.
    pub app: Arc<App>,
    /// The clients.
    pub hub: Hub,
}

/// Who sent a message.
struct Peer {
    connection_id: String,
    source_ip: String,
}

fn ws_dispatch(
    ctx: &WsContext,
    peer: &Peer,
    tag: &str,
    route: &str,
    body: Bytes,
    binary: bool,
    message_id: Option<String>,
) -> Dispatch {
    let now = log::unix_ms();
    let id = log::next_id("ws");
    Dispatch {
        id: id.clone(),
        handler_tag: tag.to_owned(),
        timestamp_ms: now.max(0) as u64,
        deadline_unix_ms: now + ctx.app.timeout(tag).as_millis() as i64,
        trace_context: HashMap::new(),
        source: Some(Source::Websocket(WebSocketMessage {
            route: route.to_owned(),
            connection_id: peer.connection_id.clone(),
            source_ip: peer.source_ip.clone(),
            request_id: id.clone(),
            message: body,
            is_binary: binary,
            message_id: message_id.unwrap_or(id),
        })),
    }
}

fn ws_summary(outcome: &EventOutcome) -> String {
    match outcome {
        EventOutcome::Result(r) => match &r.outcome {
            Some(Outcome::Websocket(ack)) if ack.success => "ack".to_owned(),
            Some(Outcome::Websocket(ack)) => format!("ack failure: {}", ack.error_message),
            _ => log::summary(outcome),
        },
        other => log::summary(other),
    }
}

fn is_success(outcome: &EventOutcome) -> bool {
    matches!(outcome, EventOutcome::Result(r) if matches!(&r.outcome, Some(Outcome::Websocket(ack)) if ack.success))
}

/// Serves one upgraded connection until it closes.
pub async fn serve<S>(ws: WebSocketStream<S>, connection_id: String, source_ip: String, ctx: Arc<WsContext>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            let close = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || close {
                break;
            }
        }
        let _ = sink.close().await;
    });
    // The runtime's first frame on every connection: the capabilities
    // signal, which tells a client that binary frames reach it.
    let _ = tx.send(Message::binary(ReservedFrame::Capabilities.header().to_vec()));
    ctx.hub.register(&connection_id, tx.clone());
    let peer = Peer { connection_id: connection_id.clone(), source_ip: source_ip.clone() };
    let key = ctx.hub.options().route_key.clone();
    let served = |tag: &str| ctx.app.by_tag(tag).is_some();
    log::line(&format!("ws {connection_id} connected from {source_ip}"));

    let connect_tag = format!("{key}::$connect");
    if served(&connect_tag) {
        let started = Instant::now();
        let d = ws_dispatch(&ctx, &peer, &connect_tag, "$connect", Bytes::from_static(b"null"), false, None);
        let id = d.id.clone();
        let outcome = ctx.dispatcher.submit(d).await;
        log::event(&id, &connect_tag, &ws_summary(&outcome), started.elapsed());
        if !is_success(&outcome) {
            log::line(&format!("ws {connection_id}: $connect was not accepted; closing"));
            let _ = tx.send(Message::Close(None));
            ctx.hub.unregister(&connection_id);
            let _ = writer.await;
            return;
        }
    }

    while let Some(frame) = stream.next().await {
        let inbound = match frame {
            Ok(Message::Text(text)) => classify_text(text.as_str(), &key),
            Ok(Message::Binary(bytes)) => classify_binary(&bytes),
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        match inbound {
            Inbound::Ping { binary: false } => {
                let _ = tx.send(Message::text(json!({"pong": true}).to_string()));
            }
            Inbound::Ping { binary: true } => {
                let _ = tx.send(Message::binary(ReservedFrame::Pong.header().to_vec()));
            }
            Inbound::Ack(id) => ctx.hub.acknowledged(&connection_id, &id),
            Inbound::Ignored(why) => log::line(&format!("ws {connection_id}: ignored a frame: {why}")),
            Inbound::Message { route, message_id, body, binary, wants_ack } => {
                let Some(tag) = resolve_tag(&route, &key, served) else {
                    log::line(&format!("ws {connection_id}: no handler for route {route:?} and no $default; dropped"));
                    continue;
                };
                if wants_ack && let Some(id) = &message_id {
                    let _ = tx.send(if binary { ack_binary(id) } else { ack_text(id) });
                }
                let route = tag.split_once("::").map_or(route.as_str(), |(_, r)| r).to_owned();
                let d = ws_dispatch(&ctx, &peer, &tag, &route, body, binary, message_id);
                let ctx = Arc::clone(&ctx);
                tokio::spawn(async move {
                    let started = Instant::now();
                    let id = d.id.clone();
                    // A message is closer to a queue message than to a request:
                    // a closing connection does not cancel it.
                    let outcome = ctx.dispatcher.submit(d).await;
                    log::event(&id, &tag, &ws_summary(&outcome), started.elapsed());
                });
            }
        }
    }

    ctx.hub.unregister(&connection_id);
    drop(tx);
    let _ = writer.await;
    log::line(&format!("ws {connection_id} disconnected"));
    let disconnect_tag = format!("{key}::$disconnect");
    if served(&disconnect_tag) {
        let d = ws_dispatch(&ctx, &peer, &disconnect_tag, "$disconnect", Bytes::from_static(b"null"), false, None);
        let started = Instant::now();
        let id = d.id.clone();
        let outcome = ctx.dispatcher.submit(d).await;
        log::event(&id, &disconnect_tag, &ws_summary(&outcome), started.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_messages_route_by_the_route_key() {
        let m = classify_text(r#"{"event":"orders","data":{"id":1},"messageId":"c-1","ack":true}"#, "event");
        let Inbound::Message { route, message_id, body, binary, wants_ack } = m else { panic!("{m:?}") };
        assert_eq!((route.as_str(), message_id.as_deref(), binary, wants_ack), ("orders", Some("c-1"), false, true));
        assert!(body.starts_with(b"{\"event\""), "the whole JSON object is the body");
        let Inbound::Message { route, .. } = classify_text(r#"{"action":"sendMessage"}"#, "action") else { panic!() };
        assert_eq!(route, "sendMessage");
        let Inbound::Message { route, .. } = classify_text(r#"{"data":1}"#, "event") else { panic!() };
        assert_eq!(route, "$default");
        let Inbound::Message { route, .. } = classify_text("not json", "event") else { panic!() };
        assert_eq!(route, "$default");
    }

    #[test]
    fn reserved_text_frames() {
        assert_eq!(classify_text(r#"{"ping":true}"#, "event"), Inbound::Ping { binary: false });
        assert_eq!(
            classify_text(r#"{"event":"ack","data":{"messageId":"m-1","timestamp":1}}"#, "event"),
            Inbound::Ack("m-1".into())
        );
        assert!(matches!(classify_text(r#"{"pong":true}"#, "event"), Inbound::Ignored(_)));
    }

    #[test]
    fn binary_frames_route_by_their_route() {
        let Inbound::Message { route, message_id, body, binary, wants_ack } =
            classify_binary(b"\x06orders\x01\x03m-1\xde\xad")
        else {
            panic!()
        };
        assert_eq!(
            (route.as_str(), message_id.as_deref(), &body[..], binary, wants_ack),
            ("orders", Some("m-1"), &[0xde, 0xad][..], true, true)
        );
        assert_eq!(classify_binary(b"\x01\x01\x00\x00"), Inbound::Ping { binary: true });
        assert_eq!(classify_binary(b"\x01\x04\x00\x00{\"messageId\":\"m-2\"}"), Inbound::Ack("m-2".into()));
        assert!(matches!(classify_binary(b"\x09ab"), Inbound::Ignored(_)));
    }

    #[test]
    fn routes_fall_back_to_default() {
        let served = |t: &str| t == "event::orders" || t == "event::$default";
        assert_eq!(resolve_tag("orders", "event", served).as_deref(), Some("event::orders"));
        assert_eq!(resolve_tag("other", "event", served).as_deref(), Some("event::$default"));
        assert_eq!(resolve_tag("other", "event", |t| t == "event::orders"), None);
    }

    #[test]
    fn ack_ids_come_from_the_payload_first() {
        let text = WsOutbound {
            message: Bytes::from_static(br#"{"messageId":"p-1","ack":true}"#),
            message_id: "o-1".into(),
            ..Default::default()
        };
        assert_eq!(ack_id(&text).as_deref(), Some("p-1"));
        let bin = WsOutbound { message: Bytes::from_static(b"\x01r\x01\x02b1"), is_binary: true, ..Default::default() };
        assert_eq!(ack_id(&bin).as_deref(), Some("b1"));
        let bare = WsOutbound { message: Bytes::from_static(b"hi"), message_id: "o-2".into(), ..Default::default() };
        assert_eq!(ack_id(&bare).as_deref(), Some("o-2"));
    }

    #[tokio::test]
    async fn without_negotiation_a_message_asking_for_an_ack_is_answered_once_written() {
        let hub = Hub::new(WsOptions { waits_for_client_acks: false, ..WsOptions::default() });
        let (tx, mut rx) = mpsc::unbounded_channel();
        hub.register("c1", tx);
        let asking = WsOutbound {
            connection_id: "c1".into(),
            message: Bytes::from_static(br#"{"messageId":"m-1","ack":true}"#),
            wait_for_ack: true,
            message_id: "m-1".into(),
            ..Default::default()
        };
        // Never acknowledged by the client, and delivered all the same.
        assert_eq!(hub.deliver(vec![asking]).await, [WsOutcome::Delivered]);
        assert!(matches!(rx.recv().await, Some(Message::Text(text)) if text.contains("m-1")));
    }

    #[tokio::test]
    async fn delivery_waits_for_acks_resends_and_reports_losses() {
        let hub =
            Hub::new(WsOptions { ack_timeout: Duration::from_millis(50), ack_attempts: 2, ..WsOptions::default() });
        let (tx, mut rx) = mpsc::unbounded_channel();
        hub.register("c1", tx);
        let (tx2, mut rx2) = mpsc::unbounded_channel();
        hub.register("watcher", tx2);
        let out = |id: &str, conn: &str, ack: bool| WsOutbound {
            connection_id: conn.into(),
            message: Bytes::from(format!(r#"{{"messageId":"{id}","ack":true}}"#)),
            wait_for_ack: ack,
            message_id: id.into(),
            inform_clients_on_loss: vec!["watcher".into()],
            caller: "c0".into(),
            ..Default::default()
        };
        // The first is acknowledged on its second attempt, the second never.
        let acker = {
            let hub = hub.clone();
            tokio::spawn(async move {
                let mut seen = 0;
                while let Some(Message::Text(t)) = rx.recv().await {
                    if t.contains("m-1") {
                        seen += 1;
                        if seen == 2 {
                            hub.acknowledged("c1", "m-1");
                        }
                    }
                }
                seen
            })
        };
        let outcomes =
            hub.deliver(vec![out("m-1", "c1", true), out("m-2", "c1", true), out("m-3", "nobody", false)]).await;
        assert_eq!(outcomes[0], WsOutcome::Delivered);
        assert!(matches!(&outcomes[1], WsOutcome::Failed(e) if e.contains("not acknowledged after 2")));
        assert!(matches!(&outcomes[2], WsOutcome::Failed(e) if e.contains("no connection")));
        let Some(Message::Text(lost)) = rx2.recv().await else { panic!() };
        let lost: Value = serde_json::from_str(lost.as_str()).unwrap();
        assert_eq!(lost, json!({"event": "lostMessage", "data": {"messageId": "m-2", "caller": "c0"}}));
        hub.unregister("c1");
        assert_eq!(acker.await.unwrap(), 2);
    }
}
