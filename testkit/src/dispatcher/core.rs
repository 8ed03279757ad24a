//! The dispatcher's rules, free of I/O: a state machine driven by explicit
//! time (Unix milliseconds) that takes submissions, handler frames, stream
//! arrivals and departures, and yields [`Action`]s for its driver to carry
//! out.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::Duration;

use celerity_proto::v1::{
    self as pb, Cancel, Dispatch, Drain, HandlerMessage, Ready, RuntimeConfig, cancel, handler_message, runtime_message,
};

use super::terms::handler_timeout;
pub use super::terms::*;
use crate::credit::CreditState;

#[derive(Debug)]
struct Stream {
    tags: Vec<String>,
    limits: HashMap<String, u32>,
    credit: CreditState,
    tag_in_flight: HashMap<String, u32>,
    held: HashSet<String>,
    draining: Option<i64>,
}

impl Stream {
    fn serves(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    fn live_for(&self, tag: &str) -> bool {
        self.draining.is_none() && self.serves(tag)
    }

    fn in_flight_for(&self, tag: &str) -> u32 {
        self.tag_in_flight.get(tag).copied().unwrap_or(0)
    }

    /// The places kept back for this stream's idle tags other than `tag`:
    /// one per tag holding nothing, never more than half the window.
    fn reserved_against(&self, tag: &str) -> i64 {
        let idle = self.tags.iter().filter(|t| t.as_str() != tag && self.in_flight_for(t) == 0).count() as i64;
        idle.min(self.credit.window().max(0) / 2)
    }

    fn can_take(&self, tag: &str) -> bool {
        if !self.live_for(tag) || !self.credit.can_dispatch() {
            return false;
        }
        if let Some(&cap) = self.limits.get(tag)
            && self.in_flight_for(tag) >= cap
        {
            return false;
        }
        self.credit.available > self.reserved_against(tag)
    }

    fn release_place(&mut self, tag: &str, id: &str) {
        self.held.remove(id);
        if let Some(n) = self.tag_in_flight.get_mut(tag) {
            *n = n.saturating_sub(1);
        }
    }
}

#[derive(Debug)]
enum EventState {
    /// A producer waiting for room in the tag's queue.
    Waiting { give_up_at: i64 },
    /// In the tag's queue; `orphaned_since` is when it was last found with
    /// no stream serving its tag.
    Queued { orphaned_since: Option<i64> },
    /// Sent to a stream; `reclaim_at` is set once it was cancelled.
    InFlight { stream: StreamId, reclaim_at: Option<i64> },
}

#[derive(Debug)]
struct Event {
    tag: String,
    dispatch: Option<Dispatch>,
    deadline: Option<i64>,
    state: EventState,
    /// Whether a producer still waits for the outcome.
    caller: bool,
}

#[derive(Debug, Default)]
struct TagQueue {
    queued: VecDeque<String>,
    waiting: VecDeque<String>,
    last_stream: Option<StreamId>,
}

/// A snapshot of one stream, for tests and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSnapshot {
    /// The stream.
    pub id: StreamId,
    /// The tags it declared.
    pub tags: Vec<String>,
    /// Its credit account as the runtime keeps it.
    pub credit: CreditState,
    /// Events in flight per tag.
    pub in_flight: BTreeMap<String, u32>,
    /// The handler's `Draining` deadline, if it sent one.
    pub draining: Option<i64>,
}

/// The configuration of a [`Core`].
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// Timings.
    pub timing: Timing,
    /// How many events each tag's queue holds before producers wait.
    pub queue_capacity: usize,
    /// Per-tag handler timeouts (used for events without a deadline).
    pub timeouts: HashMap<String, Duration>,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig { timing: Timing::default(), queue_capacity: DEFAULT_QUEUE_CAPACITY, timeouts: HashMap::new() }
    }
}

impl CoreConfig {
    /// A configuration whose handler timeouts come from `config`.
    pub fn from_runtime_config(config: &RuntimeConfig) -> Self {
        CoreConfig {
            timeouts: config.handlers.iter().map(|h| (h.handler_tag.clone(), handler_timeout(h.timeout_ms))).collect(),
            ..CoreConfig::default()
        }
    }
}

