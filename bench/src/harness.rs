//! The runtime side of the benchmark: a load generator over a real Unix
//! socket.
//!
//! The test kit's raw runtime ([`RawRuntime`]: no handshake and no
//! bookkeeping of its own, only the encoding of each frame) serves the
//! event stream for the whole run. For
//! every case and round it spawns a handler process, A or B, runs the
//! handshake (`RuntimeConfig` → `Ready` → `ReadyAck`), then keeps the credit
//! window full: it dispatches while the window has room (the initial credit
//! from `Ready`, spent one per dispatch, returned only by grants) and the
//! event's tag is under its cap (from `Ready.limits`), and reads results.
//! Every answer is checked. A warm-up phase runs first and is not measured;
//! then the measured phase, bracketed by `/proc` readings of the handler
//! process and by readings of its allocation counters (a file both map,
//! [`crate::alloc`]). A `Drain` ends the process.
//!
//! Latency is from the dispatch being handed to the gRPC stream to its
//! result being decoded: the two ends this process can see. The load for
//! one stream, what it dispatches and how it checks the answers, is
//! [`load`](crate::load).
//!
//! The resource cases ([`Shape::Resource`]) need a real Redis (the cache
//! get and the queue send), Postgres (the `SELECT 1`) or the AWS API
//! emulator, moto (the bucket put and the datastore get): the harness
//! starts the test kit's (installing `redis-server`, PostgreSQL or
//! `moto[server]` if it must) when a case that needs it is selected, and
//! runs both of their sides with the SDK handler, (A) on the SDK's handle
//! and (B) on the client crate, `redis`, sqlx or the AWS SDK's, directly
//! ([`Pairing::SdkHandleVsDirectClient`]).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use celerity_proto::v1::{
    Drain, HandlerConfig, HandlerMessage, ProtocolVersion, ReadyAck, RuntimeConfig, handler_message, runtime_message,
};
use celerity_testkit::servers::{Moto, Postgres, Redis};
use celerity_testkit::{RawRuntime, RawStream};

use crate::alloc::{COUNTERS_ENV, CounterFile};
pub use crate::case::{Case, Pairing, ResourceOp, Sample, Server, Shape};
use crate::emulator;
use crate::load::{Load, now_ms, send};
use crate::procfs;
use crate::{
    BUCKET_NAME, CACHE_KEY, CACHE_VALUE, CAPPED_TAGS, ITEM_ID, ITEM_NAME, MOTO_ENDPOINT_ENV, OBJECT_BYTES,
    POSTGRES_PORT_ENV, QUEUE_STREAM, REDIS_PORT_ENV, RESOURCE_CLIENT_ENV, TABLE_NAME, TAG_CAP_ENV, all_tags,
    object_key,
};

/// How big the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A few hundred events per case, one round: for CI, which checks that
    /// every event is answered correctly and nothing about timing.
    Smoke,
    /// Enough events for stable ratios in a few minutes.
    Quick,
    /// The full matrix with more events and rounds, and a million events for
    /// memory growth.
    Full,
}

impl Mode {
    /// Rounds of A and B per case, unless overridden.
    pub fn default_rounds(self) -> usize {
        match self {
            Mode::Smoke => 1,
            Mode::Quick => 3,
            Mode::Full => 5,
        }
    }
}

/// Which handler process a run is against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// (A): built with the SDK.
    Sdk,
    /// (B): hand-written tonic client, no SDK.
    Raw,
}

impl Impl {
    /// `A` or `B`.
    pub fn label(self) -> &'static str {
        match self {
            Impl::Sdk => "A",
            Impl::Raw => "B",
        }
    }
}

fn body_label(bytes: usize) -> String {
    match bytes {
        0 => "0B".to_string(),
        b if b >= 1 << 20 => format!("{}MiB", b >> 20),
        b => format!("{}KiB", b >> 10),
    }
}

