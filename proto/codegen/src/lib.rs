//! Code generator for `celerity-proto`.
//!
//! Compiles `proto/runtime.proto` with [`protox`] (pure Rust, no `protoc`) and
//! runs [`tonic_prost_build`] on the resulting descriptors, producing the Rust
//! sources that are checked in under `proto/src/generated/`:
//!
//! - `celerity.runtime.v1.rs`: every message and enum, plus the gRPC client;
//! - `server.rs`: only the gRPC server module, referring to the messages in
//!   `crate::v1` (compiled into `celerity-proto` behind its `server` feature).
//!
//! Run `cargo run -p celerity-proto-codegen` to rewrite the checked-in files.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub mod compare;

/// The proto package the contract lives in.
pub const PACKAGE: &str = "celerity.runtime.v1";

/// Name of the generated file holding the messages and the client.
pub const CLIENT_FILE: &str = "celerity.runtime.v1.rs";

/// Name of the generated file holding only the server module.
pub const SERVER_FILE: &str = "server.rs";

/// The `proto/` directory of the `celerity-proto` crate.
pub fn proto_crate_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Path of our `runtime.proto`.
pub fn proto_file() -> PathBuf {
    proto_crate_dir().join("runtime.proto")
}

/// Directory the generated Rust files are checked in to.
pub fn generated_dir() -> PathBuf {
    proto_crate_dir().join("src").join("generated")
}

/// Compiles the `.proto` file `file_name` found in `include_dir` with protox.
///
/// Source info (comments) is kept only if `with_source_info` is set.
pub fn compile_descriptors(
    include_dir: &Path,
    file_name: &str,
    with_source_info: bool,
) -> io::Result<prost_types::FileDescriptorSet> {
    let mut compiler = protox::Compiler::new([include_dir]).map_err(io::Error::other)?;
    compiler.include_source_info(with_source_info);
    compiler.include_imports(false);
    compiler.open_file(file_name).map_err(io::Error::other)?;
    Ok(compiler.file_descriptor_set())
}

/// Generates the Rust sources for `proto/runtime.proto`.
///
/// Returns `(file name, contents)` pairs, in a fixed order, for the files that
/// belong in `proto/src/generated/`. Nothing in the repository is written.
pub fn generate() -> io::Result<Vec<(String, String)>> {
    let fds = compile_descriptors(&proto_crate_dir(), "runtime.proto", true)?;
    let generated_name = format!("{PACKAGE}.rs");

    // Messages and the client.
    let client_dir = tempfile::tempdir()?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .build_transport(true)
        .bytes(".")
        .emit_rerun_if_changed(false)
        .out_dir(client_dir.path())
        .compile_fds(fds.clone())?;
    let client = fs::read_to_string(client_dir.path().join(&generated_name))?;

    // Only the server, with the messages taken from `crate::v1`.
    let server_dir = tempfile::tempdir()?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .build_transport(true)
        .bytes(".")
        .extern_path(format!(".{PACKAGE}"), "crate::v1")
        .emit_rerun_if_changed(false)
        .out_dir(server_dir.path())
        .compile_fds(fds)?;
    let server = fs::read_to_string(server_dir.path().join(&generated_name))?;

    Ok(vec![(CLIENT_FILE.to_owned(), client), (SERVER_FILE.to_owned(), server)])
}

/// Generates the sources and writes them into [`generated_dir`].
///
/// Returns the paths written.
pub fn write_generated() -> io::Result<Vec<PathBuf>> {
    let dir = generated_dir();
    fs::create_dir_all(&dir)?;
    let mut written = Vec::new();
    for (name, contents) in generate()? {
        let path = dir.join(name);
        fs::write(&path, contents)?;
        written.push(path);
    }
    Ok(written)
}