/// The dispatcher's state machine. Every method takes the current time in
/// Unix milliseconds; what the driver must do is read with
/// [`next_action`](Self::next_action). Nothing here sleeps or does I/O.
#[derive(Debug)]
pub struct Core {
    config: CoreConfig,
    next_stream: StreamId,
    next_event: u64,
    streams: BTreeMap<StreamId, Stream>,
    tag_order: Vec<String>,
    queues: HashMap<String, TagQueue>,
    rr_next: usize,
    events: HashMap<String, Event>,
    late: HashMap<String, (StreamId, i64)>,
    draining: Option<i64>,
    drain_abandoned: usize,
    actions: VecDeque<Action>,
}

impl Core {
    /// An empty dispatcher: no streams, no events.
    pub fn new(config: CoreConfig) -> Self {
        Core {
            config,
            next_stream: 1,
            next_event: 1,
            streams: BTreeMap::new(),
            tag_order: Vec::new(),
            queues: HashMap::new(),
            rr_next: 0,
            events: HashMap::new(),
            late: HashMap::new(),
            draining: None,
            drain_abandoned: 0,
            actions: VecDeque::new(),
        }
    }

    /// The timings in force.
    pub fn timing(&self) -> Timing {
        self.config.timing
    }

    /// The next thing to do, if any.
    pub fn next_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Every pending action, in order.
    pub fn take_actions(&mut self) -> Vec<Action> {
        self.actions.drain(..).collect()
    }

    // ----- streams ---------------------------------------------------------

    /// Attaches a stream whose handshake was accepted, with the handler's
    /// `Ready`. A stream arriving during a drain is refused: the returned
    /// error is why, and the driver closes it.
    pub fn attach(&mut self, now: i64, ready: &Ready) -> Result<StreamId, CloseReason> {
        if self.draining.is_some() {
            return Err(CloseReason::RefusedDraining);
        }
        let id = self.next_stream;
        self.next_stream += 1;
        let mut tags: Vec<String> = Vec::new();
        for tag in &ready.handler_tags {
            if !tags.contains(tag) {
                tags.push(tag.clone());
            }
            self.know_tag(tag);
        }
        let limits =
            ready.limits.iter().filter(|l| l.max_concurrent > 0).map(|l| (l.handler_tag.clone(), l.max_concurrent));
        self.streams.insert(
            id,
            Stream {
                tags,
                limits: limits.collect(),
                credit: CreditState::new(ready.initial_credit),
                tag_in_flight: HashMap::new(),
                held: HashSet::new(),
                draining: None,
            },
        );
        self.tick(now);
        Ok(id)
    }

    /// The stream ended (the handler closed it, it failed, or the process
    /// died): the callers of every event it held are released at once, and
    /// those events are not dispatched again.
    pub fn stream_ended(&mut self, now: i64, stream: StreamId) {
        if self.streams.contains_key(&stream) {
            let released = self.forget_stream(stream);
            if released > 0 {
                self.note(format!("stream {stream} ended holding work: {released} caller(s) released, no answer"));
            }
        }
        self.tick(now);
    }

    fn forget_stream(&mut self, stream: StreamId) -> usize {
        let Some(s) = self.streams.remove(&stream) else { return 0 };
        self.late.retain(|_, (sid, _)| *sid != stream);
        let mut released = 0;
        let mut held: Vec<String> = s.held.into_iter().collect();
        held.sort();
        for id in held {
            if let Some(event) = self.events.remove(&id)
                && event.caller
            {
                released += 1;
                self.complete(id, EventOutcome::Abandoned(AbandonReason::StreamGone));
            }
        }
        released
    }

    /// Snapshots of the attached streams, in attach order.
    pub fn streams(&self) -> Vec<StreamSnapshot> {
        self.streams
            .iter()
            .map(|(id, s)| StreamSnapshot {
                id: *id,
                tags: s.tags.clone(),
                credit: s.credit,
                in_flight: s.tag_in_flight.iter().filter(|(_, n)| **n > 0).map(|(t, n)| (t.clone(), *n)).collect(),
                draining: s.draining,
            })
            .collect()
    }

    /// Events queued for `tag` (not counting producers waiting for room).
    pub fn queued(&self, tag: &str) -> usize {
        self.queues.get(tag).map_or(0, |q| q.queued.len())
    }

    /// Producers waiting for room in `tag`'s queue.
    pub fn waiting(&self, tag: &str) -> usize {
        self.queues.get(tag).map_or(0, |q| q.waiting.len())
    }

    /// Events dispatched whose places are still held.
    pub fn in_flight(&self) -> usize {
        self.streams.values().map(|s| s.held.len()).sum()
    }

