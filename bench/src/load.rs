//! The load on one stream: the dispatches of a case, kept flowing within
//! the credit window and the per-tag caps, and every answer checked.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use celerity_proto::v1::{
    ConsumerBatch, ConsumerRecord, Dispatch, HandlerMessage, HttpRequest, RuntimeMessage, Values, WsSend, WsSendAck,
    dispatch::Source, handler_message, result::Outcome, runtime_message,
};
use celerity_testkit::RawStream;

use crate::case::{Case, Sample, Shape};
use crate::{
    BATCH_RECORDS, CAPPED_TAGS, CONSUMER_TAG, FAIL_BODY, HTTP_TAG, OK_BODY, WS_MESSAGE, WS_TAG, expected_failures,
    record_fails, record_id, ws_connection_id,
};

/// The body of `bytes` bytes every HTTP event carries: a pattern, so that a
/// body answered from the wrong place does not compare equal.
fn body_of(bytes: usize) -> Bytes {
    let pattern: Vec<u8> = (0..251u8).collect();
    let mut body = Vec::with_capacity(bytes);
    while body.len() < bytes {
        let take = pattern.len().min(bytes - body.len());
        body.extend_from_slice(&pattern[..take]);
    }
    body.into()
}

/// The dispatches of a case, one per tag, to clone.
fn templates(case: &Case, body: &Bytes) -> (Vec<&'static str>, Vec<Dispatch>) {
    let http = |tag: &str, body: Bytes| {
        let path = tag.split_once("::").map_or(tag, |(_, path)| path).to_string();
        Source::Http(HttpRequest {
            method: "POST".to_string(),
            route: path.clone(),
            path,
            path_params: HashMap::new(),
            query_params: HashMap::new(),
            headers: HashMap::from([(
                "content-type".to_string(),
                Values { values: vec!["application/octet-stream".to_string()] },
            )]),
            source_ip: "127.0.0.1".to_string(),
            request_id: String::new(),
            body,
        })
    };
    let tags: Vec<&'static str> = match case.shape {
        Shape::Http { tags: 1, .. } => vec![HTTP_TAG],
        Shape::Http { .. } => CAPPED_TAGS.to_vec(),
        Shape::Consumer => vec![CONSUMER_TAG],
        Shape::WsSend { .. } => vec![WS_TAG],
        Shape::Resource { op } => vec![op.tag()],
    };
    let dispatches = tags
        .iter()
        .map(|tag| {
            let source = match case.shape {
                Shape::Http { .. } => http(tag, body.clone()),
                Shape::WsSend { batch } => http(tag, Bytes::from(batch.to_string())),
                Shape::Resource { op } => http(tag, Bytes::from_static(op.request_body())),
                Shape::Consumer => Source::Consumer(ConsumerBatch {
                    records: (0..BATCH_RECORDS)
                        .map(|k| ConsumerRecord {
                            message_id: record_id(k),
                            body: Bytes::from_static(if record_fails(k) { FAIL_BODY } else { OK_BODY }),
                            source: "bench-queue".to_string(),
                            event_type: "message".to_string(),
                            attributes: Bytes::new(),
                            vendor: Bytes::new(),
                        })
                        .collect(),
                    source_id: "bench-queue".to_string(),
                    source_type: "queue".to_string(),
                    vendor: Bytes::new(),
                }),
            };
            Dispatch {
                id: String::new(),
                handler_tag: tag.to_string(),
                timestamp_ms: 0,
                deadline_unix_ms: 0,
                trace_context: HashMap::new(),
                source: Some(source),
            }
        })
        .collect();
    (tags, dispatches)
}

/// The load generator's state for one stream.
pub(crate) struct Load {
    shape: Shape,
    templates: Vec<Dispatch>,
    /// Per tag: its cap (`u32::MAX` when it has none) and events in flight.
    caps: Vec<u32>,
    pub(crate) in_flight: Vec<u32>,
    /// Places free in the credit window.
    credit: u64,
    /// The handler asked to withhold (a grant of zero); no dispatch until a
    /// `CreditGrant`.
    paused: bool,
    next_tag: usize,
    next_id: u64,
    /// Per event of the current phase (by id less `base`): when it was
    /// dispatched, and its tag.
    slots: Vec<Option<(Instant, u8)>>,
    base: u64,
    body: Bytes,
    expected_failures: Vec<String>,
    /// Latencies of the measured phase, in nanoseconds.
    pub(crate) latencies: Vec<u64>,
}

