//! Writes the hand-made seed corpus, one directory per target:
//! `cargo run --bin seeds -- corpus` (from `fuzz/`). The committed corpus is
//! these seeds plus what the fuzzer found from them, minimised.

use std::collections::HashMap;
use std::path::Path;

use celerity::proto::prost::Message as _;
use celerity::proto::v1::{self as pb, RuntimeMessage, runtime_message::Frame};

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "corpus".to_string());
    let root = Path::new(&root);
    write(root, "session", session());
    write(root, "frame", frames());
    write(root, "dispatch", dispatches());
    write(root, "event", events());
    write(root, "tag", tags());
    write(root, "outbound", outbound());
}

fn write(root: &Path, target: &str, seeds: Vec<Vec<u8>>) {
    let dir = root.join(target);
    std::fs::create_dir_all(&dir).expect("the corpus directory");
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:03}")), seed).expect("a seed file");
    }
    println!("{}: {} seeds", dir.display(), seeds.len());
}

// ----- session: the byte format of `Scenario::from_bytes` -------------------

/// initial credit 3, no grace, nothing before the handshake.
const PLAIN: [u8; 5] = [2, 0, 0, 0, 1];
/// initial credit 1, a grace of 250 ms, a signal before the ack.
const SIGNALLED: [u8; 6] = [0, 200, 50, 0, 0, 0];

fn dispatch(tag: u8, id: u8, deadline: Option<u16>, forced: bool) -> Vec<u8> {
    let mut op = vec![0, tag, id];
    match deadline {
        None => op.push(0),
        Some(ms) => {
            op.push(2);
            op.extend_from_slice(&(ms + 100).to_le_bytes());
        }
    }
    op.push(if forced { 0 } else { 1 });
    op
}

fn complete(pick: u8, kind: u8) -> Vec<u8> {
    vec![12, pick, kind]
}

fn advance(ms: u16) -> Vec<u8> {
    let mut op = vec![25];
    op.extend_from_slice(&ms.to_le_bytes());
    op
}

fn raw(frame: Frame) -> Vec<u8> {
    let bytes = RuntimeMessage { frame: Some(frame) }.encode_to_vec();
    let mut op = vec![48];
    op.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    op.extend_from_slice(&bytes);
    op
}

fn scenario(header: &[u8], ops: Vec<Vec<u8>>) -> Vec<u8> {
    let mut bytes = header.to_vec();
    for op in ops {
        bytes.extend(op);
    }
    bytes
}

fn session() -> Vec<Vec<u8>> {
    let http = Some(pb::dispatch::Source::Http(pb::HttpRequest::default()));
    let raw_dispatch = |id: &str, tag: &str, deadline: i64, source: Option<pb::dispatch::Source>| {
        raw(Frame::Dispatch(pb::Dispatch {
            id: id.into(),
            handler_tag: tag.into(),
            deadline_unix_ms: deadline,
            source,
            ..Default::default()
        }))
    };
    vec![
        // Serve, complete, drain.
        scenario(
            &PLAIN,
            vec![
                dispatch(0, 0, Some(500), false),
                dispatch(1, 0, None, false),
                complete(0, 0),
                complete(1, 6),
                vec![37, 0xe8, 0x03],
            ],
        ),
        // Deadlines and cancellations, late completions.
        scenario(
            &SIGNALLED,
            vec![
                dispatch(0, 0, Some(10), false),
                advance(400),
                vec![22, 1, 0, 2],
                complete(0, 11),
                advance(1_400),
                vec![38],
                vec![38],
            ],
        ),
        // Over-dispatch, duplicate, empty and over-long ids, withhold and resize.
        scenario(
            &PLAIN,
            vec![
                dispatch(1, 0, None, true),
                dispatch(1, 0, None, true),
                dispatch(1, 0, None, true),
                dispatch(0, 12, None, true),
                dispatch(0, 17, None, true),
                dispatch(0, 19, None, true),
                vec![31],
                complete(0, 0),
                vec![35, 1],
                vec![33],
                complete(1, 15),
                vec![41, 0],
            ],
        ),
        // WebSocket sends: acknowledged, unknown, timed out, too large.
        scenario(
            &PLAIN,
            vec![
                vec![42, 2, 3, 0x10, 0x27],
                vec![42, 1, 0, 0x10, 0x27],
                vec![45, 1, 0],
                vec![45, 0],
                vec![42, 1, 1, 0x64, 0],
                advance(200),
                vec![40],
                advance(1_200),
            ],
        ),
        // Frames that make no sense after the handshake.
        scenario(
            &PLAIN,
            vec![
                raw(Frame::Config(pb::RuntimeConfig::default())),
                raw(Frame::ReadyAck(pb::ReadyAck { accepted: true, ..Default::default() })),
                raw(Frame::WsAck(pb::WsSendAck { correlation_id: "nobody".into(), ..Default::default() })),
                raw_dispatch("r-1", "GET::/a", 0, None),
                raw_dispatch("r-2", "GET::/nothing", 0, http.clone()),
                raw_dispatch("r-1", "GET::/a", 0, http.clone()),
                raw_dispatch("r-3", "GET::/b", 1, http.clone()),
                raw_dispatch("r-4", "GET::/a", i64::MAX, http.clone()),
                raw_dispatch("r-5", "GET::/a", -5, http.clone()),
                raw(Frame::Cancel(pb::Cancel { id: "r-4".into(), reason: 2 })),
                raw(Frame::Cancel(pb::Cancel { id: "never".into(), reason: 99 })),
                advance(1_000),
                raw(Frame::Drain(pb::Drain { deadline_unix_ms: -1 })),
            ],
        ),
        vec![48, 0, 0],
    ]
}

