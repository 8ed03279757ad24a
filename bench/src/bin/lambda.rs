//! `celerity-bench-lambda [--rounds N] LABEL=BINARY[@tag]...`
//!
//! Cold start of handler binaries as AWS Lambda functions, against the test
//! kit's Runtime API on loopback, with the variables a Celerity deployment
//! sets (`DeployedFunction::new("whoAmI", "custom")`, the custom handler of
//! the `lambda_sources` example, which reads its configuration from the
//! environment and answers it). For each binary, over N fresh processes:
//!
//! - from the process's spawn to its first `GET /invocation/next`;
//! - from the spawn to the first answer of `whoAmI`;
//!
//! and its size, as built and stripped (`strip` on a copy). A binary
//! written `BINARY@tag` is given `CELERITY_HANDLER_TAG=custom::whoAmI` in
//! place of the id, as SDK versions before the deployed variables were
//! served needed it; one whose label contains `without` is built without
//! the `aws-lambda` feature and measured for size only. See BENCHMARKS.md
//! for the builds measured.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use celerity_testkit::{DeployedFunction, HandlerProcess, LambdaRuntimeApi};

const WAIT: Duration = Duration::from_secs(30);

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn stripped_size(binary: &PathBuf) -> Result<(u64, u64), String> {
    let built = std::fs::metadata(binary).map_err(|e| format!("{}: {e}", binary.display()))?.len();
    let copy = std::env::temp_dir().join(format!("celerity-bench-strip-{}", std::process::id()));
    std::fs::copy(binary, &copy).map_err(|e| format!("copy {}: {e}", binary.display()))?;
    let status = std::process::Command::new("strip").arg(&copy).status().map_err(|e| format!("strip: {e}"))?;
    let stripped = std::fs::metadata(&copy).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&copy);
    if !status.success() {
        return Err(format!("strip {} failed: {status}", binary.display()));
    }
    Ok((built, stripped))
}

async fn cold_start(binary: &PathBuf, by_tag: bool) -> Result<(f64, f64), String> {
    let api = LambdaRuntimeApi::start().await.map_err(|e| format!("Runtime API: {e}"))?;
    let mut command = HandlerProcess::command(binary).envs(api.env()).env("RUST_LOG", "warn");
    for name in DeployedFunction::unset() {
        command = command.env_remove(name);
    }
    let mut variables = DeployedFunction::new("whoAmI", "custom").env();
    if by_tag {
        variables.retain(|(name, _)| name != "CELERITY_HANDLER_ID");
        variables.push(("CELERITY_HANDLER_TAG".to_string(), "custom::whoAmI".to_string()));
    }
    let command = command.envs(variables);
    let started = Instant::now();
    let mut process = command.spawn().map_err(|e| format!("spawn {}: {e}", binary.display()))?;
    if !api.wait_for_polls(1, WAIT).await {
        return Err(format!("{} never asked for an invocation: {}", binary.display(), process.output_text()));
    }
    let polled = started.elapsed();
    let answer = api.invoke("{}").await;
    let answered = started.elapsed();
    let _ = process.kill().await;
    match answer {
        Some(answer) if answer.error().is_none() => Ok((polled.as_secs_f64() * 1e3, answered.as_secs_f64() * 1e3)),
        other => Err(format!("{}: whoAmI answered {other:?}", binary.display())),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut rounds = 20;
    let mut binaries = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--rounds" {
            rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(rounds);
        } else if let Some((label, path)) = arg.split_once('=') {
            let (path, by_tag) = path.strip_suffix("@tag").map_or((path, false), |path| (path, true));
            binaries.push((label.to_string(), PathBuf::from(path), by_tag));
        } else {
            eprintln!("usage: celerity-bench-lambda [--rounds N] LABEL=BINARY[@tag]...");
            return ExitCode::from(2);
        }
    }
    println!("| binary | size | stripped | first `/next`, median | p90 | max | first answer, median | p90 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (label, binary, by_tag) in &binaries {
        let (built, stripped) = match stripped_size(binary) {
            Ok(sizes) => sizes,
            Err(error) => {
                eprintln!("celerity-bench-lambda: {error}");
                return ExitCode::FAILURE;
            }
        };
        let mib = |bytes: u64| format!("{:.2} MiB", bytes as f64 / 1024.0 / 1024.0);
        let mut polls = Vec::new();
        let mut answers = Vec::new();
        // Lambda functions only: a binary without the feature is measured
        // for size alone.
        if !label.contains("without") {
            for _ in 0..rounds {
                match cold_start(binary, *by_tag).await {
                    Ok((poll, answer)) => {
                        polls.push(poll);
                        answers.push(answer);
                    }
                    Err(error) => {
                        eprintln!("celerity-bench-lambda: {error}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        }
        polls.sort_by(f64::total_cmp);
        answers.sort_by(f64::total_cmp);
        let ms = |v: f64| if v.is_nan() { "–".to_string() } else { format!("{v:.1} ms") };
        println!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            mib(built),
            mib(stripped),
            ms(percentile(&polls, 0.5)),
            ms(percentile(&polls, 0.9)),
            ms(polls.last().copied().unwrap_or(f64::NAN)),
            ms(percentile(&answers, 0.5)),
            ms(percentile(&answers, 0.9)),
        );
    }
    ExitCode::SUCCESS
}
