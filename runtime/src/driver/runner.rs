//! Handler tasks kept for the next event rather than spawned for each.
//!
//! A tokio task per event costs an over-aligned allocation, a place in the
//! runtime's list of tasks (a lock taken on the stream's thread when it is
//! spawned and again on the worker that finishes it) and a free on that
//! worker. A runner is a task that serves one event at a time and, once its
//! event is answered, waits for the next. Every event in flight still has a
//! task of its own: a handler that waits or blocks holds up no other, and
//! the runtime's workers steal runners as they steal any task.
//!
//! The stream's driver owns each runner through a [`Runner`]: in its pool
//! while idle, beside the event's entry while it serves one. Aborting a
//! runner (an event abandoned at its deadline, or the stream ending) drops
//! its handler's future at once and ends the task; a new runner takes its
//! place when one is needed. A runner whose [`Runner`] is dropped finishes
//! what it is serving and ends.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use futures_util::task::AtomicWaker;
use tokio::sync::mpsc;
use tracing::{Instrument, Span};

use crate::command::Command;
use crate::context::Context;
use crate::pipeline::{self, Endpoint};
use crate::session::LazySource;

/// One event for a runner to serve.
pub(super) struct Job {
    pub(super) endpoint: Arc<dyn Endpoint>,
    pub(super) source: Option<LazySource>,
    pub(super) cx: Context,
    pub(super) id: Arc<str>,
    /// Which start of that id this is (see `Command::Completed`).
    pub(super) generation: u64,
    /// The span the handler runs in.
    pub(super) span: Span,
}

/// What the driver and a runner's task share.
struct Slot {
    /// The next event, put by the driver, taken by the task.
    job: Mutex<Option<Job>>,
    /// Drop what is being served and end.
    aborted: AtomicBool,
    /// Take no more events: end once idle.
    released: AtomicBool,
    /// The task, when it waits for any of the above.
    waker: AtomicWaker,
}

impl Slot {
    fn wake(&self) {
        self.waker.wake();
    }

