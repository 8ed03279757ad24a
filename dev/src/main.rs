//! `celerity-dev`: run a Celerity handler binary on a laptop.
//!
//! ```text
//! celerity-dev run <package | path-to-binary> [--port 8080] [--blueprint FILE | --no-blueprint]
//!                  [--config dev.json] [--timeout-ms 30000]
//!                  [--ack-timeout-ms 10000] [--ack-attempts 3] [--drain-timeout-ms MS]
//!                  [--no-protocol-version]
//! celerity-dev push <sourceId> <handlerName> <records.json | -> [--port 8080]
//! celerity-dev schedule <scheduleId> <handlerName> [--port 8080]
//! celerity-dev invoke <handlerName> [payload-json] [--async] [--port 8080]
//! ```
//!
//! `run` builds the package (or takes the binary), reads the application's
//! blueprint (`--blueprint`, or `app.blueprint.yaml` / `app.blueprint.json`
//! in the package's folder or the current directory) to learn what it
//! serves, as the runtime does, and refuses a binary whose tags do not match
//! it; without a blueprint it reads the binary's handler manifest (and the
//! optional config file) instead. It then plays the
//! Celerity runtime's side of the handler IPC protocol on a Unix socket
//! (0600, in a directory of its own, 0700) with the testkit's dispatcher,
//! starts the binary pointed at it, and serves on 127.0.0.1:
//!
//! - the binary's HTTP handlers, with the runtime's route semantics;
//! - WebSocket at `/ws`;
//! - `POST /runtime/handlers/invoke` (custom invocations by handler name);
//! - `POST /dev/consumers/{sourceId}/{handlerName}` (push consumer records);
//! - `POST /dev/schedules/{scheduleId}/{handlerName}` (fire a schedule);
//!
//! and reads the blueprint's queues from the session's Redis into the
//! consumers they feed: the one `CELERITY_REDIS_ENDPOINT` names, else one
//! answering at `redis://localhost:6379`, else a `redis-server` it starts
//! for the session; without any, the queues are not read, which it warns
//! of (`session_redis`). A blueprint's SQL databases are the session's
//! Postgres, given to the handler as `CELERITY_LOCAL_SQL_DATABASE_ENDPOINT`:
//! the one that variable names, else one answering at `localhost:5432`,
//! else one it starts for the session from `initdb` and `postgres`; without
//! any, the handler's queries fail, which it warns of (`session_postgres`).
//! Buckets and datastores are the S3 and DynamoDB APIs the environment
//! names, else folders on disk that the SDK keeps them in
//! (`session_storage`).
//!
//! Every event is logged with its id, tag, outcome and latency. When the
//! handler exits, so does `celerity-dev`, saying why; nothing is restarted
//! silently. SIGTERM or Ctrl-C drains: `Drain` with the deadline from
//! `CELERITY_DRAIN_TIMEOUT` (or the config, or the longest handler timeout,
//! at most 5 min), work in flight is waited for and answered, then it exits.
//! `push`, `schedule` and `invoke` talk to a running `celerity-dev run`.

mod blueprint;
mod config;
mod gateway;
mod log;
mod queues;
mod session_postgres;
mod session_redis;
mod session_server;
mod session_storage;
mod sources;
mod stores;
mod websocket;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use celerity_testkit::TestRuntime;
use celerity_testkit::dispatcher::{Dispatcher, ENV_DRAIN_TIMEOUT, Notice};
use celerity_testkit::proto::v1::{ReadyAck, ready_ack::RefusedReason};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::signal::unix::{SignalKind, signal};

use crate::blueprint::Blueprint;
use crate::config::{App, DEFAULT_TIMEOUT, DevConfig};
use crate::gateway::{Active, Gateway};
use crate::websocket::{Hub, WsContext, WsOptions};
use celerity_tags::route::{Route, Router};

const USAGE: &str = "usage:
  celerity-dev run <package | path-to-binary> [--port PORT] [--blueprint FILE | --no-blueprint]
                   [--config FILE] [--timeout-ms MS]
                   [--ack-timeout-ms MS] [--ack-attempts N] [--drain-timeout-ms MS]
                   [--no-protocol-version]
  celerity-dev push <sourceId> <handlerName> <records.json | -> [--port PORT]
  celerity-dev schedule <scheduleId> <handlerName> [--port PORT]
  celerity-dev invoke <handlerName> [payload-json] [--async] [--port PORT]";