// ----- frame -------------------------------------------------------------------

fn frames() -> Vec<Vec<u8>> {
    vec![
        b"\x06orders\x01\x03m-1\xde\xad".to_vec(),
        b"\x01a\x00\x00".to_vec(),
        b"\x01a\x00\x00payload".to_vec(),
        b"\x01\x01\x00\x00".to_vec(),
        b"\x01\x04\x00\x00{\"messageId\":\"m\"}".to_vec(),
        b"\x05route\x01\x00".to_vec(),
        b"\x05rou".to_vec(),
        b"\x02\xff\xfe\x00\x00".to_vec(),
        b"\x01a\x02\x00".to_vec(),
        b"\x01a\x00\xffid".to_vec(),
    ]
}

// ----- dispatch ----------------------------------------------------------------

fn values(values: &[&str]) -> pb::Values {
    pb::Values { values: values.iter().map(|v| v.to_string()).collect() }
}

fn with_mode(mode: u8, message: &impl celerity::proto::prost::Message) -> Vec<u8> {
    let mut bytes = vec![mode];
    bytes.extend(message.encode_to_vec());
    bytes
}

/// A source of each kind (two for HTTP: a catch-all route and a typed one).
struct Sources {
    http: pb::HttpRequest,
    typed: pb::HttpRequest,
    ws: pb::WebSocketMessage,
    batch: pb::ConsumerBatch,
    schedule: pb::ScheduleTrigger,
    custom: pb::CustomInvoke,
}