/// The benchmark matrix for `mode`: credit 1, 16 and 256 × bodies of 0 B,
/// 1 KiB, 64 KiB and 1 MiB × one tag and eight capped tags; consumer
/// batches; WebSocket sends of 1 and 100 messages; one cache get, one
/// queue send and one `SELECT 1` per event; and memory growth.
pub fn matrix(mode: Mode) -> Vec<Case> {
    // (warm-up, measured) per kind of event.
    let scale = |smoke: u64, quick: u64, full: u64| match mode {
        Mode::Smoke => smoke,
        Mode::Quick => quick,
        Mode::Full => full,
    };
    let mut cases = Vec::new();
    for credit in [1u32, 16, 256] {
        for body in [0usize, 1 << 10, 64 << 10, 1 << 20] {
            for tags in [1usize, 8] {
                let events = match body {
                    b if b >= 1 << 20 => scale(16, 300, 1_000),
                    b if b >= 64 << 10 => scale(100, 3_000, 10_000),
                    _ if credit == 1 => scale(120, 10_000, 30_000),
                    _ => scale(300, 30_000, 100_000),
                };
                cases.push(Case {
                    name: format!("http/c{credit}/{}/{}", body_label(body), if tags == 1 { "1tag" } else { "8tags" }),
                    shape: Shape::Http { body, tags },
                    credit,
                    warmup: (events / 10).max(8),
                    events,
                    memory: false,
                });
            }
        }
    }
    cases.push(Case {
        name: "consumer/c16/100rec-10fail".to_string(),
        shape: Shape::Consumer,
        credit: 16,
        warmup: scale(10, 300, 1_000),
        events: scale(100, 3_000, 10_000),
        memory: false,
    });
    for batch in [1usize, 100] {
        let events = if batch == 1 { scale(200, 20_000, 50_000) } else { scale(100, 3_000, 10_000) };
        cases.push(Case {
            name: format!("ws/c16/batch{batch}"),
            shape: Shape::WsSend { batch },
            credit: 16,
            warmup: (events / 10).max(8),
            events,
            memory: false,
        });
    }
    // Credit 16: enough events in flight that the connection to Redis (the
    // 16 connections to Postgres) is never idle between them (the handler
    // does not park and wake once per round trip, which is what CPU per
    // event would measure at credit 1), and few enough that the generator,
    // the handler and the server share the two cores without one starving
    // the others.
    for op in ResourceOp::ALL {
        // The emulator answers a few hundred requests a second, so its
        // cases have fewer events; what they measure is per event.
        let events = match op.server() {
            Server::Moto => scale(200, 6_000, 20_000),
            Server::Redis | Server::Postgres => scale(200, 60_000, 200_000),
        };
        cases.push(Case {
            name: format!("{}/c16", op.label()),
            shape: Shape::Resource { op },
            credit: 16,
            warmup: (events / 10).max(8),
            events,
            memory: false,
        });
    }
    let events = scale(300, 200_000, 1_000_000);
    cases.push(Case {
        name: format!("memory/c256/1KiB/{}", if events >= 1_000_000 { "1M".to_string() } else { events.to_string() }),
        shape: Shape::Http { body: 1 << 10, tags: 1 },
        credit: 256,
        warmup: scale(100, 50_000, 100_000),
        events,
        memory: true,
    });
    cases
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// How big.
    pub mode: Mode,
    /// Only the cases whose name contains this, or one of its
    /// comma-separated parts.
    pub filter: Option<String>,
    /// Rounds of A and B per case.
    pub rounds: usize,
    /// The (A) handler binary.
    pub sdk_handler: PathBuf,
    /// The (B) handler binary.
    pub raw_handler: PathBuf,
}

impl Options {
    /// Options for `mode` with its default rounds.
    pub fn new(mode: Mode, sdk_handler: PathBuf, raw_handler: PathBuf) -> Self {
        Options { mode, filter: None, rounds: mode.default_rounds(), sdk_handler, raw_handler }
    }