/// How long the handler has to exit by itself after the drain.
const EXIT_GRACE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
struct RunOptions {
    target: String,
    port: u16,
    blueprint: Option<PathBuf>,
    no_blueprint: bool,
    config: Option<PathBuf>,
    /// `--timeout-ms`, which applies only without a blueprint.
    timeout: Option<Duration>,
    ack_timeout: Option<Duration>,
    ack_attempts: Option<u32>,
    drain_timeout: Option<Duration>,
    /// `--no-protocol-version`: behave as the public runtime that predates
    /// version negotiation, which sends no protocol version and answers a
    /// WebSocket send once it is written, never waiting for a client's
    /// acknowledgement.
    no_protocol_version: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Command_ {
    Run(RunOptions),
    Push { source_id: String, handler: String, file: String, port: u16 },
    Schedule { schedule_id: String, handler: String, port: u16 },
    Invoke { handler: String, payload: Option<String>, is_async: bool, port: u16 },
}

fn millis(flag: &str, value: Option<&String>) -> Result<Duration, String> {
    let value = value.ok_or(format!("{flag} needs a value"))?;
    let ms: u64 = value.parse().map_err(|_| format!("{flag} {value:?}: expected milliseconds"))?;
    Ok(Duration::from_millis(ms.max(1)))
}

fn parse_args(args: &[String]) -> Result<Command_, String> {
    let mut args = args.iter();
    let command = args.next().ok_or(USAGE)?.clone();
    let mut positional = Vec::new();
    let mut port = 8080;
    let mut options = RunOptions {
        target: String::new(),
        port,
        blueprint: None,
        no_blueprint: false,
        config: None,
        timeout: None,
        ack_timeout: None,
        ack_attempts: None,
        drain_timeout: None,
        no_protocol_version: false,
    };
    let mut is_async = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value.parse().map_err(|_| format!("--port {value:?}: expected a port number"))?;
            }
            "--config" if command == "run" => {
                options.config = Some(PathBuf::from(args.next().ok_or("--config needs a file")?));
            }
            "--blueprint" if command == "run" => {
                options.blueprint = Some(PathBuf::from(args.next().ok_or("--blueprint needs a file")?));
            }
            "--no-blueprint" if command == "run" => options.no_blueprint = true,
            "--timeout-ms" if command == "run" => options.timeout = Some(millis(arg, args.next())?),
            "--ack-timeout-ms" if command == "run" => options.ack_timeout = Some(millis(arg, args.next())?),
            "--drain-timeout-ms" if command == "run" => options.drain_timeout = Some(millis(arg, args.next())?),
            "--ack-attempts" if command == "run" => {
                let value = args.next().ok_or("--ack-attempts needs a value")?;
                let n: u32 = value.parse().map_err(|_| format!("--ack-attempts {value:?}: expected a number"))?;
                options.ack_attempts = Some(n.max(1));
            }
            "--no-protocol-version" if command == "run" => options.no_protocol_version = true,
            "--async" if command == "invoke" => is_async = true,
            "-" => positional.push(arg.clone()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}\n{USAGE}")),
            other => positional.push(other.to_owned()),
        }
    }
    let mut positional = positional.into_iter();
    let mut next = |what: &str| positional.next().ok_or(format!("{command}: missing {what}\n{USAGE}"));
    let parsed = match command.as_str() {
        "run" => {
            options.target = next("the package or binary")?;
            options.port = port;
            if options.no_blueprint && options.blueprint.is_some() {
                return Err(format!("run: --blueprint and --no-blueprint contradict each other\n{USAGE}"));
            }
            if options.blueprint.is_some() && options.timeout.is_some() {
                return Err(format!(
                    "run: --timeout-ms applies only without a blueprint: the blueprint sets each handler's timeout\n{USAGE}"
                ));
            }
            Command_::Run(options)
        }
        "push" => Command_::Push {
            source_id: next("the source id")?,
            handler: next("the handler name")?,
            file: next("the records file (or -)")?,
            port,
        },
        "schedule" => {
            Command_::Schedule { schedule_id: next("the schedule id")?, handler: next("the handler name")?, port }
        }
        "invoke" => Command_::Invoke { handler: next("the handler name")?, payload: next("").ok(), is_async, port },
        other => return Err(format!("unknown command {other:?}\n{USAGE}")),
    };
    if positional.next().is_some() {
        return Err(format!("{command}: too many arguments\n{USAGE}"));
    }
    Ok(parsed)
}