    /// Whether `id` is remembered as an event whose place was taken back.
    pub fn remembers_late(&self, id: &str) -> bool {
        self.late.contains_key(id)
    }

    /// Whether an event with this id is known (queued, waiting or held).
    pub fn knows(&self, id: &str) -> bool {
        self.events.contains_key(id)
    }

    /// How many callers were released at the drain deadline.
    pub fn drain_abandoned(&self) -> usize {
        self.drain_abandoned
    }

    /// The drain deadline, once draining.
    pub fn drain_deadline(&self) -> Option<i64> {
        self.draining
    }

    fn know_tag(&mut self, tag: &str) {
        if !self.queues.contains_key(tag) {
            self.queues.insert(tag.to_owned(), TagQueue::default());
            self.tag_order.push(tag.to_owned());
        }
    }

    fn has_live_stream(&self, tag: &str) -> bool {
        self.streams.values().any(|s| s.live_for(tag))
    }

    // ----- producers -------------------------------------------------------

    /// Submits an event. The id is assigned when empty. Returns the id, or
    /// why the event is shed at once (the runtime is draining, the id is in
    /// use, the deadline has passed); otherwise its outcome comes later as an
    /// [`Action::Complete`].
    ///
    /// The event joins its tag's queue when there is room; otherwise the
    /// producer waits, for a quarter of the event's timeout and never more
    /// than [`Timing::max_producer_wait`], and the event is shed when the
    /// wait passes.
    pub fn submit(&mut self, now: i64, mut dispatch: Dispatch) -> Result<String, ShedReason> {
        if self.draining.is_some() {
            return Err(ShedReason::Draining);
        }
        if dispatch.id.is_empty() {
            loop {
                let id = format!("evt-{}", self.next_event);
                self.next_event += 1;
                if !self.events.contains_key(&id) {
                    dispatch.id = id;
                    break;
                }
            }
        }
        if self.events.contains_key(&dispatch.id) {
            return Err(ShedReason::DuplicateId);
        }
        let deadline = (dispatch.deadline_unix_ms > 0).then_some(dispatch.deadline_unix_ms);
        if deadline.is_some_and(|d| d <= now) {
            return Err(ShedReason::DeadlinePassed);
        }
        let tag = dispatch.handler_tag.clone();
        let id = dispatch.id.clone();
        self.know_tag(&tag);
        let timeout = match deadline {
            Some(d) => Duration::from_millis((d - now) as u64),
            None => self.config.timeouts.get(&tag).copied().unwrap_or(handler_timeout(0)),
        };
        let capacity = self.config.queue_capacity.max(1);
        let queue = self.queues.get_mut(&tag).expect("known tag");
        let state = if queue.waiting.is_empty() && queue.queued.len() < capacity {
            queue.queued.push_back(id.clone());
            EventState::Queued { orphaned_since: None }
        } else {
            queue.waiting.push_back(id.clone());
            let wait = (timeout / 4).min(self.config.timing.max_producer_wait);
            EventState::Waiting { give_up_at: now + wait.as_millis() as i64 }
        };
        self.events.insert(id.clone(), Event { tag, dispatch: Some(dispatch), deadline, state, caller: true });
        self.tick(now);
        Ok(id)
    }

    /// The producer gives up on `id` (its caller went away, say): an event
    /// not yet dispatched is dropped; a dispatched one is sent `Cancel` with
    /// `reason`, and its place is taken back after
    /// [`Timing::cancel_reclaim`] unless it is answered first.
    pub fn cancel(&mut self, now: i64, id: &str, reason: cancel::Reason) {
        let Some(event) = self.events.get_mut(id) else { return };
        let caller = std::mem::replace(&mut event.caller, false);
        match event.state {
            EventState::Waiting { .. } | EventState::Queued { .. } => {
                let tag = event.tag.clone();
                self.events.remove(id);
                if let Some(q) = self.queues.get_mut(&tag) {
                    q.queued.retain(|e| e != id);
                    q.waiting.retain(|e| e != id);
                }
                self.admit_waiting(&tag);
            }
            EventState::InFlight { stream, ref mut reclaim_at } => {
                if reclaim_at.is_none() {
                    *reclaim_at = Some(now + self.config.timing.cancel_reclaim.as_millis() as i64);
                    self.send(
                        stream,
                        runtime_message::Frame::Cancel(Cancel { id: id.to_owned(), reason: reason as i32 }),
                    );
                }
            }
        }
        if caller {
            self.complete(id.to_owned(), EventOutcome::Abandoned(AbandonReason::Cancelled));
        }
        self.tick(now);
    }

