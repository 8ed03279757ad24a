//! An example binary run as a Lambda function against the test kit's
//! Runtime API: what the Lambda end-to-end tests share.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use celerity_testkit::{DeployedFunction, HandlerProcess, LambdaAnswer, LambdaInvocation, LambdaRuntimeApi};

/// Generous: the tests run on a loaded two-core machine. Nothing waits this
/// long unless something is wrong.
pub const WAIT: Duration = Duration::from_secs(60);

/// The example binary `name`, which `cargo test -p celerity --features
/// aws-lambda` builds beside the tests.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let profile = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let example = profile.join("examples").join(name);
    assert!(
        example.exists(),
        "{} is missing: `cargo test -p celerity --features aws-lambda` builds it (or `cargo build -p celerity \
         --features aws-lambda --example {name}`)",
        example.display()
    );
    example
}

/// `value` as an invocation's payload.
pub fn payload(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON")
}

/// An example running as a function, and the Runtime API it polls.
pub struct Function {
    pub api: LambdaRuntimeApi,
    pub process: HandlerProcess,
}

impl Function {
    /// Starts the example `name` with `variables` (of a deployment's), and
    /// `env` besides, with none of the deployment's variables inherited
    /// from the test's own environment.
    pub async fn start(name: &str, variables: Vec<(String, String)>, env: &[(&str, &str)]) -> Function {
        let api = LambdaRuntimeApi::start().await.expect("start the Lambda Runtime API");
        let mut command = HandlerProcess::command(example(name)).envs(api.env()).env("RUST_LOG", "info");
        for variable in DeployedFunction::unset() {
            command = command.env_remove(variable);
        }
        let process = command.envs(variables).envs(env.iter().copied()).spawn().expect("spawn the example");
        Function { api, process }
    }

    /// Starts the example `name` deployed for `kind` with no
    /// `CELERITY_HANDLER_ID`, so that it serves every handler of that kind.
    pub async fn of_kind(name: &str, kind: &str, env: &[(&str, &str)]) -> Function {
        let mut variables = DeployedFunction::new("", kind).env();
        variables.retain(|(variable, _)| variable != "CELERITY_HANDLER_ID");
        Function::start(name, variables, env).await
    }

    /// The function's answer to `invocation`, failing the test with the
    /// process's output where none comes.
    pub async fn invoke(&self, invocation: impl Into<LambdaInvocation>) -> LambdaAnswer {
        match self.api.invoke(invocation.into().wait(WAIT)).await {
            Some(answer) => answer,
            None => panic!("no answer\n{}", self.process.output_text()),
        }
    }

    /// Waits for `line` in the process's output.
    pub async fn logged(&self, line: &str) {
        assert!(self.process.wait_for_output(line, WAIT).await, "no {line:?} in\n{}", self.process.output_text());
    }

    /// Checks that the Runtime API saw no violation, and stops the process.
    pub async fn finish(mut self) {
        assert_eq!(self.api.violations(), Vec::<String>::new(), "{}", self.process.output_text());
        let _ = self.process.kill().await;
    }
}