    /// The cases these options select.
    pub fn cases(&self) -> Vec<Case> {
        matrix(self.mode)
            .into_iter()
            .filter(|case| self.filter.as_deref().is_none_or(|f| f.split(',').any(|f| case.name.contains(f.trim()))))
            .collect()
    }
}

/// Every sample of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// The samples against (A).
    pub a: Vec<Sample>,
    /// The samples against (B).
    pub b: Vec<Sample>,
}

/// Runs the cases `options` select, A and B interleaved: for each round,
/// every case against both (alternating which goes first); the memory cases
/// once each, after the rounds. `progress` gets one line per run.
pub fn run(options: &Options, mut progress: impl FnMut(&str)) -> Result<Vec<CaseResult>, String> {
    let cases = options.cases();
    if cases.is_empty() {
        return Err(format!("no case matches the filter {:?}", options.filter.as_deref().unwrap_or("")));
    }
    for bin in [&options.sdk_handler, &options.raw_handler] {
        if !bin.is_file() {
            return Err(format!("handler binary {} does not exist", bin.display()));
        }
    }
    let needs =
        |server: Server| cases.iter().any(|case| matches!(case.shape, Shape::Resource { op } if op.server() == server));
    // The test kit's servers fail by panicking, naming what went wrong.
    let redis = if needs(Server::Redis) {
        Some(std::panic::catch_unwind(celerity_testkit::servers::redis).map_err(|_| {
            "could not start Redis for the resource cases (the test kit's redis-server; see above)".to_string()
        })?)
    } else {
        None
    };
    let postgres = if needs(Server::Postgres) {
        Some(std::panic::catch_unwind(celerity_testkit::servers::postgres).map_err(|_| {
            "could not start Postgres for the sql-select case (the test kit's PostgreSQL; see above)".to_string()
        })?)
    } else {
        None
    };
    let moto = if needs(Server::Moto) {
        Some(std::panic::catch_unwind(celerity_testkit::servers::moto).map_err(|_| {
            "could not start the AWS API emulator for the bucket and datastore cases (the test kit's moto_server; \
             see above)"
                .to_string()
        })?)
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start tokio: {e}"))?;
    runtime.block_on(async {
        if let Some(moto) = moto {
            prepare_aws(moto).await?;
        }
        let mut harness = Harness::start(redis, postgres, moto).await?;
        let mut results: Vec<CaseResult> =
            cases.iter().map(|case| CaseResult { case: case.clone(), a: Vec::new(), b: Vec::new() }).collect();
        let rounds = options.rounds.max(1);
        let mut schedule = Vec::new();
        for round in 0..rounds {
            for (index, case) in cases.iter().enumerate() {
                if !case.memory {
                    schedule.push((round, index));
                }
            }
        }
        for (index, case) in cases.iter().enumerate() {
            if case.memory {
                schedule.push((0, index));
            }
        }
        for (round, index) in schedule {
            let case = &cases[index];
            let order = if (round + index) % 2 == 0 { [Impl::Sdk, Impl::Raw] } else { [Impl::Raw, Impl::Sdk] };
            for which in order {
                // A resource case runs the SDK handler on both sides.
                let bin = match (which, case.shape.pairing()) {
                    (Impl::Raw, Pairing::SdkVsRaw) => &options.raw_handler,
                    _ => &options.sdk_handler,
                };
                let started = Instant::now();
                let sample = harness.run_one(case, which, bin).await;
                progress(&format!(
                    "{}  ({:.2} s)",
                    progress_line(round, rounds, case, which, &sample),
                    started.elapsed().as_secs_f64()
                ));
                match which {
                    Impl::Sdk => results[index].a.push(sample),
                    Impl::Raw => results[index].b.push(sample),
                }
            }
        }
        Ok(results)
    })
}

fn progress_line(round: usize, rounds: usize, case: &Case, which: Impl, s: &Sample) -> String {
    let mut line = format!(
        "[{}/{}] {:<28} {} {:>9.0} ev/s  p50 {:>8.1} µs  p99 {:>8.1} µs  cpu {:>6.1} µs/ev  hwm {:>6.1} MiB  \
         alloc {:>6.1}/ev  cs {:.2}+{:.2}/ev",
        round + 1,
        rounds,
        case.name,
        match (case.shape.pairing(), &case.shape) {
            (Pairing::SdkVsRaw, _) => which.label().to_string(),
            (Pairing::SdkHandleVsDirectClient, _) if which == Impl::Sdk => "A (SDK handle)".to_string(),
            (_, Shape::Resource { op }) => format!("B ({} direct)", op.client()),
            _ => which.label().to_string(),
        },
        s.events_per_sec,
        s.p50_us,
        s.p99_us,
        s.cpu_us_per_event,
        s.peak_rss_kib as f64 / 1024.0,
        s.allocs_per_event,
        s.voluntary_cs_per_event,
        s.involuntary_cs_per_event
    );
    if case.memory {
        line.push_str(&format!(
            "  rss {:.1} → {:.1} MiB",
            s.rss_after_warmup_kib as f64 / 1024.0,
            s.rss_end_kib as f64 / 1024.0
        ));
    }
    if !s.is_clean() {
        line.push_str(&format!(
            "  FAILED: {} error(s), {}/{} answered, exit ok: {}; {}",
            s.errors,
            s.answered,
            s.dispatched,
            s.exit_ok,
            s.first_errors.join(" | ")
        ));
    }
    line
}

/// A directory of our own for the socket and the handlers' logs, removed
/// when done.
struct WorkDir(PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Harness {
    dir: WorkDir,
    socket: PathBuf,
    runtime: RawRuntime,
    runs: u64,
    /// The Redis of the cache and queue cases, when one is selected.
    redis: Option<&'static Redis>,
    /// The Postgres of the sql-select case, when it is selected.
    postgres: Option<&'static Postgres>,
    /// The AWS API emulator of the bucket and datastore cases, when one is
    /// selected.
    moto: Option<&'static Moto>,
}

impl Harness {
    async fn start(
        redis: Option<&'static Redis>,
        postgres: Option<&'static Postgres>,
        moto: Option<&'static Moto>,
    ) -> Result<Harness, String> {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("celerity-bench-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        let dir = WorkDir(dir);
        let socket = dir.0.join("runtime.sock");
        let runtime = RawRuntime::builder()
            .unix_socket(&socket)
            .queue(4096)
            .max_message_bytes(64 << 20)
            // The same flow-control windows the SDK asks for as a client,
            // so that 1 MiB frames are not throttled in one direction only.
            .windows(8 << 20, 16 << 20)
            .bind()
            .await
            .map_err(|e| format!("could not serve {}: {e}", socket.display()))?;
        Ok(Harness { dir, socket, runtime, runs: 0, redis, postgres, moto })
    }

    /// Runs `case` against one handler process, start to exit.
    async fn run_one(&mut self, case: &Case, which: Impl, bin: &Path) -> Sample {
        let mut sample = Sample::default();
        // A stream left over from an earlier process is not this one's.
        while self.runtime.try_accept().is_some() {}
        self.runs += 1;
        let log = self.dir.0.join(format!("{}-{}.log", self.runs, which.label()));
        let counters_path = self.dir.0.join(format!("{}-{}.counters", self.runs, which.label()));
        let counters = match CounterFile::create(&counters_path) {
            Ok(counters) => counters,
            Err(error) => {
                sample.error(format!("could not create {}: {error}", counters_path.display()));
                return sample;
            }
        };
        let mut extra_env = Vec::new();
        if let Shape::Resource { op } = case.shape {
            // Only the server the case runs against: the direct client
            // connects at start-up to those it is given.
            match (op.server(), self.redis, self.postgres, self.moto) {
                (Server::Redis, Some(redis), _, _) => {
                    if let Err(error) = prepare(redis, op) {
                        sample.error(error);
                        return sample;
                    }
                    extra_env.push((REDIS_PORT_ENV, redis.port().to_string()));
                }
                // `SELECT 1` reads nothing: nothing to prepare.
                (Server::Postgres, _, Some(postgres), _) => {
                    extra_env.push((POSTGRES_PORT_ENV, postgres.port().to_string()))
                }
                // The bucket, the table and its item are made once, before
                // the first run.
                (Server::Moto, _, _, Some(moto)) => {
                    extra_env.push((MOTO_ENDPOINT_ENV, moto.endpoint()));
                    // The emulator's region and credentials, which both
                    // sides' AWS configuration reads from the environment.
                    extra_env.extend(moto.environment());
                }
                (server, _, _, _) => {
                    sample.error(format!("a resource case without its server ({server:?})"));
                    return sample;
                }
            }
            let client = if which == Impl::Sdk { "sdk" } else { "direct" };
            extra_env.push((RESOURCE_CLIENT_ENV, client.to_string()));
        }
        let mut child = match spawn(bin, &self.socket, case, &log, counters.path(), &extra_env) {
            Ok(child) => child,
            Err(error) => {
                sample.error(error);
                return sample;
            }
        };
        let pid = child.id();
        let outcome = self.drive(case, pid, &mut child, &counters, &mut sample).await;
        if let Err(error) = outcome {
            sample.error(format!("{error}{}", log_tail(&log)));
            let _ = child.kill();
            let _ = child.wait();
        }
        if let (Shape::Resource { op: ResourceOp::QueueSend }, Some(redis)) = (&case.shape, self.redis) {
            // Every answered event sent exactly one message.
            let length = redis.command(&["XLEN", QUEUE_STREAM]);
            if parse_integer(&length) != Some(sample.answered) {
                sample.error(format!(
                    "the stream {QUEUE_STREAM} holds {:?} entries after {} answered sends",
                    length.trim(),
                    sample.answered
                ));
            }
        }
        if let (Shape::Resource { op: ResourceOp::BucketPut }, Some(moto)) = (&case.shape, self.moto)
            && sample.answered > 0
            && let Err(error) = check_stored_object(moto).await
        {
            sample.error(error);
        }
        sample
    }

    async fn drive(
        &mut self,
        case: &Case,
        pid: u32,
        child: &mut Child,
        counters: &CounterFile,
        sample: &mut Sample,
    ) -> Result<(), String> {
        let mut stream = accept(&self.runtime, child).await?;
        let caps = handshake(&mut stream, case).await?;
        let mut load = Load::new(case, caps);

        load.phase(&mut stream, case.warmup, false, sample).await?;
        let (rss_after_warmup, _) = procfs::memory_kib(pid).unwrap_or_default();
        let cpu_before = procfs::cpu_time(pid).unwrap_or_default();
        let gen_before = procfs::own_cpu_time().unwrap_or_default();
        let switches_before = procfs::context_switches(pid);
        let allocs_before = counters.read();

        let elapsed = load.phase(&mut stream, case.events, true, sample).await?;

        let allocs_after = counters.read();
        let switches_after = procfs::context_switches(pid);
        let cpu_after = procfs::cpu_time(pid).unwrap_or_default();
        let gen_after = procfs::own_cpu_time().unwrap_or_default();
        let (rss_end, hwm) = procfs::memory_kib(pid).unwrap_or_default();

        let n = case.events.max(1) as f64;
        sample.events_per_sec = n / elapsed.as_secs_f64().max(1e-9);
        sample.cpu_us_per_event = cpu_after.saturating_sub(cpu_before).as_secs_f64() * 1e6 / n;
        sample.gen_cpu_us_per_event = gen_after.saturating_sub(gen_before).as_secs_f64() * 1e6 / n;
        sample.rss_after_warmup_kib = rss_after_warmup;
        sample.rss_end_kib = rss_end;
        sample.peak_rss_kib = hwm;
        let per_event = |before: u64, after: u64| after.saturating_sub(before) as f64 / n;
        (sample.allocs_per_event, sample.alloc_bytes_per_event) = match (allocs_before, allocs_after) {
            (Some(before), Some(after)) => {
                (per_event(before.allocations, after.allocations), per_event(before.bytes, after.bytes))
            }
            _ => (f64::NAN, f64::NAN),
        };
        (sample.voluntary_cs_per_event, sample.involuntary_cs_per_event) = match (switches_before, switches_after) {
            (Some((v0, i0)), Some((v1, i1))) => (per_event(v0, v1), per_event(i0, i1)),
            _ => (f64::NAN, f64::NAN),
        };
        let mut latencies = std::mem::take(&mut load.latencies);
        latencies.sort_unstable();
        sample.p50_us = percentile(&latencies, 0.50);
        sample.p99_us = percentile(&latencies, 0.99);
        sample.p999_us = percentile(&latencies, 0.999);
        if let Shape::WsSend { .. } = case.shape
            && sample.ws_sends != sample.answered
        {
            sample.error(format!("{} WsSend(s) for {} answered events", sample.ws_sends, sample.answered));
        }

        sample.exit_ok = finish(stream, child, sample).await;
        Ok(())
    }
}

/// Sets Redis up for a run of `op`: the value to read, or an empty stream
/// (so that its length afterwards counts this run's sends, and Redis does
/// not grow over a long run).
fn prepare(redis: &Redis, op: ResourceOp) -> Result<(), String> {
    let command: &[&str] = match op {
        ResourceOp::CacheGet => &["SET", CACHE_KEY, CACHE_VALUE],
        ResourceOp::QueueSend => &["DEL", QUEUE_STREAM],
        ResourceOp::SqlSelect | ResourceOp::BucketPut | ResourceOp::DatastoreGet => return Ok(()),
    };
    let answer = redis.command(command);
    if answer.starts_with('-') {
        return Err(format!("Redis refused {command:?}: {}", answer.trim()));
    }
    Ok(())
}

/// Sets the emulator up for the bucket and datastore cases, through the
/// AWS SDK's clients: the bucket, and the table (partition key `id`, text)
/// holding the one item every datastore get reads.
async fn prepare_aws(moto: &Moto) -> Result<(), String> {
    use aws_sdk_dynamodb::types::{AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType};

    emulator::make_bucket(moto, BUCKET_NAME).await?;
    let dynamodb = emulator::dynamodb(moto).await;
    let attribute = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(aws_sdk_dynamodb::types::ScalarAttributeType::S)
            .build()
            .map_err(|e| e.to_string())
    };
    let key =
        KeySchemaElement::builder().attribute_name("id").key_type(KeyType::Hash).build().map_err(|e| e.to_string())?;
    let created = dynamodb
        .create_table()
        .table_name(TABLE_NAME)
        .attribute_definitions(attribute("id")?)
        .key_schema(key)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    if let Err(error) = created
        && !error.as_service_error().is_some_and(|e| e.is_resource_in_use_exception())
    {
        return Err(format!("the emulator would not make the table {TABLE_NAME}: {error:?}"));
    }
    dynamodb
        .put_item()
        .table_name(TABLE_NAME)
        .item("id", AttributeValue::S(ITEM_ID.into()))
        .item("name", AttributeValue::S(ITEM_NAME.into()))
        .item("quantity", AttributeValue::N("3".into()))
        .item("price", AttributeValue::N("1250".into()))
        .send()
        .await
        .map_err(|error| format!("the emulator would not store the item {ITEM_ID}: {error:?}"))?;
    Ok(())
}

/// Checks that the object the bucket puts store is there, whole: what the
/// last run of the case left.
async fn check_stored_object(moto: &Moto) -> Result<(), String> {
    let head = emulator::s3(moto)
        .await
        .head_object()
        .bucket(BUCKET_NAME)
        .key(object_key(0))
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let size = head.content_length().unwrap_or(-1);
    if size != OBJECT_BYTES as i64 {
        return Err(format!("the object {} holds {size} bytes, not {OBJECT_BYTES}", object_key(0)));
    }
    Ok(())
}

/// A RESP integer answer (`:12\r\n`).
fn parse_integer(answer: &str) -> Option<u64> {
    answer.trim().strip_prefix(':')?.parse().ok()
}

fn spawn(
    bin: &Path,
    socket: &Path,
    case: &Case,
    log: &Path,
    counters: &Path,
    extra_env: &[(&str, String)],
) -> Result<Child, String> {
    let stderr = File::create(log).map_err(|e| format!("could not create {}: {e}", log.display()))?;
    let mut command = Command::new(bin);
    // Only the settings below: none of the SDK's from this environment.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CELERITY_") {
            command.env_remove(name);
        }
    }
    command
        .env("CELERITY_RUNTIME_SOCKET", socket)
        .env("CELERITY_HANDLER_CONCURRENCY", case.credit.to_string())
        .env("CELERITY_CONNECT_TIMEOUT_MS", "20000")
        .env(TAG_CAP_ENV, case.tag_cap().to_string())
        .env(COUNTERS_ENV, counters)
        .envs(extra_env.iter().map(|(name, value)| (name, value)))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", bin.display()))
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    if tail.is_empty() {
        String::new()
    } else {
        format!(" (handler stderr: {})", tail.into_iter().rev().collect::<Vec<_>>().join(" / "))
    }
}