/// A handler binary to run, and the folder of the package it was built
/// from (where its blueprint is looked for).
struct Built {
    binary: PathBuf,
    package_dir: Option<PathBuf>,
}

/// Builds `package` with cargo and returns its binary, or takes `target` as
/// a path when it names a file.
fn build(target: &str) -> Result<Built, String> {
    if Path::new(target).is_file() {
        return Ok(Built { binary: PathBuf::from(target), package_dir: None });
    }
    log::line(&format!("building {target} ..."));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args(["build", "-p", target, "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo build -p {target} failed"));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let binary = PathBuf::from(m["executable"].as_str()?);
            let package_dir = m["manifest_path"].as_str().and_then(|p| Path::new(p).parent()).map(Path::to_path_buf);
            Some(Built { binary, package_dir })
        })
        .next_back()
        .ok_or_else(|| format!("package {target} has no binary"))
}

/// Asks the binary what it serves.
fn manifest(binary: &Path) -> Result<Vec<config::ManifestEntry>, String> {
    let output = std::process::Command::new(binary)
        .arg("--manifest")
        .env("CELERITY_EXTRACT_MANIFEST", "1")
        .env("RUST_LOG", "error")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run {}: {e}", binary.display()))?;
    if !output.status.success() {
        return Err(format!("{} --manifest failed ({})", binary.display(), output.status));
    }
    config::parse_manifest(&output.stdout).map_err(|e| format!("{} --manifest: {e}", binary.display()))
}

fn example_curl(route: &Route, port: u16) -> String {
    let path: String = route
        .template()
        .split('/')
        .map(|s| if s.starts_with('{') { "example" } else { s })
        .collect::<Vec<_>>()
        .join("/");
    let body = match route.method() {
        "POST" | "PUT" | "PATCH" => " -H 'content-type: application/json' -d '{}'",
        _ => "",
    };
    format!("curl -i -X {} 'http://127.0.0.1:{port}{path}'{body}", route.method())
}

/// The commands to try, one per handler.
fn examples(app: &App, router: &Router, port: u16) -> Vec<String> {
    let mut lines: Vec<String> = router.routes().iter().map(|r| example_curl(r, port)).collect();
    let key = app.route_key();
    for h in &app.handlers {
        match h.kind.as_str() {
            "websocket" => {
                let route = h.tag.split_once("::").map_or("$default", |(_, r)| r);
                if !route.starts_with('$') {
                    lines.push(format!(
                        "websocat ws://127.0.0.1:{port}/ws   then send: {{\"{key}\":\"{route}\",\"data\":{{}}}}"
                    ));
                }
            }
            "consumer" | "schedule" => {
                if let Some(rest) = h.tag.strip_prefix("source::")
                    && let Some((source, name)) = rest.split_once("::")
                {
                    if h.kind == "consumer" {
                        lines.push(format!(
                            "curl -s -X POST 'http://127.0.0.1:{port}/dev/consumers/{source}/{name}' -d '[{{\"example\":1}}]'"
                        ));
                    } else {
                        lines.push(format!("curl -s -X POST 'http://127.0.0.1:{port}/dev/schedules/{source}/{name}'"));
                    }
                }
            }
            "custom" => lines.push(format!(
                "curl -s -X POST 'http://127.0.0.1:{port}/runtime/handlers/invoke' -H 'content-type: application/json' \
                 -d '{{\"handlerName\":\"{}\",\"invocationType\":\"requestResponse\",\"payload\":{{}}}}'",
                h.name
            )),
            _ => {}
        }
    }
    lines
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(error) => error.to_string(),
    }
}

fn load_config(path: Option<&Path>) -> Result<DevConfig, String> {
    match path {
        None => Ok(DevConfig::default()),
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("could not read {}: {e}", path.display()))?;
            config::parse_config(&bytes).map_err(|e| format!("{}: {e}", path.display()))
        }
    }
}