impl Load {
    pub(crate) fn new(case: &Case, declared_caps: HashMap<String, u32>) -> Load {
        let body = match case.shape {
            Shape::Http { body, .. } => body_of(body),
            _ => Bytes::new(),
        };
        let (tags, templates) = templates(case, &body);
        let caps = tags.iter().map(|tag| declared_caps.get(*tag).copied().unwrap_or(u32::MAX)).collect();
        Load {
            shape: case.shape.clone(),
            in_flight: vec![0; tags.len()],
            templates,
            caps,
            credit: u64::from(case.credit),
            paused: false,
            next_tag: 0,
            next_id: 1,
            slots: Vec::new(),
            base: 1,
            body,
            expected_failures: expected_failures(),
            latencies: Vec::new(),
        }
    }

    /// The next tag, round-robin, that is under its cap.
    pub(crate) fn pick_tag(&mut self) -> Option<usize> {
        let n = self.caps.len();
        for step in 0..n {
            let tag = (self.next_tag + step) % n;
            if self.in_flight[tag] < self.caps[tag] {
                self.next_tag = (tag + 1) % n;
                return Some(tag);
            }
        }
        None
    }

    /// Dispatches `n` events, keeping the window full, and reads every
    /// answer. Returns the time from the first dispatch to the last result.
    pub(crate) async fn phase(
        &mut self,
        stream: &mut RawStream,
        n: u64,
        record: bool,
        sample: &mut Sample,
    ) -> Result<Duration, String> {
        self.base = self.next_id;
        self.slots.clear();
        self.slots.resize(n as usize, None);
        if record {
            self.latencies = Vec::with_capacity(n as usize);
        }
        let (mut sent, mut done) = (0u64, 0u64);
        let started = Instant::now();
        let mut last = started;
        let stall = tokio::time::sleep(STALL);
        tokio::pin!(stall);
        let mut stall_set = started;
        while done < n {
            if sent < n && !self.paused && self.credit > 0 {
                let now = now_ms();
                while sent < n && !self.paused && self.credit > 0 {
                    let Some(tag) = self.pick_tag() else { break };
                    let id = self.next_id;
                    self.next_id += 1;
                    let mut dispatch = self.templates[tag].clone();
                    dispatch.id = id.to_string();
                    dispatch.timestamp_ms = now as u64;
                    dispatch.deadline_unix_ms = now + 30_000;
                    if let Some(Source::Http(request)) = &mut dispatch.source {
                        request.request_id.clone_from(&dispatch.id);
                    }
                    stream
                        .outbound
                        .send(frame(runtime_message::Frame::Dispatch(dispatch)))
                        .await
                        .map_err(|_| "the handler's stream closed".to_string())?;
                    self.slots[(id - self.base) as usize] = Some((Instant::now(), tag as u8));
                    self.credit -= 1;
                    self.in_flight[tag] += 1;
                    sent += 1;
                    sample.dispatched += 1;
                }
            }
            let message = tokio::select! {
                biased;
                message = stream.inbound.message() => message,
                _ = &mut stall => {
                    return Err(format!("the handler sent nothing for {STALL:?} with {} event(s) in flight", sent - done));
                }
            };
            let frame = match message {
                Ok(Some(HandlerMessage { frame: Some(frame) })) => frame,
                Ok(Some(HandlerMessage { frame: None })) => {
                    sample.error("an empty frame");
                    continue;
                }
                Ok(None) => return Err("the handler ended its stream mid-run".to_string()),
                Err(status) => return Err(format!("the handler's stream failed mid-run: {status}")),
            };
            let now = Instant::now();
            if now.duration_since(stall_set) > Duration::from_secs(1) {
                stall.as_mut().reset(tokio::time::Instant::from_std(now + STALL));
                stall_set = now;
            }
            match frame {
                handler_message::Frame::Result(result) => {
                    if self.on_result(result, now, record, sample) {
                        done += 1;
                        last = now;
                    }
                }
                handler_message::Frame::Credit(grant) => {
                    self.paused = false;
                    self.credit += u64::from(grant.additional);
                }
                handler_message::Frame::WsSend(send_frame) => {
                    let ack = self.on_ws_send(send_frame, sample);
                    send(stream, runtime_message::Frame::WsAck(ack)).await?;
                }
                handler_message::Frame::Draining(_) => return Err("the handler began draining mid-run".to_string()),
                handler_message::Frame::Ready(_) => sample.error("a second Ready"),
            }
        }
        Ok(last.duration_since(started))
    }

