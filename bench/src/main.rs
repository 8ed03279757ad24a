//! `cargo run --release -p celerity-bench -- [--smoke|--quick|--full] [--filter SUBSTR] [--rounds N] [--out FILE]`
//!
//! Runs the benchmark matrix against (A), the SDK handler, and (B), the
//! hand-written tonic handler, interleaved, and prints the tables of A, B
//! and A/B and the targets. See BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use celerity_bench::harness::{self, Mode, Options, Pairing};
use celerity_bench::report;

const USAGE: &str =
    "usage: celerity-bench [--smoke|--quick|--full] [--filter SUBSTR] [--rounds N] [--out FILE] [--no-build]

  --smoke        a few hundred events per case, one round (what CI runs)
  --quick        the default: the whole matrix in a few minutes
  --full         more events and rounds, and one million events for memory growth
  --filter S     only the cases whose name contains S, or one of S's comma-separated
                 parts (e.g. c256, 1KiB, ws/, memory, \"c1/0B/1tag,consumer\",
                 \"cache-get,queue-send\": these two start a Redis of their own,
                 sql-select a Postgres)
  --rounds N     rounds of A and B per case (default: 1 smoke, 3 quick, 5 full)
  --out FILE     also write the report (markdown) to FILE
  --no-build     do not run `cargo build` for the two handler binaries first

environment: BENCH_SDK_HANDLER / BENCH_RAW_HANDLER run another executable (a
profiler wrapper, say) as (A) / (B) instead of the ones built beside this one.
Passed on to the handlers: BENCH_SDK_IO_THREAD=false (the stream as a task),
BENCH_SDK_RUNTIME=current_thread, BENCH_SDK_WORKERS=N (a runtime of N workers),
BENCH_SDK_LAYER=1 (one pass-through layer) for (A); BENCH_RAW_HANDOFF=1 for (B)
(answers made on a multi-threaded runtime, as (A)'s threads run them).";

struct Args {
    mode: Mode,
    filter: Option<String>,
    rounds: Option<usize>,
    out: Option<PathBuf>,
    build: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { mode: Mode::Quick, filter: None, rounds: None, out: None, build: true };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--smoke" => args.mode = Mode::Smoke,
            "--quick" => args.mode = Mode::Quick,
            "--full" => args.mode = Mode::Full,
            "--filter" => args.filter = Some(it.next().ok_or("--filter needs a value")?),
            "--rounds" => {
                let n = it.next().ok_or("--rounds needs a value")?;
                args.rounds = Some(n.parse().map_err(|_| format!("--rounds {n}: not a number"))?);
            }
            "--out" => args.out = Some(it.next().ok_or("--out needs a value")?.into()),
            "--no-build" => args.build = false,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

/// `cargo run` builds only this binary: build the two handlers with the same
/// profile (a no-op when they are up to date), so that a change to the SDK
/// is never measured with a stale (A).
fn build_handlers(dir: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command.args(["build", "-p", "celerity-bench", "--bin", "bench-sdk-handler", "--bin", "bench-raw-handler"]);
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    // The target directory this binary was built in: <target>/<profile>/.
    if let Some(target) = dir.parent() {
        command.env("CARGO_TARGET_DIR", target);
    }
    let status = command.status().map_err(|e| format!("could not run cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("cargo build of the handlers failed ({status})")) }
}

/// The CPU as `/proc/cpuinfo` names it, with its family and model, and
/// whether it runs under a hypervisor.
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|line| line.split(':').next().is_some_and(|key| key.trim() == name))
            .and_then(|line| line.split_once(':'))
            .map_or(String::new(), |(_, value)| value.trim().to_string())
    };
    let virtualised = if field("flags").split_whitespace().any(|f| f == "hypervisor") { ", virtualised" } else { "" };
    format!("{} (family {}, model {}{virtualised})", field("model name"), field("cpu family"), field("model"))
}

fn shell(command: &str) -> String {
    std::process::Command::new("sh")
        .args(["-c", command])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            if !error.is_empty() {
                eprintln!("{error}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let exe = std::env::current_exe().expect("the path of this executable");
    let dir = exe.parent().expect("a directory").to_path_buf();
    if args.build
        && let Err(error) = build_handlers(&dir)
    {
        eprintln!("celerity-bench: {error}");
        return ExitCode::FAILURE;
    }
    // A wrapper (valgrind, perf) can stand in for either handler.
    let handler = |variable: &str, name: &str| std::env::var_os(variable).map_or_else(|| dir.join(name), PathBuf::from);
    let mut options = Options::new(
        args.mode,
        handler("BENCH_SDK_HANDLER", "bench-sdk-handler"),
        handler("BENCH_RAW_HANDLER", "bench-raw-handler"),
    );
    options.filter = args.filter;
    if let Some(rounds) = args.rounds {
        options.rounds = rounds;
    }
    if cfg!(debug_assertions) && args.mode != Mode::Smoke {
        eprintln!("celerity-bench: a debug build; run with --release for numbers worth reading");
    }

    let cpu = cpu_model();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load_before = shell("uptime");
    eprintln!("machine: {cores} cores, {cpu}\nbefore: {load_before}");
    let results = match harness::run(&options, |line| eprintln!("{line}")) {
        Ok(results) => results,
        Err(error) => {
            eprintln!("celerity-bench: {error}");
            return ExitCode::FAILURE;
        }
    };
    let load_after = shell("uptime");

    let summaries = report::summarise(&results);
    let targets = report::targets(&summaries);
    let mut text = format!(
        "machine: {cores} cores, {cpu}\nmode: {:?}, {} round(s), A and B interleaved; medians\nload before: {load_before}\nload after:  {load_after}\n\n",
        options.mode, options.rounds
    );
    if summaries.iter().any(|s| s.shape.pairing() == Pairing::SdkVsRaw) {
        text.push_str("### Throughput, CPU, memory\n\n");
        text.push_str(&report::throughput_table(&summaries));
        text.push_str("\n### Latency (dispatch handed to the stream → result read)\n\n");
        text.push_str(&report::latency_table(&summaries));
        text.push_str("\n### Allocations and context switches (handler process, per event)\n\n");
        text.push_str(&report::counts_table(&summaries));
    }
    if summaries.iter().any(|s| s.memory) {
        text.push_str("\n### Memory growth\n\n");
        text.push_str(&report::memory_table(&summaries));
    }
    if summaries.iter().any(|s| s.shape.pairing() == Pairing::SdkHandleVsDirectClient) {
        text.push_str(
            "\n### Resource operations (A: the SDK's handle, B: the client crate, redis, sqlx or the AWS SDK's, directly; both the \
             SDK handler, per event)\n\n",
        );
        text.push_str(&report::resource_table(&summaries));
    }
    text.push_str("\n### Targets\n\n");
    text.push_str(&report::targets_table(&targets));
    println!("{text}");
    if let Some(out) = &args.out
        && let Err(error) = std::fs::write(out, &text)
    {
        eprintln!("celerity-bench: could not write {}: {error}", out.display());
    }
    let clean = results.iter().flat_map(|r| r.a.iter().chain(&r.b)).all(|s| s.is_clean());
    if clean {
        ExitCode::SUCCESS
    } else {
        eprintln!("celerity-bench: some events were not answered correctly; see FAILED above");
        ExitCode::FAILURE
    }
}