/// What the handler serves: the blueprint named, else the one found beside
/// the package or in the current directory, else (or with
/// `--no-blueprint`) the binary's manifest. Says on the log which it was.
fn application(
    options: &RunOptions,
    named: Option<Blueprint>,
    built: &Built,
    dev_config: DevConfig,
) -> Result<App, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let found = match (named, &options.blueprint) {
        (Some(blueprint), Some(path)) => Some((path.clone(), blueprint)),
        _ if options.no_blueprint => None,
        _ => match blueprint::find(built.package_dir.as_deref(), &cwd) {
            Some(path) => Some((path.clone(), blueprint::load(&path).map_err(|e| e.to_string())?)),
            None => None,
        },
    };
    let Some((path, blueprint)) = found else {
        let why = if options.no_blueprint {
            "--no-blueprint".to_owned()
        } else {
            let places: Vec<String> =
                built.package_dir.iter().chain(std::iter::once(&cwd)).map(|d| d.display().to_string()).collect();
            format!("no {} in {}", blueprint::FILE_NAMES.join(" or "), places.join(" or "))
        };
        log::line(&format!(
            "no blueprint read ({why}): serving what the binary's manifest declares; \
             the runtime would serve what a blueprint declares (--blueprint FILE)"
        ));
        let timeout = options.timeout.unwrap_or(DEFAULT_TIMEOUT);
        return App::resolve(&manifest(&built.binary)?, dev_config, timeout);
    };
    if options.timeout.is_some() {
        return Err(format!(
            "--timeout-ms applies only without a blueprint, and {} was found: it sets each handler's timeout \
             (--no-blueprint serves the binary's manifest instead)",
            path.display()
        ));
    }
    log::line(&format!("blueprint {}: {} handler(s)", path.display(), blueprint.handlers.len()));
    for (name, why) in &blueprint.skipped {
        log::line(&format!("  not served: {name}, {why}"));
    }
    for (consumer, why) in &blueprint.unread {
        log::line(&format!("  queue not read: the consumer {consumer} {why}"));
    }
    App::from_blueprint(blueprint, dev_config).map_err(|e| format!("{}: {e}", path.display()))
}

/// Logs why the runtime side refused the handler, with both tag lists.
fn log_refusal(ack: &ReadyAck) {
    if RefusedReason::try_from(ack.refused_reason) == Ok(RefusedReason::ProtocolVersion) {
        log::line("the handler was refused: it declares a protocol version the runtime does not serve");
        return;
    }
    let list = |tags: &[String]| if tags.is_empty() { "none".to_owned() } else { tags.join(", ") };
    log::line("the handler was refused, as the runtime refuses it: its tags do not match what is declared");
    log::line(&format!("  unknown tags (the handler serves them, nothing declares them): {}", list(&ack.unknown_tags)));
    log::line(&format!(
        "  unhandled tags (declared, but the handler does not serve them): {}",
        list(&ack.unhandled_tags)
    ));
}

