//! `cargo run --release -p celerity-bench --bin bench-config-start -- [--runs N]`
//!
//! The cold-start cost of configuration: how long a fresh process takes from
//! its first instruction to its first configuration value, for each kind of
//! store, against a process whose configuration describes no store (its
//! value read from the environment). Each measurement is a new process, so
//! what is made once per process (the AWS SDK's configuration, a Valkey
//! connection) is in it; the median of `--runs` (default 25) is printed per
//! store kind, with its ratio to the no-store case and the difference.
//!
//! The stores are real: a file, a Redis on loopback, and Secrets Manager and
//! Parameter Store in an AWS API emulator (moto's server), started as the
//! tests start them.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use celerity::config::Configuration;
use celerity_testkit::servers;

const CHILD: &str = "BENCH_CONFIG_START_CHILD";

fn main() -> ExitCode {
    let started = Instant::now();
    if std::env::var_os(CHILD).is_some() {
        return child(started);
    }
    let runs =
        std::env::args().skip_while(|arg| arg != "--runs").nth(1).and_then(|n| n.parse().ok()).unwrap_or(25usize);
    match parent(runs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench-config-start: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the first value the environment's configuration offers and prints
/// the nanoseconds since the process started.
fn child(started: Instant) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let value = runtime.block_on(async {
        let config = Configuration::from_env().map_err(|e| e.to_string())?;
        config.require("GREETING").await.map_err(|e| e.to_string())
    });
    match value {
        Ok(value) if value == "hello" => {
            println!("{}", started.elapsed().as_nanos());
            ExitCode::SUCCESS
        }
        Ok(other) => {
            eprintln!("read {other:?}, not the value written");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn parent(runs: usize) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("store.json");
    std::fs::write(&file, r#"{"GREETING": "hello"}"#).map_err(|e| e.to_string())?;
    let redis = servers::redis();
    redis.command(&["SET", "bench-config", r#"{"GREETING": "hello"}"#]);
    let moto = servers::moto();
    let (status, body) = moto.call_json(
        "secretsmanager.CreateSecret",
        r#"{"Name": "bench/config", "SecretString": "{\"GREETING\": \"hello\"}"}"#,
    );
    if status != 200 && !body.contains("ResourceExists") {
        return Err(format!("the emulator did not create the secret: {body}"));
    }
    let (status, body) = moto.call_json(
        "AmazonSSM.PutParameter",
        r#"{"Name": "/bench/config/GREETING", "Value": "hello", "Type": "String", "Overwrite": true}"#,
    );
    if status != 200 {
        return Err(format!("the emulator did not put the parameter: {body}"));
    }

    let aws: Vec<(String, String)> = moto.environment().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let port = redis.port().to_string();
    let cases: Vec<(&str, Vec<(String, String)>)> = vec![
        ("no store (CELERITY_APP_GREETING)", vec![("CELERITY_APP_GREETING".into(), "hello".into())]),
        (
            "file",
            vec![
                ("CELERITY_CONFIG_STORE_ID".into(), file.display().to_string()),
                ("CELERITY_CONFIG_STORE_KIND".into(), "file".into()),
            ],
        ),
        (
            "local Valkey",
            vec![
                ("CELERITY_PLATFORM".into(), "local".into()),
                ("CELERITY_CONFIG_VALKEY_HOST".into(), "127.0.0.1".into()),
                ("CELERITY_CONFIG_VALKEY_PORT".into(), port),
                ("CELERITY_CONFIG_STORE_ID".into(), "bench-config".into()),
            ],
        ),
        (
            "Secrets Manager (emulator)",
            [
                vec![
                    ("CELERITY_PLATFORM".into(), "aws".into()),
                    ("CELERITY_CONFIG_STORE_ID".into(), "bench/config".into()),
                ],
                aws.clone(),
            ]
            .concat(),
        ),
        (
            "Parameter Store (emulator)",
            [
                vec![
                    ("CELERITY_PLATFORM".into(), "aws".into()),
                    ("CELERITY_CONFIG_STORE_ID".into(), "/bench/config".into()),
                    ("CELERITY_CONFIG_STORE_KIND".into(), "parameter-store".into()),
                ],
                aws,
            ]
            .concat(),
        ),
    ];

    let mut medians = Vec::new();
    // Interleaved, so that the machine's load falls on every case alike.
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    for _ in 0..runs {
        for (index, (name, env)) in cases.iter().enumerate() {
            let output = Command::new(&exe)
                .env_clear()
                .env(CHILD, "1")
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .output()
                .map_err(|e| e.to_string())?;
            if !output.status.success() {
                return Err(format!("{name}: {}", String::from_utf8_lossy(&output.stderr)));
            }
            let ns: u64 =
                String::from_utf8_lossy(&output.stdout).trim().parse().map_err(|_| format!("{name}: no time"))?;
            samples[index].push(Duration::from_nanos(ns));
        }
    }
    for times in &mut samples {
        times.sort();
        medians.push(times[times.len() / 2]);
    }
    // What the emulator itself takes to answer one read, asked directly,
    // to tell the SDK's part of the AWS rows from the emulator's.
    let mut direct: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            moto.call_json("secretsmanager.GetSecretValue", r#"{"SecretId": "bench/config"}"#);
            start.elapsed()
        })
        .collect();
    direct.sort();
    let base = medians[0];
    println!("| store | first value, from process start (median of {runs}) | / no store | + over no store |");
    println!("| --- | --- | --- | --- |");
    for ((name, _), median) in cases.iter().zip(&medians) {
        println!(
            "| {name} | {:.2} ms | {:.2} | {:+.2} ms |",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() / base.as_secs_f64(),
            (median.as_secs_f64() - base.as_secs_f64()) * 1e3
        );
    }
    println!(
        "\nThe emulator answers one GetSecretValue, asked directly over a new connection, in {:.2} ms (median).",
        direct[direct.len() / 2].as_secs_f64() * 1e3
    );
    Ok(())
}