    // ----- frames from handlers -------------------------------------------

    /// A frame arrived from `stream`.
    pub fn on_frame(&mut self, now: i64, stream: StreamId, msg: HandlerMessage) {
        if !self.streams.contains_key(&stream) {
            return;
        }
        match msg.frame {
            Some(handler_message::Frame::Result(result)) => self.on_result(stream, result),
            Some(handler_message::Frame::Credit(grant)) => {
                if let Some(s) = self.streams.get_mut(&stream) {
                    s.credit.on_grant(grant.additional);
                }
            }
            Some(handler_message::Frame::WsSend(send)) => self.actions.push_back(Action::WsSend { stream, send }),
            Some(handler_message::Frame::Draining(d)) => {
                if let Some(s) = self.streams.get_mut(&stream) {
                    // A second Draining keeps the earlier deadline.
                    let deadline = s.draining.map_or(d.deadline_unix_ms, |e| e.min(d.deadline_unix_ms));
                    s.draining = Some(deadline);
                    let held = s.held.len();
                    self.note(format!(
                        "stream {stream} is draining ({held} event(s) held, deadline in {} ms)",
                        deadline - now
                    ));
                }
            }
            // A second Ready is ignored, as are frames nobody knows.
            Some(handler_message::Frame::Ready(_)) | None => {}
        }
        self.tick(now);
    }

    fn on_result(&mut self, stream: StreamId, result: pb::Result) {
        let id = result.id.clone();
        let held = self.streams.get(&stream).is_some_and(|s| s.held.contains(&id));
        if held {
            let event = self.events.remove(&id).expect("a held event is known");
            let s = self.streams.get_mut(&stream).expect("checked");
            s.release_place(&event.tag, &id);
            s.credit.on_result(result.credit_grant);
            if event.caller {
                self.complete(id, EventOutcome::Result(result));
            } else {
                self.note(format!("{id}: answered after its caller was released"));
            }
            return;
        }
        if let Some((sid, _)) = self.late.get(&id)
            && *sid == stream
        {
            self.late.remove(&id);
            if result.credit_grant == 0 {
                // The withhold still counts, and the place the runtime took
                // back is given up.
                let s = self.streams.get_mut(&stream).expect("checked");
                s.credit.withheld = true;
                s.credit.available -= 1;
                self.note(format!("{id}: late answer withholds; the place taken back is given up"));
            } else {
                self.note(format!("{id}: late answer; its credit_grant is ignored (the place was taken back)"));
            }
            return;
        }
        self.note(format!("stream {stream}: Result for unknown id {id:?} ignored"));
    }

    // ----- drain -----------------------------------------------------------

    /// The runtime is going away: `Drain` with `deadline` to every stream,
    /// the queue closed to producers, everything still queued shed. Events in
    /// flight are waited for until the deadline, then abandoned and their
    /// streams closed. A second call keeps the earlier deadline.
    pub fn drain(&mut self, now: i64, deadline: i64) -> i64 {
        let deadline = self.draining.map_or(deadline, |d| d.min(deadline));
        let first = self.draining.is_none();
        self.draining = Some(deadline);
        if first {
            let ids: Vec<StreamId> = self.streams.keys().copied().collect();
            for stream in ids {
                self.send(stream, runtime_message::Frame::Drain(Drain { deadline_unix_ms: deadline }));
            }
            for tag in self.tag_order.clone() {
                let q = self.queues.get_mut(&tag).expect("known tag");
                let ids: Vec<String> = q.queued.drain(..).chain(q.waiting.drain(..)).collect();
                for id in ids {
                    self.shed(id, ShedReason::Draining);
                }
            }
        }
        self.tick(now);
        deadline
    }

    // ----- time ------------------------------------------------------------