    /// The next event to serve, or `None` when the task is to end.
    fn next(&self, cx: &mut TaskContext<'_>) -> Poll<Option<Job>> {
        // Registered before looking, so that what is put after the look
        // wakes the task again.
        self.waker.register(cx.waker());
        if self.aborted.load(Ordering::Acquire) {
            return Poll::Ready(None);
        }
        if let Some(job) = self.job.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return Poll::Ready(Some(job));
        }
        if self.released.load(Ordering::Acquire) {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

/// The driver's hold on one runner.
pub(super) struct Runner {
    slot: Arc<Slot>,
}

impl Runner {
    /// Aborts what the runner serves: its handler's future is dropped the
    /// next time the runner's task is polled, and the task ends without
    /// answering.
    pub(super) fn abort(self) {
        self.slot.aborted.store(true, Ordering::Release);
        self.slot.wake();
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.slot.released.store(true, Ordering::Release);
        self.slot.wake();
    }
}

/// The idle runners, and how to start more.
pub(super) struct Runners {
    idle: Vec<Runner>,
    app: tokio::runtime::Handle,
    done: mpsc::UnboundedSender<Command>,
}

impl Runners {
    /// At most this many runners wait idle; one more that comes back ends.
    /// Enough for any credit window the runtime commonly grants, and a few
    /// hundred kilobytes at most, however large one was.
    const MAX_IDLE: usize = 1024;

    /// A pool starting runners on `app`, which report to `done`.
    pub(super) fn new(app: tokio::runtime::Handle, done: mpsc::UnboundedSender<Command>) -> Runners {
        Runners { idle: Vec::new(), app, done }
    }

    /// Serves `job` on an idle runner, or on a new one when none is idle.
    pub(super) fn start(&mut self, job: Job) -> Runner {
        match self.idle.pop() {
            Some(runner) => {
                *runner.slot.job.lock().unwrap_or_else(PoisonError::into_inner) = Some(job);
                runner.slot.wake();
                runner
            }
            None => {
                let slot = Arc::new(Slot {
                    job: Mutex::new(Some(job)),
                    aborted: AtomicBool::new(false),
                    released: AtomicBool::new(false),
                    waker: AtomicWaker::new(),
                });
                drop(self.app.spawn(serve(Arc::clone(&slot), self.done.clone())));
                Runner { slot }
            }
        }
    }

    /// Takes back a runner whose event was answered, to serve another.
    pub(super) fn finished(&mut self, runner: Runner) {
        if self.idle.len() < Self::MAX_IDLE {
            self.idle.push(runner);
        }
    }
}

/// A runner's task: each event in turn, until aborted or released.
async fn serve(slot: Arc<Slot>, done: mpsc::UnboundedSender<Command>) {
    while let Some(job) = poll_fn(|cx| slot.next(cx)).await {
        let Job { endpoint, source, cx, id, generation, span } = job;
        // Building the handler's future is user code too: it happens here,
        // never on the stream's task or thread, and a panic in it is an
        // answer like any other. The source is decoded here too (see
        // `session::Event`).
        let work = pipeline::start(endpoint, source, cx).instrument(span);
        let Some(outcome) = (Unaborted { slot: &slot, work }).await else { return };
        if done.send(Command::Completed { id, generation, outcome }).is_err() {
            return;
        }
    }
}

pin_project_lite::pin_project! {
    /// `work`, unless its runner is aborted first.
    struct Unaborted<'a, F> {
        slot: &'a Slot,
        #[pin]
        work: F,
    }
}

impl<F: Future> Future for Unaborted<'_, F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // Registered before looking, as in `Slot::next`.
        this.slot.waker.register(cx.waker());
        if this.slot.aborted.load(Ordering::Acquire) {
            return Poll::Ready(None);
        }
        this.work.poll(cx).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use celerity_proto::v1::{HttpResponse, dispatch::Source, result::Outcome};
    use tokio::sync::{mpsc, oneshot};

    use super::*;
    use crate::layer::Payload;
    use crate::pipeline::HandlerFuture;
    use crate::reply::Reply;

    /// An endpoint whose every call is the future `make` builds.
    struct Probe<F>(F);

    impl<F: Fn() -> HandlerFuture + Send + Sync + 'static> Endpoint for Probe<F> {
        fn call(&self, _: Option<Source>, _: Context) -> HandlerFuture {
            (self.0)()
        }