async fn run(options: RunOptions) -> Result<ExitCode, String> {
    let dev_config = load_config(options.config.as_deref())?;
    // A blueprint named on the command line is read before the build, so
    // a mistake in it is told at once.
    let named = options.blueprint.as_deref().map(blueprint::load).transpose().map_err(|e| e.to_string())?;
    let built = build(&options.target)?;
    let binary = built.binary.clone();
    let app = Arc::new(application(&options, named, &built, dev_config)?);
    let mut runtime_config = app.runtime_config();
    if options.no_protocol_version {
        runtime_config.protocol_version = None;
        log::line(
            "as a runtime without protocol version negotiation: no version is sent, and WebSocket sends are \
             answered once written, without waiting for clients' acknowledgements",
        );
    }

    // Bound first: a port in use is a startup error, not a surprise later.
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .map_err(|e| format!("could not listen on 127.0.0.1:{}: {e}", options.port))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();

    // The runtime side's verdict on each Ready, seen as it is made: a
    // refused handler exits, and the refusal says why.
    let (refusals, mut refused) = tokio::sync::mpsc::unbounded_channel::<ReadyAck>();
    let rt = TestRuntime::builder()
        .runtime_config(runtime_config.clone())
        .ack_with(move |_, ack| {
            if !ack.accepted {
                let _ = refusals.send(ack.clone());
            }
            ack
        })
        .bind()
        .await
        .map_err(|e| format!("could not start the runtime side: {e}"))?;
    let socket = rt.socket_path().map(|p| p.display().to_string()).unwrap_or_default();
    let env = rt.env();

    let ws = &app.config.websocket;
    let defaults = WsOptions::default();
    let ws_options = WsOptions {
        route_key: app.route_key().to_owned(),
        ack_timeout: options
            .ack_timeout
            .or(ws.ack_timeout_ms.map(Duration::from_millis))
            .unwrap_or(defaults.ack_timeout),
        ack_attempts: options.ack_attempts.or(ws.ack_attempts).unwrap_or(defaults.ack_attempts),
        waits_for_client_acks: !options.no_protocol_version,
    };
    let hub = Hub::new(ws_options);
    let mut builder = Dispatcher::builder()
        .runtime_config(runtime_config)
        .delivery(hub.clone())
        .on_notice(|notice: &Notice| log::line(&notice.to_string()));
    let configured_drain = options.drain_timeout.or(app.config.drain_timeout_ms.map(Duration::from_millis));
    if std::env::var_os(ENV_DRAIN_TIMEOUT).is_none()
        && let Some(drain) = configured_drain
    {
        builder = builder.drain_timeout(drain);
    }
    let dispatcher = builder.build();
    dispatcher.serve(rt);
    log::line(&format!("runtime socket: {socket}"));

    // What the blueprint declares beside the handlers, said once. The
    // queues are read from the session's Redis, and the SQL databases are
    // the session's Postgres, each found (or started) before anything is
    // served; they live as long as this function, and a server started for
    // them stops when it returns.
    let session_redis = session_redis::open(&app).await?;
    let session_postgres = session_postgres::open(&app).await?;
    let session_storage = session_storage::open(&app, &binary)?;
    let redis = session_redis.redis();
    let provisioned = stores::provision(&app.resources, redis)?;
    for line in &provisioned.lines {
        log::line(line);
    }
    let feeds = match redis {
        Some(redis) => queues::prepare(redis, &app.feeds).await?,
        None => Vec::new(),
    };
    let mut child = Command::new(&binary)
        .envs(env)
        .envs(provisioned.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .envs(session_redis.handler_env())
        .envs(session_postgres.handler_env())
        .envs(session_storage.handler_env())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", binary.display()))?;
    log::line(&format!("started {} (pid {})", binary.display(), child.id().unwrap_or(0)));

    let router = Router::new(app.handlers.iter().map(|h| h.tag.as_str()));
    let active = Arc::new(Active::default());
    let ws_ctx = Arc::new(WsContext { dispatcher: dispatcher.clone(), app: Arc::clone(&app), hub: hub.clone() });
    let gateway = Arc::new(Gateway {
        app: Arc::clone(&app),
        router: router.clone(),
        dispatcher: dispatcher.clone(),
        ws: ws_ctx,
        active: Arc::clone(&active),
    });
    // Requests arriving before the handler attaches are held for the attach
    // grace, as the runtime holds them during a restart.
    let server = tokio::spawn(gateway::serve(listener, gateway));

    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("could not handle SIGTERM: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("could not handle SIGINT: {e}"))?;

    tokio::select! {
        // A refusal first: the refused handler's exit is ready as soon as
        // the refusal is, and the refusal is what says why.
        biased;
        Some(ack) = refused.recv() => {
            log_refusal(&ack);
            match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                Ok(status) => log::line(&format!("the handler exited ({}); not restarting it", describe(status))),
                Err(_) => {
                    log::line("the refused handler did not exit; killing it");
                    let _ = child.kill().await;
                }
            }
            server.abort();
            return Ok(ExitCode::FAILURE);
        }
        attached = dispatcher.wait_for_streams(Duration::from_secs(60), |s| !s.is_empty()) => {
            for feed in app.feeds.iter().filter(|_| redis.is_some()) {
                log::line(&format!(
                    "reading {} (queue {}) into {} as consumer group {}",
                    feed.stream(),
                    feed.queues.join(", "),
                    feed.tag,
                    queues::group(feed)
                ));
            }
            if attached.is_err() {
                log::line("the handler has not connected after 60 s; still waiting");
            } else {
                log::line(&format!("serving on http://127.0.0.1:{port}"));
                for (kind, tags) in app.tags_by_kind() {
                    log::line(&format!("  {kind}: {}", tags.join(", ")));
                }
                log::line("try:");
                for example in examples(&app, &router, port) {
                    log::line(&format!("  {example}"));
                }
                log::line("Ctrl-C (or SIGTERM) drains the handler and stops.");
            }
        }
        status = child.wait() => {
            log::line(&format!("the handler exited before serving ({}); not restarting it", describe(status)));
            server.abort();
            return Ok(ExitCode::FAILURE);
        }
        _ = term.recv() => {
            let readers = queues::start(Vec::new(), &dispatcher, &app);
            return shutdown(&dispatcher, &mut child, &active, server, readers, &mut int).await;
        }
        _ = int.recv() => {
            let readers = queues::start(Vec::new(), &dispatcher, &app);
            return shutdown(&dispatcher, &mut child, &active, server, readers, &mut term).await;
        }
    }

    // Once the handler serves (or after the attach wait, when events are
    // held or shed as the runtime holds or sheds them), the queues are read.
    let readers = queues::start(feeds, &dispatcher, &app);
    tokio::select! {
        status = child.wait() => {
            log::line(&format!("the handler exited ({}); not restarting it", describe(status)));
            server.abort();
            Ok(ExitCode::FAILURE)
        }
        _ = term.recv() => shutdown(&dispatcher, &mut child, &active, server, readers, &mut int).await,
        _ = int.recv() => shutdown(&dispatcher, &mut child, &active, server, readers, &mut term).await,
    }
}

/// Drains: the queues no longer read, `Drain` to the handler, everything in
/// flight waited for (the requests that carried it answered, the queue
/// batches acknowledged), then the handler's own exit.
async fn shutdown(
    dispatcher: &Dispatcher,
    child: &mut Child,
    active: &Active,
    server: tokio::task::JoinHandle<()>,
    readers: queues::Readers,
    again: &mut tokio::signal::unix::Signal,
) -> Result<ExitCode, String> {
    readers.stop();
    let in_flight = dispatcher.in_flight();
    // From here on nothing new is dispatched: new requests are answered 503.
    let drained = dispatcher.drain();
    log::line(&format!(
        "draining: {in_flight} event(s) in flight, deadline {:.1} s",
        dispatcher.drain_timeout().as_secs_f64()
    ));
    let work = async {
        let report = drained.await;
        if report.completed {
            log::line(&format!("drained: {} event(s) answered", report.in_flight_at_start));
        } else {
            log::line(&format!("drain deadline passed: {} event(s) abandoned", report.abandoned));
        }
        // Let the answers reach their callers, and the queue batches their
        // acknowledgements, before the server stops.
        active.wait_idle(Duration::from_secs(5)).await;
        readers.finish(Duration::from_secs(5)).await;
        match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
            Ok(status) => log::line(&format!("the handler exited ({})", describe(status))),
            Err(_) => {
                log::line("the handler did not exit after the drain; sending SIGTERM");
                if let Some(pid) = child.id() {
                    // SAFETY: kill(2) has no memory-safety preconditions.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
                }
                if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_err() {
                    log::line("still running; killing it");
                    let _ = child.kill().await;
                }
            }
        }
    };
    let code = tokio::select! {
        _ = work => ExitCode::SUCCESS,
        _ = again.recv() => {
            log::line("second signal: stopping now");
            let _ = child.kill().await;
            ExitCode::from(130)
        }
    };
    server.abort();
    dispatcher.stop();
    Ok(code)
}