fn sources() -> Sources {
    let http = pb::HttpRequest {
        method: "POST".into(),
        path: "/any/x/a/b%20c".into(),
        route: "/any/{a}/{*rest}".into(),
        path_params: HashMap::from([("a".to_string(), values(&["x"])), ("rest".to_string(), values(&["a", "b c"]))]),
        query_params: HashMap::from([("page".to_string(), values(&["2"])), ("tags".to_string(), values(&["a", "b"]))]),
        headers: HashMap::from([("content-type".to_string(), values(&["application/json"]))]),
        body: br#"{"id": 7, "items": [1, 2.5, "x", null, {"k": true}]}"#.to_vec().into(),
        ..Default::default()
    };
    let typed = pb::HttpRequest {
        method: "GET".into(),
        path: "/typed/42".into(),
        route: "/typed/{id}".into(),
        path_params: HashMap::from([("id".to_string(), values(&["42"]))]),
        query_params: HashMap::from([("flag".to_string(), values(&["true"])), ("page".to_string(), values(&["x"]))]),
        ..Default::default()
    };
    let ws = pb::WebSocketMessage {
        connection_id: "c-1".into(),
        message_id: "m-1".into(),
        route: "typed".into(),
        message: br#"{"action": "typed", "data": [1, 2]}"#.to_vec().into(),
        ..Default::default()
    };
    let batch = pb::ConsumerBatch {
        source_id: "q".into(),
        records: vec![
            pb::ConsumerRecord { message_id: "r-1".into(), body: b"{\"a\": 1}".to_vec().into(), ..Default::default() },
            pb::ConsumerRecord { message_id: "r-2".into(), body: b"12".to_vec().into(), ..Default::default() },
            pb::ConsumerRecord { message_id: "r-2".into(), body: b"not json".to_vec().into(), ..Default::default() },
        ],
        ..Default::default()
    };
    let schedule = pb::ScheduleTrigger {
        schedule_id: "nightly".into(),
        message_id: "s-1".into(),
        schedule: "rate(1 day)".into(),
        input: br#"{"full": true}"#.to_vec().into(),
        ..Default::default()
    };
    let custom =
        pb::CustomInvoke { handler_name: "typed".into(), input: br#"{"x": [1, {"y": null}]}"#.to_vec().into() };
    Sources { http, typed, ws, batch, schedule, custom }
}

fn dispatches() -> Vec<Vec<u8>> {
    let Sources { http, typed, ws, batch, schedule, custom } = sources();
    let whole = |source| pb::Dispatch {
        id: "d-1".into(),
        handler_tag: "GET::/raw".into(),
        source: Some(source),
        ..Default::default()
    };
    vec![
        with_mode(1, &http),
        with_mode(1, &typed),
        with_mode(2, &ws),
        with_mode(3, &batch),
        with_mode(4, &schedule),
        with_mode(5, &custom),
        with_mode(0, &whole(pb::dispatch::Source::Http(http.clone()))),
        with_mode(0, &whole(pb::dispatch::Source::Consumer(batch.clone()))),
        with_mode(0, &pb::Dispatch { id: "none".into(), ..Default::default() }),
    ]
}

// ----- event: a `Dispatch`'s bytes, as the runtime sends them ---------------------

fn events() -> Vec<Vec<u8>> {
    use pb::dispatch::Source;
    let Sources { http, typed, ws, batch, schedule, custom } = sources();
    let dispatch = |source: Source| pb::Dispatch {
        id: "e-1".into(),
        handler_tag: "GET::/raw".into(),
        timestamp_ms: 1_700_000_000_000,
        deadline_unix_ms: 1_700_000_030_000,
        trace_context: HashMap::from([("traceparent".to_string(), "00-ab-cd-01".to_string())]),
        source: Some(source),
    };
    let mut seeds: Vec<Vec<u8>> = [
        Source::Http(http.clone()),
        Source::Http(typed),
        Source::Websocket(ws),
        Source::Consumer(batch.clone()),
        Source::Schedule(schedule),
        Source::Custom(custom),
    ]
    .into_iter()
    .map(|source| dispatch(source).encode_to_vec())
    .collect();
    // A source given twice, of the same kind (merged) and of another
    // (replaced).
    let mut twice = dispatch(Source::Http(http.clone())).encode_to_vec();
    twice.extend(pb::Dispatch { source: Some(Source::Http(http.clone())), ..Default::default() }.encode_to_vec());
    seeds.push(twice.clone());
    twice.extend(pb::Dispatch { source: Some(Source::Consumer(batch)), ..Default::default() }.encode_to_vec());
    seeds.push(twice);
    // A path that is not UTF-8: the head decodes, the source does not.
    let mut bad = dispatch(Source::Http(http)).encode_to_vec();
    let at = bad.windows(4).position(|w| w == b"/any").expect("the path");
    bad[at + 1] = 0xff;
    seeds.push(bad);
    seeds.push(pb::Dispatch { id: "none".into(), ..Default::default() }.encode_to_vec());
    seeds
}

// ----- tag -----------------------------------------------------------------------

fn tags() -> Vec<Vec<u8>> {
    let tagged = |kind: u8, tag: &str| {
        let mut bytes = vec![kind];
        bytes.extend_from_slice(tag.as_bytes());
        bytes
    };
    vec![
        tagged(0, "GET::/orders/{id}"),
        tagged(0, "GET::/files/{path+}"),
        tagged(0, "get::/x?y=1"),
        tagged(0, "GET::/{a}/{a}"),
        tagged(1, "event::$connect"),
        tagged(1, "$Default"),
        tagged(2, "source::orders-queue::processOrders"),
        tagged(2, "orders::process"),
        tagged(3, "source::nightly::cleanup"),
        tagged(4, "custom::resizeImage"),
        tagged(4, " custom::x "),
    ]
}

// ----- outbound ------------------------------------------------------------------

fn outbound() -> Vec<Vec<u8>> {
    let with = |mode: u8, bytes: &[u8]| {
        let mut seed = vec![mode];
        seed.extend_from_slice(bytes);
        seed
    };
    let ack = pb::WsSendAck {
        correlation_id: "w".into(),
        success: false,
        failures: vec![
            pb::WsSendFailure { index: 1, connection_id: "c-1".into(), error_message: "gone".into() },
            pb::WsSendFailure { index: 1, connection_id: "c-9".into(), error_message: "again".into() },
            pb::WsSendFailure { index: 70, connection_id: String::new(), error_message: String::new() },
        ],
    };
    vec![
        with(0x10, br#"{"event": "update", "data": {"n": 1}}"#),
        with(0x30, br#"{"messageId": "m-1", "data": "x"}"#),
        with(0x10, br#"{"messageId": 7}"#),
        with(0x10, br#" { "a" : "\"}\\" , "b": [ {"messageId": "inner"} ] } "#),
        with(0x10, b"[1, 2]"),
        with(0x00, b"plain text"),
        with(0x11, b"\x06orders\x01\x03m-1\xde\xad"),
        with(0x31, b"\x06orders\x00\x00payload"),
        with(0x01, b"\x06orders\x01\x03m-1\xde\xad"),
        with(0x42, &ack.encode_to_vec()),
    ]
}