        fn call_payload(&self, _: Payload, _: Context) -> HandlerFuture {
            (self.0)()
        }
    }

    fn probe(make: impl Fn() -> HandlerFuture + Send + Sync + 'static) -> Arc<dyn Endpoint> {
        Arc::new(Probe(make))
    }

    /// Answers with the id of the task it runs in.
    fn task_id_answer() -> HandlerFuture {
        Box::pin(async { answer(&tokio::task::id().to_string()).into() })
    }

    fn answer(body: &str) -> Outcome {
        Outcome::Http(HttpResponse { status: 200, body: body.to_string().into(), ..HttpResponse::default() })
    }

    /// An endpoint whose one call waits until the sender is used (or
    /// dropped), then answers with what `body` gives.
    fn held(body: fn() -> String) -> (oneshot::Sender<()>, Arc<dyn Endpoint>) {
        let (release, released) = oneshot::channel::<()>();
        let released = std::sync::Mutex::new(Some(released));
        let endpoint = probe(move || {
            let released = released.lock().unwrap().take();
            Box::pin(async move {
                if let Some(released) = released {
                    let _ = released.await;
                }
                answer(&body()).into()
            })
        });
        (release, endpoint)
    }

    fn job(endpoint: &Arc<dyn Endpoint>, id: &str, generation: u64) -> Job {
        Job {
            endpoint: Arc::clone(endpoint),
            source: None,
            cx: Context::detached("t"),
            id: Arc::from(id),
            generation,
            span: Span::none(),
        }
    }

    /// The next completion: its id, generation and answer's body.
    async fn completed(rx: &mut mpsc::UnboundedReceiver<Command>) -> (String, u64, String) {
        match rx.recv().await {
            Some(Command::Completed { id, generation, outcome: Ok(Reply::Outcome(Outcome::Http(response))) }) => {
                (id.to_string(), generation, String::from_utf8_lossy(&response.body).into_owned())
            }
            other => panic!("expected an HTTP completion, got {other:?}"),
        }
    }

    fn pool() -> (Runners, mpsc::UnboundedReceiver<Command>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Runners::new(tokio::runtime::Handle::current(), tx), rx)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answered_runner_serves_the_next_event_in_the_same_task() {
        let (mut runners, mut rx) = pool();
        let endpoint = probe(task_id_answer);
        let runner = runners.start(job(&endpoint, "a", 1));
        let (id, generation, first_task) = completed(&mut rx).await;
        assert_eq!((id.as_str(), generation), ("a", 1));
        runners.finished(runner);

        let _runner = runners.start(job(&endpoint, "b", 2));
        let (id, generation, second_task) = completed(&mut rx).await;
        assert_eq!((id.as_str(), generation), ("b", 2));
        assert_eq!(first_task, second_task, "the idle runner served the second event");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_in_flight_together_run_in_tasks_of_their_own() {
        let (mut runners, mut rx) = pool();
        let (release, waiting) = held(|| tokio::task::id().to_string());
        let _first = runners.start(job(&waiting, "waits", 1));
        let _second = runners.start(job(&probe(task_id_answer), "at-once", 2));
        // The second is answered while the first still waits.
        let (id, _, second_task) = completed(&mut rx).await;
        assert_eq!(id, "at-once");
        release.send(()).unwrap();
        let (id, _, first_task) = completed(&mut rx).await;
        assert_eq!(id, "waits");
        assert_ne!(first_task, second_task);
    }

    /// Tells when it is dropped.
    struct DropSignal(Option<oneshot::Sender<()>>);

    impl Drop for DropSignal {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_aborted_runner_drops_its_handler_and_answers_nothing() {
        let (mut runners, mut rx) = pool();
        let (started_tx, started) = oneshot::channel::<()>();
        let (dropped_tx, dropped) = oneshot::channel::<()>();
        let hooks = std::sync::Mutex::new(Some((started_tx, dropped_tx)));
        let endpoint = probe(move || {
            let (started_tx, dropped_tx) = hooks.lock().unwrap().take().expect("called once");
            Box::pin(async move {
                let _signal = DropSignal(Some(dropped_tx));
                let _ = started_tx.send(());
                std::future::pending::<Reply>().await
            })
        });
        let runner = runners.start(job(&endpoint, "a", 1));
        started.await.unwrap();
        runner.abort();
        dropped.await.expect("the handler's future was dropped");
        // Every sender gone (the pool's, and the aborted task's) with
        // nothing sent: the event was not answered.
        drop(runners);
        assert!(rx.recv().await.is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_released_runner_answers_its_event_then_ends() {
        let (mut runners, mut rx) = pool();
        let (release, endpoint) = held(|| "done".to_string());
        let runner = runners.start(job(&endpoint, "a", 1));
        drop(runner);
        release.send(()).unwrap();
        assert_eq!(completed(&mut rx).await.2, "done");
        drop(runners);
        assert!(rx.recv().await.is_none(), "the released runner ended");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_the_pool_ends_its_idle_runners() {
        let (mut runners, mut rx) = pool();
        let endpoint = probe(task_id_answer);
        let runners_started: Vec<Runner> = (0..3).map(|i| runners.start(job(&endpoint, &format!("e{i}"), i))).collect();
        for _ in 0..3 {
            completed(&mut rx).await;
        }
        for runner in runners_started {
            runners.finished(runner);
        }
        drop(runners);
        assert!(rx.recv().await.is_none(), "every idle runner ended");
    }
}
