//! `cargo run --release -p celerity-bench --bin bench-bucket-stream -- [--mib N] [--bound-mib M]`
//!
//! What streaming a large object costs in memory: this process stores an
//! object of `--mib` MiB (1024 by default) through a `Bucket` handle's
//! `put_stream`, from a stream it makes a chunk at a time, then reads it
//! back through `get`'s body stream, checking every byte, and prints its own
//! peak resident memory (`VmHWM`) against the peak after a warm-up of the
//! same calls on a 1 MiB object: what the object's size adds. The bound
//! (`--bound-mib`, 64 by default) is what the SDK holds to; the process
//! exits with failure when the object adds more, or when a byte read back
//! differs.
//!
//! The bucket is on the AWS API emulator (moto's server), started as the
//! tests start it; the handle is on the `aws` platform with the emulator as
//! its S3 endpoint, so the object goes up as a multipart upload and comes
//! down as S3's streamed body, as deployed.

use std::process::ExitCode;
use std::time::Instant;

use bytes::Bytes;
use celerity::config::{Configuration, Values};
use celerity::resources::Links;
use celerity::resources::bucket::{Bucket, PutOptions};
use celerity_bench::{emulator, procfs};
use celerity_testkit::servers;
use futures_util::StreamExt;

const BUCKET: &str = "bench-stream";
const MIB: usize = 1 << 20;

/// The byte at `offset` of the object: a pattern that differs from one
/// MiB to the next, so that a part stored twice, or out of order, shows.
fn byte_at(offset: usize) -> u8 {
    (offset as u64).wrapping_mul(2_654_435_761).rotate_right((offset / MIB) as u32 % 64) as u8
}

/// The object's MiB `index`, made when the stream asks for it.
fn chunk(index: usize) -> Bytes {
    Bytes::from((index * MIB..(index + 1) * MIB).map(byte_at).collect::<Vec<u8>>())
}

/// Stores an object of `mib` MiB at `key` and reads it back, checking every
/// byte: the bytes read.
async fn round_trip(bucket: &Bucket, key: &str, mib: usize) -> Result<usize, String> {
    let body = futures_util::stream::iter(0..mib).map(|index| Ok::<_, std::io::Error>(chunk(index)));
    bucket
        .put_stream(key, body, PutOptions::new().content_type("application/octet-stream"))
        .await
        .map_err(|error| error.to_string())?;
    let object = bucket.get(key).await.map_err(|error| error.to_string())?;
    let mut body = object.body;
    let mut read = 0usize;
    while let Some(piece) = body.next().await {
        let piece = piece.map_err(|error| error.to_string())?;
        if let Some(at) = piece.iter().enumerate().position(|(i, byte)| *byte != byte_at(read + i)) {
            return Err(format!("byte {} of {key} differs from what was stored", read + at));
        }
        read += piece.len();
    }
    if read != mib * MIB {
        return Err(format!("{key} read back as {read} bytes, stored as {}", mib * MIB));
    }
    Ok(read)
}

fn peak_kib() -> u64 {
    procfs::memory_kib(std::process::id()).map_or(0, |(_, hwm)| hwm)
}

fn arg(name: &str, default: usize) -> usize {
    std::env::args().skip_while(|arg| arg != name).nth(1).and_then(|n| n.parse().ok()).unwrap_or(default)
}

async fn run(mib: usize, bound_mib: usize) -> Result<bool, String> {
    let moto = servers::moto();
    let links = Links::from_json(br#"{"big": {"type": "bucket", "configKey": "big"}}"#, "the bench's links")
        .map_err(|error| error.to_string())?;
    let endpoint = moto.endpoint();
    let builder = Configuration::builder()
        .links(links)
        .values("resources", Values::from_pairs([("big", BUCKET)]))
        .env("CELERITY_PLATFORM", "aws")
        .env("CELERITY_AWS_S3_ENDPOINT", &endpoint);
    // The emulator's credentials and the bucket's region, as the handle's
    // AWS configuration reads them from the process's environment.
    moto.use_in_this_process();
    let bucket: Bucket = builder.build().resources().handle(None).map_err(|error| error.to_string())?;
    emulator::make_bucket(moto, BUCKET).await?;

    round_trip(&bucket, "warm-up", 1).await?;
    let warm = peak_kib();
    let started = Instant::now();
    let read = round_trip(&bucket, "large", mib).await?;
    let seconds = started.elapsed().as_secs_f64();
    let peak = peak_kib();
    let added = peak.saturating_sub(warm) as f64 / 1024.0;
    println!("object: {mib} MiB up through put_stream and down through get, every byte checked ({read} bytes)");
    println!("time: {seconds:.1} s ({:.0} MiB/s both ways)", 2.0 * mib as f64 / seconds);
    println!("peak RSS after the 1 MiB warm-up: {:.1} MiB", warm as f64 / 1024.0);
    println!("peak RSS after the {mib} MiB object: {:.1} MiB", peak as f64 / 1024.0);
    println!(
        "added by the object: {added:.1} MiB (bound {bound_mib} MiB): {}",
        if added < bound_mib as f64 { "yes" } else { "NO" }
    );
    Ok(added < bound_mib as f64)
}

fn main() -> ExitCode {
    let mib = arg("--mib", 1024).max(1);
    let bound_mib = arg("--bound-mib", 64);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bench-bucket-stream: could not start tokio: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(mib, bound_mib)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("bench-bucket-stream: {error}");
            ExitCode::FAILURE
        }
    }
}