/// A one-shot HTTP/1.1 request to a running dev runtime; returns the
/// status and body.
fn request(port: u16, path: &str, body: &[u8]) -> Result<(u16, String), String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("could not reach celerity-dev on 127.0.0.1:{port}: {e}"))?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body)).map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("a malformed HTTP response")?;
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or("a malformed status line")?;
    Ok((status, body.to_owned()))
}

fn client(command: Command_) -> Result<ExitCode, String> {
    let encode = |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    let (port, path, body) = match command {
        Command_::Push { source_id, handler, file, port } => {
            let body = if file == "-" {
                let mut buf = Vec::new();
                std::io::stdin().read_to_end(&mut buf).map_err(|e| e.to_string())?;
                buf
            } else {
                std::fs::read(&file).map_err(|e| format!("could not read {file}: {e}"))?
            };
            (port, format!("/dev/consumers/{}/{}", encode(&source_id), encode(&handler)), body)
        }
        Command_::Schedule { schedule_id, handler, port } => {
            (port, format!("/dev/schedules/{}/{}", encode(&schedule_id), encode(&handler)), Vec::new())
        }
        Command_::Invoke { handler, payload, is_async, port } => {
            let payload: serde_json::Value = match payload {
                Some(p) => serde_json::from_str(&p).map_err(|e| format!("payload is not JSON: {e}"))?,
                None => serde_json::Value::Null,
            };
            let body = serde_json::json!({
                "handlerName": handler,
                "invocationType": if is_async { "async" } else { "requestResponse" },
                "payload": payload,
            });
            (port, "/runtime/handlers/invoke".to_owned(), body.to_string().into_bytes())
        }
        Command_::Run(_) => unreachable!("run is not a client command"),
    };
    let (status, body) = request(port, &path, &body)?;
    println!("{body}");
    Ok(if (200..300).contains(&status) { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse_args(&args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let outcome = match command {
        Command_::Run(options) => match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
            Ok(runtime) => runtime.block_on(run(options)),
            Err(error) => Err(format!("could not start tokio: {error}")),
        },
        other => client(other),
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            log::line(&message);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_run() {
        let Command_::Run(options) = parse_args(&args(&[
            "run",
            "hello",
            "--port",
            "9000",
            "--timeout-ms",
            "500",
            "--config",
            "dev.json",
            "--ack-timeout-ms",
            "50",
            "--ack-attempts",
            "2",
            "--no-protocol-version",
        ]))
        .unwrap() else {
            panic!("not run")
        };
        assert!(options.no_protocol_version);
        assert_eq!(options.target, "hello");
        assert_eq!(options.port, 9000);
        assert_eq!(options.timeout, Some(Duration::from_millis(500)));
        assert_eq!(options.config, Some(PathBuf::from("dev.json")));
        assert_eq!((options.ack_timeout, options.ack_attempts), (Some(Duration::from_millis(50)), Some(2)));
    }

    #[test]
    fn parses_client_commands() {
        assert_eq!(
            parse_args(&args(&["push", "orders-queue", "process", "-", "--port", "9001"])).unwrap(),
            Command_::Push {
                source_id: "orders-queue".into(),
                handler: "process".into(),
                file: "-".into(),
                port: 9001
            }
        );
        assert_eq!(
            parse_args(&args(&["schedule", "nightly", "cleanup"])).unwrap(),
            Command_::Schedule { schedule_id: "nightly".into(), handler: "cleanup".into(), port: 8080 }
        );
        assert_eq!(
            parse_args(&args(&["invoke", "reindex", "{\"full\":true}", "--async"])).unwrap(),
            Command_::Invoke {
                handler: "reindex".into(),
                payload: Some("{\"full\":true}".into()),
                is_async: true,
                port: 8080
            }
        );
    }

    #[test]
    fn parses_blueprint_options() {
        let Command_::Run(options) = parse_args(&args(&["run", "orders", "--blueprint", "app.yaml"])).unwrap() else {
            panic!("not run")
        };
        assert_eq!((options.blueprint, options.no_blueprint), (Some(PathBuf::from("app.yaml")), false));
        let Command_::Run(options) = parse_args(&args(&["run", "orders", "--no-blueprint"])).unwrap() else {
            panic!("not run")
        };
        assert!(options.no_blueprint && options.blueprint.is_none());
        assert!(parse_args(&args(&["run", "orders", "--blueprint", "a.yaml", "--no-blueprint"])).is_err());
        let err = parse_args(&args(&["run", "orders", "--blueprint", "a.yaml", "--timeout-ms", "5"])).unwrap_err();
        assert!(err.contains("--timeout-ms applies only without a blueprint"), "{err}");
        assert!(parse_args(&args(&["run", "orders", "--blueprint"])).is_err());
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        assert!(parse_args(&args(&["serve", "hello"])).is_err());
        assert!(parse_args(&args(&["run"])).is_err());
        assert!(parse_args(&args(&["run", "hello", "--colour"])).is_err());
        assert!(parse_args(&args(&["run", "hello", "--port", "x"])).is_err());
        assert!(parse_args(&args(&["run", "hello", "extra"])).is_err());
        assert!(parse_args(&args(&["schedule", "nightly", "--config", "x"])).is_err());
    }

    #[test]
    fn curl_examples_fill_parameters() {
        let route = Route::from_tag("POST::/greetings/{name}").unwrap();
        assert_eq!(
            example_curl(&route, 8080),
            "curl -i -X POST 'http://127.0.0.1:8080/greetings/example' -H 'content-type: application/json' -d '{}'"
        );
    }
}
