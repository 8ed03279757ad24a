//! `celerity-dev`: run a Celerity handler binary on a laptop.
//!
//! ```text
//! celerity-dev run <package | path-to-binary> [--port 8080] [--timeout-ms 30000]
//! ```
//!
//! It builds the package (or takes the binary), reads the binary's handler
//! manifest to learn what it serves, plays the Celerity runtime's side of the
//! handler IPC protocol on a Unix socket, starts the binary pointed at it,
//! and serves the binary's HTTP handlers on 127.0.0.1. Every event is logged
//! with its tag, outcome and latency. When the handler exits, so does
//! `celerity-dev`, saying why; nothing is restarted silently.

mod gateway;
mod router;

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use celerity_testkit::TestRuntime;
use tokio::net::TcpListener;
use tokio::process::Command;

use crate::gateway::Gateway;
use crate::router::Router;

const USAGE: &str = "usage: celerity-dev run <package | path-to-binary> [--port PORT] [--timeout-ms MS]";

struct Options {
    target: String,
    port: u16,
    timeout: Duration,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut args = args.iter();
    match args.next().map(String::as_str) {
        Some("run") => {}
        Some(other) => return Err(format!("unknown command {other:?}\n{USAGE}")),
        None => return Err(USAGE.to_string()),
    }
    let mut target = None;
    let mut port = 8080;
    let mut timeout = Duration::from_secs(30);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value.parse().map_err(|_| format!("--port {value:?}: expected a port number"))?;
            }
            "--timeout-ms" => {
                let value = args.next().ok_or("--timeout-ms needs a value")?;
                let ms: u64 = value.parse().map_err(|_| format!("--timeout-ms {value:?}: expected milliseconds"))?;
                timeout = Duration::from_millis(ms.max(1));
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}\n{USAGE}")),
            other => target = Some(other.to_string()),
        }
    }
    Ok(Options { target: target.ok_or(USAGE)?, port, timeout })
}

/// Builds `package` with cargo and returns its binary, or takes `target` as
/// a path when it names a file.
fn build(target: &str) -> Result<PathBuf, String> {
    if Path::new(target).is_file() {
        return Ok(PathBuf::from(target));
    }
    eprintln!("[dev] building {target} ...");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
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
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .last()
        .ok_or_else(|| format!("package {target} has no binary"))
}

/// One handler of the manifest.
struct Declared {
    name: String,
    tag: String,
}

/// Asks the binary what it serves.
fn manifest(binary: &Path) -> Result<Vec<Declared>, String> {
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
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("{} --manifest printed no JSON manifest: {e}", binary.display()))?;
    let mut declared = Vec::new();
    for handler in json["handlers"].as_array().into_iter().flatten() {
        let function = handler["function"].as_str().unwrap_or("handler");
        let name = function.rsplit("::").next().unwrap_or(function).to_string();
        let tag = handler["tag"].as_str().or_else(|| handler["key"].as_str().filter(|k| k.contains("::")));
        match tag {
            Some(tag) => declared.push(Declared { name, tag: tag.to_string() }),
            None => eprintln!("[dev] {function} is bound by name; the dev runtime needs a tag for it, so it is not served"),
        }
    }
    Ok(declared)
}

fn example_curl(route: &router::Route, port: u16) -> String {
    let path: String = route
        .template
        .split('/')
        .map(|s| if s.starts_with('{') { "example" } else { s })
        .collect::<Vec<_>>()
        .join("/");
    let body = match route.method.as_str() {
        "POST" | "PUT" | "PATCH" => " -H 'content-type: application/json' -d '{}'",
        _ => "",
    };
    format!("curl -i -X {} 'http://127.0.0.1:{port}{path}'{body}", route.method)
}

async fn run(options: Options) -> Result<ExitCode, String> {
    let binary = build(&options.target)?;
    let declared = manifest(&binary)?;
    let mut builder = TestRuntime::builder();
    for handler in &declared {
        builder = builder.handler(handler.name.clone(), handler.tag.clone());
    }
    let rt = builder.bind().await.map_err(|e| format!("could not start the runtime side: {e}"))?;
    eprintln!("[dev] runtime socket: {}", rt.socket_path().map(|p| p.display().to_string()).unwrap_or_default());

    let mut child = Command::new(&binary)
        .envs(rt.env())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("could not start {}: {e}", binary.display()))?;

    let handshake = tokio::select! {
        handshake = rt.accept() => handshake.map_err(|e| format!("handshake failed: {e}"))?,
        status = child.wait() => return Err(format!("the handler exited before its handshake ({})", describe(status))),
    };
    if !handshake.is_accepted() {
        let ack = handshake.ack();
        let _ = child.wait().await;
        return Err(format!(
            "the handler was refused: unknown tags {:?}, unhandled tags {:?}",
            ack.unknown_tags, ack.unhandled_tags
        ));
    }
    let conn = Arc::new(handshake.into_connection().ok_or("the handshake gave no connection")?);

    let router = Router::new(declared.iter().map(|d| d.tag.as_str()));
    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .map_err(|e| format!("could not listen on 127.0.0.1:{}: {e}", options.port))?;
    eprintln!("[dev] serving {} handler(s) from {}", declared.len(), binary.display());
    for handler in &declared {
        eprintln!("[dev]   {}", handler.tag);
    }
    eprintln!("[dev] try:");
    for route in router.routes() {
        eprintln!("[dev]   {}", example_curl(route, options.port));
    }
    eprintln!("[dev] Ctrl-C drains the handler and stops.");

    let gateway = Arc::new(Gateway { router, conn: Arc::clone(&conn), timeout: options.timeout });
    let server = tokio::spawn(gateway::serve(listener, gateway));
    let code = tokio::select! {
        status = child.wait() => {
            eprintln!("[dev] the handler exited ({}); not restarting it", describe(status));
            ExitCode::FAILURE
        }
        _ = tokio::signal::ctrl_c() => {
            eprintln!("[dev] draining the handler ...");
            let _ = conn.drain_in(Duration::from_secs(10));
            match tokio::time::timeout(Duration::from_secs(15), child.wait()).await {
                Ok(status) => eprintln!("[dev] the handler exited ({})", describe(status)),
                Err(_) => eprintln!("[dev] the handler did not exit after draining; killing it"),
            }
            ExitCode::SUCCESS
        }
    };
    server.abort();
    Ok(code)
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(error) => error.to_string(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse_args(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("could not start tokio: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("[dev] {message}");
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
        let options = parse_args(&args(&["run", "hello", "--port", "9000", "--timeout-ms", "500"])).unwrap();
        assert_eq!(options.target, "hello");
        assert_eq!(options.port, 9000);
        assert_eq!(options.timeout, Duration::from_millis(500));
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        assert!(parse_args(&args(&["serve", "hello"])).is_err());
        assert!(parse_args(&args(&["run"])).is_err());
        assert!(parse_args(&args(&["run", "hello", "--colour"])).is_err());
        assert!(parse_args(&args(&["run", "hello", "--port", "x"])).is_err());
    }

    #[test]
    fn curl_examples_fill_parameters() {
        let route = router::Route::from_tag("POST::/greetings/{name}").unwrap();
        assert_eq!(
            example_curl(&route, 8080),
            "curl -i -X POST 'http://127.0.0.1:8080/greetings/example' -H 'content-type: application/json' -d '{}'"
        );
    }
}