    /// Applies every rule that depends on time, then dispatches what can be.
    pub fn tick(&mut self, now: i64) {
        // The runtime's drain deadline: abandon and close everything.
        if let Some(deadline) = self.draining
            && now >= deadline
            && !self.streams.is_empty()
        {
            let ids: Vec<StreamId> = self.streams.keys().copied().collect();
            for stream in ids {
                let mut held: Vec<String> = self.streams[&stream].held.iter().cloned().collect();
                held.sort();
                for id in held {
                    if let Some(event) = self.events.remove(&id)
                        && event.caller
                    {
                        self.drain_abandoned += 1;
                        self.complete(id, EventOutcome::Abandoned(AbandonReason::DrainDeadline));
                    }
                }
                self.streams.remove(&stream);
                self.actions.push_back(Action::Close { stream, reason: CloseReason::DrainDeadline });
            }
            self.late.clear();
        }

        // A handler's Draining deadline: close the stream, release its callers.
        let expired: Vec<StreamId> =
            self.streams.iter().filter(|(_, s)| s.draining.is_some_and(|d| now >= d)).map(|(id, _)| *id).collect();
        for stream in expired {
            let released = self.forget_stream(stream);
            self.actions.push_back(Action::Close { stream, reason: CloseReason::HandlerDrainingDeadline });
            self.note(format!("stream {stream} closed at its Draining deadline; {released} caller(s) released"));
        }

        // Deadlines of events in flight: release the caller, cancel, and
        // start the reclaim clock.
        let reclaim = self.config.timing.cancel_reclaim.as_millis() as i64;
        let mut cancels = Vec::new();
        let mut completes = Vec::new();
        let mut reclaims = Vec::new();
        for (id, event) in &mut self.events {
            if let EventState::InFlight { stream, ref mut reclaim_at } = event.state {
                if event.caller && event.deadline.is_some_and(|d| now >= d) {
                    event.caller = false;
                    completes.push(id.clone());
                    if reclaim_at.is_none() {
                        *reclaim_at = Some(now + reclaim);
                        cancels.push((stream, id.clone()));
                    }
                }
                if reclaim_at.is_some_and(|r| now >= r) {
                    reclaims.push((stream, id.clone()));
                }
            }
        }
        cancels.sort();
        completes.sort();
        reclaims.sort();
        for id in completes {
            self.complete(id, EventOutcome::Abandoned(AbandonReason::Deadline));
        }
        for (stream, id) in cancels {
            let reason = cancel::Reason::DeadlineExceeded as i32;
            self.send(stream, runtime_message::Frame::Cancel(Cancel { id, reason }));
        }
        let memory = self.config.timing.late_memory.as_millis() as i64;
        for (stream, id) in reclaims {
            let event = self.events.remove(&id).expect("collected above");
            if let Some(s) = self.streams.get_mut(&stream) {
                s.release_place(&event.tag, &id);
                s.credit.in_flight = s.credit.in_flight.saturating_sub(1);
                s.credit.available += 1;
                self.late.insert(id.clone(), (stream, now + memory));
                self.note(format!("{id}: no answer {reclaim} ms after Cancel; its place was taken back"));
            }
        }
        self.late.retain(|_, (_, forget_at)| now < *forget_at);

        // Queued and waiting events: deadlines, the attach grace, the
        // producer wait.
        let grace = self.config.timing.attach_grace.as_millis() as i64;
        let mut shed = Vec::new();
        for tag in self.tag_order.clone() {
            let live = self.has_live_stream(&tag);
            let q = &self.queues[&tag];
            for id in q.queued.iter().chain(q.waiting.iter()) {
                let event = self.events.get_mut(id).expect("queued events are known");
                if event.deadline.is_some_and(|d| now >= d) {
                    shed.push((tag.clone(), id.clone(), ShedReason::DeadlinePassed));
                    continue;
                }
                match &mut event.state {
                    EventState::Queued { orphaned_since } => {
                        if live {
                            *orphaned_since = None;
                        } else {
                            let since = *orphaned_since.get_or_insert(now);
                            if now - since >= grace {
                                shed.push((tag.clone(), id.clone(), ShedReason::NoHandler));
                            }
                        }
                    }
                    EventState::Waiting { give_up_at } => {
                        if now >= *give_up_at {
                            shed.push((tag.clone(), id.clone(), ShedReason::QueueFull));
                        }
                    }
                    EventState::InFlight { .. } => {}
                }
            }
        }
        let mut touched = Vec::new();
        for (tag, id, reason) in shed {
            if let Some(q) = self.queues.get_mut(&tag) {
                q.queued.retain(|e| *e != id);
                q.waiting.retain(|e| *e != id);
            }
            self.shed(id, reason);
            if !touched.contains(&tag) {
                touched.push(tag);
            }
        }
        for tag in touched {
            self.admit_waiting(&tag);
        }

        self.pump();
    }