/// Waits for the handler process to open its stream.
async fn accept(runtime: &RawRuntime, child: &mut Child) -> Result<RawStream, String> {
    let started = Instant::now();
    loop {
        match runtime.accept_timeout(Duration::from_millis(20)).await {
            Ok(stream) => return Ok(stream),
            Err(celerity_testkit::Error::Timeout { .. }) => {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("the handler exited ({status}) before opening its stream"));
                }
                if started.elapsed() > Duration::from_secs(30) {
                    return Err("the handler opened no stream within 30 s".to_string());
                }
            }
            Err(error) => return Err(error.to_string()),
        }
    }
}

async fn next_frame(stream: &mut RawStream, wait: Duration) -> Result<handler_message::Frame, String> {
    match tokio::time::timeout(wait, stream.inbound.message()).await {
        Err(_) => Err(format!("no frame from the handler within {wait:?}")),
        Ok(Ok(Some(HandlerMessage { frame: Some(frame) }))) => Ok(frame),
        Ok(Ok(Some(HandlerMessage { frame: None }))) => Err("the handler sent an empty frame".to_string()),
        Ok(Ok(None)) => Err("the handler ended its stream".to_string()),
        Ok(Err(status)) => Err(format!("the handler's stream failed: {status}")),
    }
}

/// `RuntimeConfig` → `Ready` → `ReadyAck`. Returns the caps `Ready`
/// declared, by tag.
async fn handshake(stream: &mut RawStream, case: &Case) -> Result<HashMap<String, u32>, String> {
    let handlers = all_tags()
        .into_iter()
        .map(|tag| HandlerConfig {
            handler_name: tag.replace(['/', ':'], "_"),
            handler_tag: tag.to_string(),
            timeout_ms: 30_000,
            tracing_enabled: false,
            published_name: String::new(),
        })
        .collect();
    let config = RuntimeConfig {
        tracing_enabled: false,
        metrics_enabled: false,
        handlers,
        protocol_version: Some(ProtocolVersion { major: 1, minor: 0 }),
    };
    send(stream, runtime_message::Frame::Config(config)).await?;
    let ready = match next_frame(stream, Duration::from_secs(30)).await? {
        handler_message::Frame::Ready(ready) => ready,
        other => return Err(format!("expected Ready, got {other:?}")),
    };
    let mut tags = ready.handler_tags.clone();
    tags.sort();
    let mut expected: Vec<String> = all_tags().into_iter().map(str::to_string).collect();
    expected.sort();
    if tags != expected {
        return Err(format!("Ready declares tags {tags:?}, expected {expected:?}"));
    }
    if ready.protocol_version.map(|v| v.major) != Some(1) {
        return Err(format!("Ready declares protocol {:?}", ready.protocol_version));
    }
    if ready.initial_credit != case.credit {
        return Err(format!("Ready declares credit {}, expected {}", ready.initial_credit, case.credit));
    }
    let caps: HashMap<String, u32> = ready.limits.iter().map(|l| (l.handler_tag.clone(), l.max_concurrent)).collect();
    for tag in CAPPED_TAGS {
        if caps.get(tag) != Some(&case.tag_cap()) {
            return Err(format!("Ready declares cap {:?} for {tag}, expected {}", caps.get(tag), case.tag_cap()));
        }
    }
    let ack = ReadyAck { accepted: true, unknown_tags: Vec::new(), unhandled_tags: Vec::new(), refused_reason: 0 };
    send(stream, runtime_message::Frame::ReadyAck(ack)).await?;
    Ok(caps)
}

