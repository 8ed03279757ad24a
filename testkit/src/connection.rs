//! One handler stream after an accepted handshake: dispatching, results,
//! other frames, credit, violations and closing.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use celerity_proto::v1::{
    Cancel, CreditGrant, Dispatch, Drain, Draining, HandlerMessage, Ready, RuntimeConfig, RuntimeMessage, WsSend,
    WsSendAck, cancel, handler_message, runtime_message,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tonic::{Status, Streaming};

use crate::codec::Outgoing;
use crate::credit::CreditState;
use crate::error::{Error, StreamEnd};
use crate::ids;
use crate::ledger::Ledger;
use crate::violation::Violation;

/// How long the wait methods without an explicit timeout wait, unless the
/// runtime builder or [`Connection::set_default_timeout`] says otherwise.
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The sending half of the runtime's response stream.
pub(crate) type Outbound = mpsc::UnboundedSender<crate::codec::Frame>;

/// State shared between the [`Connection`] and its reader task.
struct Shared {
    state: Mutex<State>,
    /// Bumped after every change to `state`, to wake waiters.
    changed: watch::Sender<u64>,
}

struct State {
    ledger: Ledger,
    /// `None` once the runtime side is closed.
    outbound: Option<Outbound>,
    default_timeout: Duration,
    /// When set (by a dispatcher that owns the stream), every frame and the
    /// stream's end go here instead of into the ledger.
    tap: Option<mpsc::UnboundedSender<Tapped>>,
}