    /// The next time [`tick`](Self::tick) has something to do, if any.
    pub fn next_wakeup(&self) -> Option<i64> {
        let mut next: Option<i64> = None;
        let mut at = |t: i64| next = Some(next.map_or(t, |n: i64| n.min(t)));
        if let Some(d) = self.draining
            && !self.streams.is_empty()
        {
            at(d);
        }
        for s in self.streams.values() {
            if let Some(d) = s.draining {
                at(d);
            }
        }
        for (_, forget_at) in self.late.values() {
            at(*forget_at);
        }
        let grace = self.config.timing.attach_grace.as_millis() as i64;
        for event in self.events.values() {
            match event.state {
                EventState::InFlight { reclaim_at, .. } => {
                    if let Some(r) = reclaim_at {
                        at(r);
                    }
                    if event.caller
                        && let Some(d) = event.deadline
                    {
                        at(d);
                    }
                }
                EventState::Queued { orphaned_since } => {
                    if let Some(d) = event.deadline {
                        at(d);
                    }
                    if let Some(since) = orphaned_since {
                        at(since + grace);
                    }
                }
                EventState::Waiting { give_up_at } => {
                    at(give_up_at);
                    if let Some(d) = event.deadline {
                        at(d);
                    }
                }
            }
        }
        next
    }

    // ----- dispatching -----------------------------------------------------

    /// Dispatches while any tag can be served: round-robin across the tags
    /// with queued events, each event to the next stream (in turn) that can
    /// take its tag.
    fn pump(&mut self) {
        if self.draining.is_some() {
            return;
        }
        loop {
            let n = self.tag_order.len();
            let mut sent = false;
            for k in 0..n {
                let index = (self.rr_next + k) % n;
                let tag = self.tag_order[index].clone();
                if self.queues[&tag].queued.is_empty() {
                    continue;
                }
                let Some(stream) = self.pick_stream(&tag) else { continue };
                self.dispatch_front(&tag, stream);
                self.rr_next = (index + 1) % n;
                sent = true;
                break;
            }
            if !sent {
                return;
            }
        }
    }

    fn pick_stream(&self, tag: &str) -> Option<StreamId> {
        let last = self.queues[tag].last_stream.unwrap_or(0);
        let eligible = |(id, s): (&StreamId, &Stream)| s.can_take(tag).then_some(*id);
        self.streams.range(last + 1..).find_map(eligible).or_else(|| self.streams.range(..=last).find_map(eligible))
    }

    fn dispatch_front(&mut self, tag: &str, stream: StreamId) {
        let q = self.queues.get_mut(tag).expect("known tag");
        let id = q.queued.pop_front().expect("checked non-empty");
        q.last_stream = Some(stream);
        let event = self.events.get_mut(&id).expect("queued events are known");
        event.state = EventState::InFlight { stream, reclaim_at: None };
        let dispatch = event.dispatch.take().expect("a queued event has its dispatch");
        let s = self.streams.get_mut(&stream).expect("picked");
        s.credit.on_dispatch();
        *s.tag_in_flight.entry(tag.to_owned()).or_default() += 1;
        s.held.insert(id);
        self.send(stream, runtime_message::Frame::Dispatch(dispatch));
        self.admit_waiting(tag);
    }

    /// Moves producers waiting for room into the queue while it has room.
    fn admit_waiting(&mut self, tag: &str) {
        let capacity = self.config.queue_capacity.max(1);
        let Some(q) = self.queues.get_mut(tag) else { return };
        while q.queued.len() < capacity {
            let Some(id) = q.waiting.pop_front() else { break };
            q.queued.push_back(id.clone());
            if let Some(event) = self.events.get_mut(&id) {
                event.state = EventState::Queued { orphaned_since: None };
            }
        }
    }

    // ----- helpers -----------------------------------------------------------

    fn shed(&mut self, id: String, reason: ShedReason) {
        if let Some(event) = self.events.remove(&id)
            && event.caller
        {
            self.complete(id, EventOutcome::Shed(reason));
        }
    }

    fn complete(&mut self, id: String, outcome: EventOutcome) {
        self.actions.push_back(Action::Complete { id, outcome });
    }

    fn send(&mut self, stream: StreamId, frame: runtime_message::Frame) {
        self.actions.push_back(Action::Send { stream, frame });
    }

    fn note(&mut self, text: String) {
        self.actions.push_back(Action::Note(text));
    }
}

#[cfg(test)]
#[path = "core_tests.rs"]
mod tests;
