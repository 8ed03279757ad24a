//! How many worker threads [`crate::run_main`] gives the application's
//! runtime.
//!
//! By default the event stream is served from a thread of its own, busy in
//! proportion to the load. tokio's default of one worker per core then puts
//! one more busy thread on the machine than it has cores: on two cores the
//! stream's thread, two workers (and whatever else runs there) take turns,
//! and each event that wakes a worker can wake the other one too, which
//! finds nothing to do and parks again. So the runtime gets one worker
//! fewer than the process may use cores, and at least one: on two cores
//! that cut the CPU per event by a tenth to a half, by the number of events
//! in flight (BENCHMARKS.md, "One core for the stream's thread").
//!
//! tokio decides (a worker per core, or `TOKIO_WORKER_THREADS`) wherever the
//! stream does not get that thread: on AWS Lambda, and with
//! `CELERITY_IO_THREAD=false`. `TOKIO_WORKER_THREADS` set also leaves it to
//! tokio, which reads it.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::lambda::{self, Platform};
use crate::settings::Settings;

/// Whether this process's runtime was sized by [`workers`] with a core left
/// to the stream's thread.
static CORE_LEFT_TO_THE_STREAM: AtomicBool = AtomicBool::new(false);

/// The workers for the application's runtime, when the SDK chooses them:
/// one fewer than `cores`, at least one. `None` leaves them to tokio.
pub(crate) fn workers(lookup: impl Fn(&str) -> Option<String>, cores: NonZeroUsize) -> Option<usize> {
    if lookup("TOKIO_WORKER_THREADS").is_some() || lambda::detect(&lookup) == Platform::Lambda {
        return None;
    }
    // A setting that does not parse is reported when the application runs;
    // until then the stream is taken to have its thread, as by default.
    let io_thread = Settings::from_lookup(&lookup).map_or(true, |settings| settings.io_thread);
    io_thread.then(|| (cores.get() - 1).max(1))
}

/// A multi-threaded runtime sized by [`workers`] from the environment.
pub(crate) fn runtime() -> tokio::runtime::Builder {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    let cores = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    if let Some(workers) = workers(|name| std::env::var(name).ok(), cores) {
        runtime.worker_threads(workers);
        CORE_LEFT_TO_THE_STREAM.store(true, Ordering::Relaxed);
    }
    runtime
}

/// Whether [`runtime`] left a core to a stream's thread.
pub(crate) fn core_left_to_the_stream() -> bool {
    CORE_LEFT_TO_THE_STREAM.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workers_with(env: &[(&str, &str)], cores: usize) -> Option<usize> {
        let lookup = |name: &str| env.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string());
        workers(lookup, NonZeroUsize::new(cores).unwrap())
    }

    #[test]
    fn a_core_is_left_to_the_streams_thread() {
        let env = [("CELERITY_RUNTIME_SOCKET", "/tmp/celerity.sock")];
        assert_eq!(workers_with(&env, 2), Some(1));
        assert_eq!(workers_with(&env, 8), Some(7));
        assert_eq!(workers_with(&env, 1), Some(1), "at least one worker");
        assert_eq!(workers_with(&[], 4), Some(3), "whatever else is missing");
        assert_eq!(workers_with(&[("CELERITY_IO_THREAD", "true")], 4), Some(3));
    }

    #[test]
    fn tokio_decides_where_the_stream_has_no_thread_of_its_own_or_the_count_is_set() {
        assert_eq!(workers_with(&[("CELERITY_IO_THREAD", "false")], 4), None);
        assert_eq!(workers_with(&[("TOKIO_WORKER_THREADS", "2")], 4), None);
        assert_eq!(workers_with(&[("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")], 4), None);
    }

    #[test]
    fn a_setting_that_does_not_parse_leaves_the_default() {
        assert_eq!(workers_with(&[("CELERITY_IO_THREAD", "sometimes")], 4), Some(3));
    }
}