/// What a tapped connection forwards.
#[derive(Debug)]
pub(crate) enum Tapped {
    /// A frame from the handler.
    Frame(HandlerMessage),
    /// The handler's stream ended.
    End(StreamEnd),
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// One handler stream, after an accepted handshake.
///
/// A background task reads every frame the handler sends: Results go to a
/// per-id store (claimed with [`result`](Self::result),
/// [`next_result`](Self::next_result) or [`call`](Self::call)); every other
/// frame (CreditGrant, WsSend, Draining, a second Ready, ...) goes to an
/// ordered queue read with [`next_frame`](Self::next_frame) and friends. The
/// credit account and per-tag caps are kept exactly as the runtime keeps them,
/// and protocol violations are recorded; while any violation is
/// unacknowledged every wait method fails at once with
/// [`Error::Violations`].
///
/// All methods take `&self`, so a connection can be shared (`Arc`) between
/// tasks. Dropping it closes the runtime side of the stream and stops the
/// reader.
pub struct Connection {
    shared: Arc<Shared>,
    ready: Ready,
    config: RuntimeConfig,
    reader: JoinHandle<()>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("ready", &self.ready)
            .field("state", &self.shared.lock().ledger.summary())
            .finish()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Connection {
    /// Starts the reader task for an accepted stream.
    pub(crate) fn start(
        ready: Ready,
        config: RuntimeConfig,
        inbound: Streaming<HandlerMessage>,
        outbound: Outbound,
        default_timeout: Duration,
    ) -> Self {
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                ledger: Ledger::new(&ready),
                outbound: Some(outbound),
                default_timeout,
                tap: None,
            }),
            changed,
        });
        let reader = tokio::spawn(read_frames(inbound, Arc::clone(&shared)));
        Connection { shared, ready, config, reader }
    }

    /// Hands every later frame, and the stream's end, to the returned
    /// receiver instead of the ledger (for a dispatcher that owns the
    /// stream). Frames recorded before are forwarded first.
    pub(crate) fn tap(&self) -> mpsc::UnboundedReceiver<Tapped> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut st = self.shared.lock();
        for frame in st.ledger.frames.drain(..) {
            let _ = tx.send(Tapped::Frame(frame));
        }
        for result in st.ledger.results.drain(..) {
            let frame = HandlerMessage { frame: Some(handler_message::Frame::Result(result)) };
            let _ = tx.send(Tapped::Frame(frame));
        }
        if let Some(end) = st.ledger.end.clone() {
            let _ = tx.send(Tapped::End(end));
        }
        st.tap = Some(tx);
        rx
    }

    /// The `Ready` the handler sent.
    pub fn ready(&self) -> &Ready {
        &self.ready
    }

    /// The `RuntimeConfig` the runtime was configured with.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Sets the timeout of the wait methods that take none.
    pub fn set_default_timeout(&self, timeout: Duration) {
        self.shared.lock().default_timeout = timeout;
    }

    fn default_timeout(&self) -> Duration {
        self.shared.lock().default_timeout
    }

    // ----- sending -------------------------------------------------------

    /// Dispatches an event, as the runtime would: refuses (with
    /// [`Error::DispatchRefused`]) when there is no credit, the handler is
    /// withholding, the tag's cap is reached, the tag was not declared, the id
    /// was used before, or either side is draining. Assigns a fresh id when
    /// `d.id` is empty, consumes one credit and returns the id.
    ///
    /// Timestamp and deadline are sent as given; the [`event`](crate::event)
    /// builders fill them.
    pub fn dispatch(&self, d: impl Into<Dispatch>) -> Result<String, Error> {
        self.dispatch_inner(d.into(), true)
    }

    /// Dispatches an event with none of [`dispatch`](Self::dispatch)'s
    /// checks, for tests of a handler under a misbehaving runtime
    /// (over-dispatching, ignoring caps or a withhold). It is still accounted:
    /// credit may go negative.
    pub fn dispatch_unchecked(&self, d: impl Into<Dispatch>) -> Result<String, Error> {
        self.dispatch_inner(d.into(), false)
    }

    fn dispatch_inner(&self, mut d: Dispatch, check: bool) -> Result<String, Error> {
        if d.id.is_empty() {
            d.id = ids::next_id("evt");
        }
        let mut st = self.shared.lock();
        if check {
            st.ledger.check_dispatch(&d)?;
        }
        let outbound = st.outbound.as_ref().ok_or(Error::SenderClosed)?;
        let id = d.id.clone();
        let msg = RuntimeMessage { frame: Some(runtime_message::Frame::Dispatch(d.clone())) };
        outbound.send(Ok(Outgoing::Message(msg))).map_err(|_| Error::SenderClosed)?;
        // Accounted under the lock, so before the reader can see its Result.
        st.ledger.record_dispatch(&d);
        drop(st);
        self.shared.notify();
        Ok(id)
    }

    /// Sends any frame, unchecked and unaccounted.
    pub fn send(&self, msg: RuntimeMessage) -> Result<(), Error> {
        self.send_outgoing(Outgoing::Message(msg))
    }

    /// Sends `bytes` as one frame, exactly as given (a message no encoder
    /// would produce, say), unchecked and unaccounted: a `Result` for a
    /// dispatch sent this way is a [`Violation`] unless it is taken with
    /// [`take_violations`](Self::take_violations).
    pub fn send_bytes(&self, bytes: impl Into<bytes::Bytes>) -> Result<(), Error> {
        self.send_outgoing(Outgoing::Bytes(bytes.into()))
    }

    fn send_outgoing(&self, frame: Outgoing) -> Result<(), Error> {
        let st = self.shared.lock();
        let outbound = st.outbound.as_ref().ok_or(Error::SenderClosed)?;
        outbound.send(Ok(frame)).map_err(|_| Error::SenderClosed)
    }

    fn send_frame(&self, frame: runtime_message::Frame) -> Result<(), Error> {
        self.send(RuntimeMessage { frame: Some(frame) })
    }

    /// Sends `Cancel` for `id`.
    pub fn cancel(&self, id: &str, reason: cancel::Reason) -> Result<(), Error> {
        self.send_frame(runtime_message::Frame::Cancel(Cancel { id: id.to_owned(), reason: reason as i32 }))
    }

    /// Sends `Drain` with the given deadline (Unix ms); from then on
    /// [`dispatch`](Self::dispatch) refuses.
    pub fn drain(&self, deadline_unix_ms: i64) -> Result<(), Error> {
        self.send_frame(runtime_message::Frame::Drain(Drain { deadline_unix_ms }))?;
        self.shared.lock().ledger.drain_sent = Some(deadline_unix_ms);
        self.shared.notify();
        Ok(())
    }

    /// Sends `Drain` with a deadline `timeout` from now.
    pub fn drain_in(&self, timeout: Duration) -> Result<(), Error> {
        self.drain(ids::unix_ms_in(timeout))
    }

    /// Sends a `WsSendAck`.
    pub fn ws_ack(&self, ack: WsSendAck) -> Result<(), Error> {
        self.send_frame(runtime_message::Frame::WsAck(ack))
    }

    /// Sends a successful `WsSendAck` for `correlation_id`.
    pub fn ws_ack_success(&self, correlation_id: &str) -> Result<(), Error> {
        self.ws_ack(WsSendAck { correlation_id: correlation_id.to_owned(), success: true, failures: Vec::new() })
    }

    /// Ends the stream from the runtime side without `Drain`: the handler
    /// sees its response stream end (status OK). The reader keeps recording
    /// what the handler sends until it closes its side. Idempotent.
    pub fn close(&self) {
        self.shared.lock().outbound = None;
    }

    /// Ends the stream from the runtime side with an error status.
    pub fn close_with_status(&self, status: Status) {
        if let Some(outbound) = self.shared.lock().outbound.take() {
            let _ = outbound.send(Err(status));
        }
    }

    // ----- credit and state ------------------------------------------------

    /// Credit available for new dispatches (negative only after forced
    /// dispatches).
    pub fn credit(&self) -> i64 {
        self.shared.lock().ledger.credit.available
    }

    /// The current credit window: available plus in flight.
    pub fn window(&self) -> i64 {
        self.shared.lock().ledger.credit.window()
    }

    /// Whether the handler is withholding credit.
    pub fn withheld(&self) -> bool {
        self.shared.lock().ledger.credit.withheld
    }

    /// Events dispatched and not yet answered.
    pub fn in_flight(&self) -> u32 {
        self.shared.lock().ledger.credit.in_flight
    }

    /// Events of `tag` dispatched and not yet answered.
    pub fn in_flight_for(&self, tag: &str) -> u32 {
        self.shared.lock().ledger.tag_in_flight(tag)
    }

    /// A snapshot of the whole credit account.
    pub fn credit_state(&self) -> CreditState {
        self.shared.lock().ledger.credit
    }

    /// Valid Results received so far (claimed or not).
    pub fn results_received(&self) -> u64 {
        self.shared.lock().ledger.results_received
    }

    /// The deadline of the handler's `Draining`, if it sent one.
    pub fn handler_draining(&self) -> Option<i64> {
        self.shared.lock().ledger.handler_draining
    }

    /// Declares whether a Result with `credit_grant` 0 (withhold) is expected;
    /// while it is not (the default), such a Result is a
    /// [`Violation::UnexpectedWithhold`]. The withhold is applied either way.
    pub fn expect_withhold(&self, expected: bool) {
        self.shared.lock().ledger.expect_withhold = expected;
    }

    // ----- violations ------------------------------------------------------

    /// The violations recorded and not yet taken.
    pub fn violations(&self) -> Vec<Violation> {
        self.shared.lock().ledger.violations.clone()
    }

    /// Removes and returns the recorded violations, acknowledging them: wait
    /// methods stop failing because of them.
    pub fn take_violations(&self) -> Vec<Violation> {
        std::mem::take(&mut self.shared.lock().ledger.violations)
    }

    /// Panics, listing them, if any violation is recorded.
    #[track_caller]
    pub fn assert_no_violations(&self) {
        let vs = self.violations();
        if !vs.is_empty() {
            panic!("{}", Error::Violations(vs));
        }
    }

    // ----- waiting -----------------------------------------------------------

    /// Waits until `check` yields a value, failing on a recorded violation,
    /// on the end of the handler's stream (checked after `check`) or on
    /// timeout.
    async fn wait<T>(
        &self,
        waiting_for: &(dyn Fn() -> String + Sync),
        timeout: Duration,
        mut check: impl FnMut(&mut Ledger) -> Option<Result<T, Error>>,
    ) -> Result<T, Error> {
        let deadline = Instant::now() + timeout;
        let mut changes = self.shared.changed.subscribe();
        loop {
            changes.borrow_and_update();
            {
                let mut st = self.shared.lock();
                let ledger = &mut st.ledger;
                if !ledger.violations.is_empty() {
                    return Err(Error::Violations(ledger.violations.clone()));
                }
                if let Some(outcome) = check(ledger) {
                    return outcome;
                }
                if let Some(end) = &ledger.end {
                    return Err(Error::StreamClosed { waiting_for: waiting_for(), end: end.clone() });
                }
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    if Instant::now() < deadline {
                        tokio::time::sleep_until(deadline).await;
                    }
                    return Err(Error::Timeout {
                        waiting_for: waiting_for(),
                        after: timeout,
                        state: self.shared.lock().ledger.summary(),
                    });
                }
            }
        }
    }

    /// Waits (default timeout) until a dispatch is allowed: credit left and no
    /// withhold.
    pub async fn wait_for_credit(&self) -> Result<(), Error> {
        self.wait_for_credit_timeout(self.default_timeout()).await
    }

    /// Waits until a dispatch is allowed, at most `timeout`.
    pub async fn wait_for_credit_timeout(&self, timeout: Duration) -> Result<(), Error> {
        self.wait(&|| "credit".to_owned(), timeout, |l| l.credit.can_dispatch().then_some(Ok(()))).await
    }

    /// Waits until the credit account satisfies `pred`, at most `timeout`.
    pub async fn wait_for_credit_state(
        &self,
        timeout: Duration,
        pred: impl Fn(&CreditState) -> bool,
    ) -> Result<CreditState, Error> {
        self.wait(&|| "a credit state".to_owned(), timeout, |l| pred(&l.credit).then_some(Ok(l.credit))).await
    }

    /// Waits (default timeout) for the Result of `id` and claims it.
    pub async fn result(&self, id: &str) -> Result<celerity_proto::v1::Result, Error> {
        self.result_timeout(id, self.default_timeout()).await
    }

    /// Waits at most `timeout` for the Result of `id` and claims it.
    pub async fn result_timeout(&self, id: &str, timeout: Duration) -> Result<celerity_proto::v1::Result, Error> {
        self.wait(&|| format!("the Result for {id:?}"), timeout, |l| {
            if !l.was_dispatched(id) {
                return Some(Err(Error::NotDispatched(id.to_owned())));
            }
            l.take_result(id).map(Ok)
        })
        .await
    }

    /// Claims the Result of `id` if it has arrived, without waiting.
    pub fn try_result(&self, id: &str) -> Option<celerity_proto::v1::Result> {
        self.shared.lock().ledger.take_result(id)
    }

    /// Waits (default timeout) for the next unclaimed Result, in arrival order.
    pub async fn next_result(&self) -> Result<celerity_proto::v1::Result, Error> {
        self.next_result_timeout(self.default_timeout()).await
    }

    /// Waits at most `timeout` for the next unclaimed Result.
    pub async fn next_result_timeout(&self, timeout: Duration) -> Result<celerity_proto::v1::Result, Error> {
        self.wait(&|| "the next Result".to_owned(), timeout, |l| l.results.pop_front().map(Ok)).await
    }

    /// Dispatches `d` (checked) and waits (default timeout) for its Result.
    pub async fn call(&self, d: impl Into<Dispatch>) -> Result<celerity_proto::v1::Result, Error> {
        let id = self.dispatch(d)?;
        self.result(&id).await
    }

    /// Dispatches `d` (checked) and waits at most `timeout` for its Result.
    pub async fn call_timeout(
        &self,
        d: impl Into<Dispatch>,
        timeout: Duration,
    ) -> Result<celerity_proto::v1::Result, Error> {
        let id = self.dispatch(d)?;
        self.result_timeout(&id, timeout).await
    }

    /// Waits (default timeout) for the next frame that is not a Result.
    pub async fn next_frame(&self) -> Result<HandlerMessage, Error> {
        self.next_frame_timeout(self.default_timeout()).await
    }

    /// Waits at most `timeout` for the next frame that is not a Result.
    pub async fn next_frame_timeout(&self, timeout: Duration) -> Result<HandlerMessage, Error> {
        self.wait(&|| "the next frame".to_owned(), timeout, |l| l.frames.pop_front().map(Ok)).await
    }

    /// Takes the next frame that is not a Result, without waiting.
    pub fn try_next_frame(&self) -> Option<HandlerMessage> {
        self.shared.lock().ledger.frames.pop_front()
    }

    /// Waits at most `timeout` for the first queued frame `pick` accepts,
    /// removing it from the queue (frames before it stay queued).
    pub async fn take_frame<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut pick: impl FnMut(&HandlerMessage) -> Option<T>,
    ) -> Result<T, Error> {
        self.wait(&|| what.to_owned(), timeout, |l| {
            let (pos, value) = l.frames.iter().enumerate().find_map(|(i, f)| pick(f).map(|v| (i, v)))?;
            l.frames.remove(pos);
            Some(Ok(value))
        })
        .await
    }

    /// Waits (default timeout) for the next `CreditGrant`.
    pub async fn next_credit_grant(&self) -> Result<CreditGrant, Error> {
        self.take_frame("a CreditGrant", self.default_timeout(), |m| match &m.frame {
            Some(handler_message::Frame::Credit(c)) => Some(*c),
            _ => None,
        })
        .await
    }

    /// Waits (default timeout) for the next `WsSend`.
    pub async fn next_ws_send(&self) -> Result<WsSend, Error> {
        self.take_frame("a WsSend", self.default_timeout(), |m| match &m.frame {
            Some(handler_message::Frame::WsSend(w)) => Some(w.clone()),
            _ => None,
        })
        .await
    }

    /// Waits (default timeout) for the handler's `Draining`.
    pub async fn next_draining(&self) -> Result<Draining, Error> {
        self.take_frame("Draining", self.default_timeout(), |m| match &m.frame {
            Some(handler_message::Frame::Draining(d)) => Some(*d),
            _ => None,
        })
        .await
    }

    /// Waits, without limit, for the handler's stream to end, and says how.
    pub async fn closed(&self) -> StreamEnd {
        let mut changes = self.shared.changed.subscribe();
        loop {
            changes.borrow_and_update();
            if let Some(end) = self.shared.lock().ledger.end.clone() {
                return end;
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Waits at most `timeout` for the handler's stream to end.
    pub async fn closed_timeout(&self, timeout: Duration) -> Result<StreamEnd, Error> {
        tokio::time::timeout(timeout, self.closed()).await.map_err(|_| Error::Timeout {
            waiting_for: "the handler's stream to end".to_owned(),
            after: timeout,
            state: self.shared.lock().ledger.summary(),
        })
    }

    /// How the handler's stream ended, if it has.
    pub fn stream_end(&self) -> Option<StreamEnd> {
        self.shared.lock().ledger.end.clone()
    }
}

/// The reader task: records every frame until the handler's stream ends.
async fn read_frames(mut inbound: Streaming<HandlerMessage>, shared: Arc<Shared>) {
    loop {
        let next = inbound.message().await;
        let done = {
            let mut st = shared.lock();
            let done = match next {
                Ok(Some(msg)) => {
                    match &st.tap {
                        Some(tap) => {
                            let _ = tap.send(Tapped::Frame(msg));
                        }
                        None => st.ledger.on_frame(msg),
                    }
                    false
                }
                Ok(None) => {
                    st.ledger.end = Some(StreamEnd::Clean);
                    true
                }
                Err(status) => {
                    st.ledger.end = Some(StreamEnd::from_status(&status));
                    true
                }
            };
            if done {
                if let (Some(tap), Some(end)) = (&st.tap, &st.ledger.end) {
                    let _ = tap.send(Tapped::End(end.clone()));
                }
                // The handler has gone: like the runtime, close our side too.
                st.outbound = None;
            }
            done
        };
        shared.notify();
        if done {
            return;
        }
    }
}
