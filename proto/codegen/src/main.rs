//! Rewrites `proto/src/generated/` from `proto/runtime.proto`.

use std::process::ExitCode;

fn main() -> ExitCode {
    match celerity_proto_codegen::write_generated() {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("celerity-proto-codegen: {err}");
            ExitCode::FAILURE
        }
    }
}