    /// Checks a result and returns its place. `true` when it answered an
    /// event of this phase still in flight.
    pub(crate) fn on_result(
        &mut self,
        result: celerity_proto::v1::Result,
        now: Instant,
        record: bool,
        sample: &mut Sample,
    ) -> bool {
        let slot = result
            .id
            .parse::<u64>()
            .ok()
            .and_then(|id| id.checked_sub(self.base))
            .and_then(|index| self.slots.get_mut(index as usize))
            .and_then(Option::take);
        let Some((sent_at, tag)) = slot else {
            sample.error(format!("a result for {:?}, which is not in flight", result.id));
            return false;
        };
        sample.answered += 1;
        self.in_flight[tag as usize] -= 1;
        if result.credit_grant == 0 {
            self.paused = true;
        } else {
            self.credit += u64::from(result.credit_grant);
        }
        if record {
            self.latencies.push(now.duration_since(sent_at).as_nanos() as u64);
        }
        if let Err(error) = self.check(result.outcome) {
            sample.error(format!("event {}: {error}", result.id));
        }
        true
    }

    pub(crate) fn check(&self, outcome: Option<Outcome>) -> Result<(), String> {
        match (&self.shape, outcome) {
            (Shape::Http { .. }, Some(Outcome::Http(response))) => {
                if response.status != 200 {
                    return Err(format!("status {}", response.status));
                }
                if response.body != self.body {
                    return Err(format!("a body of {} bytes that is not the one sent", response.body.len()));
                }
                Ok(())
            }
            (Shape::WsSend { .. }, Some(Outcome::Http(response))) if response.status == 200 => Ok(()),
            (Shape::Resource { op }, Some(Outcome::Http(response))) => {
                if response.status != 200 || response.body != op.answer_body().as_bytes() {
                    return Err(format!(
                        "status {} with {:?}, expected 200 with {:?}",
                        response.status,
                        String::from_utf8_lossy(&response.body),
                        op.answer_body()
                    ));
                }
                Ok(())
            }
            (Shape::Consumer, Some(Outcome::Consumer(batch))) => {
                let mut named: Vec<&str> = batch.failures.iter().map(|f| f.message_id.as_str()).collect();
                named.sort_unstable();
                if batch.success || named != self.expected_failures {
                    return Err(format!("batch result success={} naming {named:?}", batch.success));
                }
                Ok(())
            }
            (_, Some(Outcome::Error(error))) => Err(format!("HandlerError {}: {}", error.r#type, error.message)),
            (_, other) => Err(format!("unexpected outcome {other:?}")),
        }
    }

    pub(crate) fn on_ws_send(&mut self, send: WsSend, sample: &mut Sample) -> WsSendAck {
        sample.ws_sends += 1;
        let expected = match self.shape {
            Shape::WsSend { batch } => batch,
            _ => 0,
        };
        let ok = send.messages.len() == expected
            && send.messages.iter().enumerate().all(|(i, m)| {
                m.connection_id == ws_connection_id(i) && m.message == WS_MESSAGE.as_bytes() && !m.is_binary
            });
        if !ok {
            sample
                .error(format!("a WsSend of {} message(s), expected {expected} of {WS_MESSAGE}", send.messages.len()));
        }
        WsSendAck { correlation_id: send.correlation_id, success: true, failures: Vec::new() }
    }
}

/// How long the harness waits for any frame while events are in flight
/// before it calls the handler stuck.
pub(crate) const STALL: Duration = Duration::from_secs(30);

pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

pub(crate) fn frame(frame: runtime_message::Frame) -> RuntimeMessage {
    RuntimeMessage { frame: Some(frame) }
}

pub(crate) async fn send(stream: &RawStream, message: runtime_message::Frame) -> Result<(), String> {
    stream.outbound.send(frame(message)).await.map_err(|_| "the handler's stream closed".to_string())
}