/// Drains the handler, waits for it to end its stream and exit. `true` when
/// it exited successfully by itself.
async fn finish(mut stream: RawStream, child: &mut Child, sample: &mut Sample) -> bool {
    let deadline = now_ms() + 5_000;
    if send(&stream, runtime_message::Frame::Drain(Drain { deadline_unix_ms: deadline })).await.is_err() {
        sample.error("the stream closed before the drain");
    }
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.inbound.message().await {
                Ok(Some(HandlerMessage { frame: Some(handler_message::Frame::Draining(_)) })) => {}
                Ok(Some(message)) => break Err(format!("unexpected frame during the drain: {message:?}")),
                Ok(None) | Err(_) => break Ok(()),
            }
        }
    })
    .await;
    match ended {
        Ok(Ok(())) => {}
        Ok(Err(error)) => sample.error(error),
        Err(_) => sample.error("the handler did not end its stream within 10 s of Drain"),
    }
    // Ending our half tells the handler the runtime has read everything.
    drop(stream);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    sample.error(format!("the handler exited with {status} after the drain"));
                }
                return status.success();
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(5)).await,
            Err(_) => break,
        }
    }
    sample.error("the handler did not exit within 10 s of the drain");
    let _ = child.kill();
    let _ = child.wait();
    false
}

fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_rank_above() {
        let v: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        assert_eq!(percentile(&v, 0.5), 500.0);
        assert_eq!(percentile(&v, 0.99), 990.0);
        assert_eq!(percentile(&v, 0.999), 999.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn the_matrix_has_every_shape() {
        let cases = matrix(Mode::Full);
        assert_eq!(cases.iter().filter(|c| matches!(c.shape, Shape::Http { .. }) && !c.memory).count(), 24);
        assert!(cases.iter().any(|c| c.shape == Shape::Consumer));
        assert!(cases.iter().any(|c| c.shape == Shape::WsSend { batch: 1 }));
        assert!(cases.iter().any(|c| c.shape == Shape::WsSend { batch: 100 }));
        assert!(cases.iter().any(|c| c.memory && c.events == 1_000_000));
        for op in ResourceOp::ALL {
            let case = cases.iter().find(|c| c.shape == Shape::Resource { op }).unwrap();
            assert_eq!(case.shape.pairing(), Pairing::SdkHandleVsDirectClient);
            assert_eq!(case.name, format!("{}/c16", op.label()));
        }
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), cases.len());
    }

    #[test]
    fn tags_rotate_within_their_caps() {
        let case = matrix(Mode::Smoke).into_iter().find(|c| c.name == "http/c16/0B/8tags").unwrap();
        let caps = CAPPED_TAGS.iter().map(|t| (t.to_string(), 2)).collect();
        let mut load = Load::new(&case, caps);
        let picks: Vec<usize> =
            (0..16).map(|_| load.pick_tag().inspect(|&t| load.in_flight[t] += 1).unwrap()).collect();
        assert_eq!(picks, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(load.pick_tag(), None);
    }
}
