//! Buckets, with one suite of assertions run against S3's API (moto's
//! server, an emulator, on loopback), against the folder-on-disk bucket of
//! a local session, and against the in-memory stand-in, so that none of
//! them drifts from the others; then what only one of them shows: signed
//! URLs fetched over HTTP, a server that cuts a read short, an aborted
//! multipart upload, a server out of reach.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use aws_smithy_http_client::tls;
use bytes::Bytes;
use celerity::config::{Configuration, Values};
use celerity::resources::bucket::{Bucket, ByteRange, CopyOptions, Cursor, ListOptions, PART_SIZE, PutOptions};
use celerity::resources::{Links, ResourceErrorKind};
use celerity::testing::TestBucket;
use celerity_testkit::servers;
use futures_util::{StreamExt, TryStreamExt};

const LINKS: &[u8] = br#"{"uploads": {"type": "bucket", "configKey": "uploadsBucket"},
                          "archive": {"type": "bucket", "configKey": "archiveBucket"}}"#;

/// The two buckets of a behaviour: `uploads`, and `archive` to copy to.
struct Buckets {
    uploads: Bucket,
    archive: Bucket,
    /// Whether they are on moto's S3, which signs URLs (and has quirks of
    /// its own).
    on_moto: bool,
}

fn configured(test: &str, env: &[(&str, &str)]) -> Buckets {
    let links = Links::from_json(LINKS, "the test's links").unwrap();
    let (uploads, archive) = (format!("{test}-uploads"), format!("{test}-archive"));
    let mut builder = Configuration::builder().links(links).values(
        "resources",
        Values::from_pairs([("uploadsBucket", uploads.as_str()), ("archiveBucket", archive.as_str())]),
    );
    for (name, value) in env {
        builder = builder.env(name, value);
    }
    let config = builder.build();
    let resources = config.resources();
    Buckets {
        uploads: resources.handle::<Bucket>(Some("uploads")).unwrap(),
        archive: resources.handle::<Bucket>(Some("archive")).unwrap(),
        on_moto: false,
    }
}

/// The emulator, with this process's AWS SDK pointed at it.
async fn sdk() -> aws_sdk_s3::Client {
    servers::moto().use_in_this_process();
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring))
        .build_https();
    let shared = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http).load().await;
    let config = aws_sdk_s3::config::Builder::from(&shared).force_path_style(true).build();
    aws_sdk_s3::Client::from_conf(config)
}

async fn create_bucket(s3: &aws_sdk_s3::Client, name: &str) {
    let location = aws_sdk_s3::types::CreateBucketConfiguration::builder()
        .location_constraint(aws_sdk_s3::types::BucketLocationConstraint::EuWest2)
        .build();
    s3.create_bucket().bucket(name).create_bucket_configuration(location).send().await.unwrap();
}

/// The buckets on moto's S3, created there first, as a deployment would
/// have.
async fn on_moto(test: &str) -> Buckets {
    let test = format!("m-{}", test.replace('_', "-"));
    let s3 = sdk().await;
    create_bucket(&s3, &format!("{test}-uploads")).await;
    create_bucket(&s3, &format!("{test}-archive")).await;
    Buckets { on_moto: true, ..configured(&test, &[("CELERITY_PLATFORM", "aws")]) }
}

/// A folder of a test's own, removed when it is dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a folder for the test's buckets")
}

/// The buckets as a local session with no S3 server keeps them: folders,
/// in `folder`.
fn in_folder(test: &str, folder: &Path) -> Buckets {
    configured(test, &[("CELERITY_PLATFORM", "local"), ("CELERITY_LOCAL_BUCKET_DIR", folder.to_str().unwrap())])
}

fn in_memory() -> Buckets {
    Buckets {
        uploads: TestBucket::new("uploads").bucket(),
        archive: TestBucket::new("archive").bucket(),
        on_moto: false,
    }
}

/// Runs a behaviour against moto's S3, the folder bucket and the stand-in.
macro_rules! on_all {
    ($($behaviour:ident),* $(,)?) => {
        $(
            mod $behaviour {
                #[tokio::test]
                async fn on_moto() {
                    super::$behaviour(super::on_moto(stringify!($behaviour)).await).await;
                }

                #[tokio::test]
                async fn in_folder() {
                    let folder = super::scratch();
                    super::$behaviour(super::in_folder(stringify!($behaviour), folder.path())).await;
                }

                #[tokio::test]
                async fn in_memory() {
                    super::$behaviour(super::in_memory()).await;
                }
            }
        )*
    };
}

on_all!(
    writes_reads_and_info,
    ranges,
    a_large_streamed_object_goes_in_parts,
    a_failing_stream_stores_nothing,
    listing,
    deleting_many,
    copies,
    keys_and_metadata_are_checked_before_sending,
    signed_url_expiries,
);

async fn writes_reads_and_info(buckets: Buckets) {
    let bucket = buckets.uploads;
    assert!(!bucket.exists("notes/a.txt").await.unwrap());
    assert_eq!(bucket.info("notes/a.txt").await.unwrap(), None);
    let options = PutOptions::new().content_type("text/plain").metadata("Source", "api");
    let put = bucket.put_with("notes/a.txt", "hello, world", options).await.unwrap();
    assert!(put.etag.is_some());

    let object = bucket.get("notes/a.txt").await.unwrap();
    assert_eq!(object.info.key, "notes/a.txt");
    assert_eq!(object.info.size, 12);
    assert_eq!(object.content_length, 12);
    assert_eq!(object.range, None);
    assert_eq!(object.info.content_type.as_deref(), Some("text/plain"));
    assert_eq!(object.info.metadata.get("source").map(String::as_str), Some("api"));
    assert_eq!(object.info.etag, put.etag);
    assert!(object.info.last_modified.is_some());
    assert_eq!(object.bytes().await.unwrap(), "hello, world");

    let info = bucket.info("notes/a.txt").await.unwrap().expect("the object is there");
    assert_eq!((info.size, info.content_type.as_deref(), info.etag.clone()), (12, Some("text/plain"), put.etag));
    assert_eq!(info.metadata.get("source").map(String::as_str), Some("api"));
    assert!(bucket.exists("notes/a.txt").await.unwrap());

    bucket.put("notes/a.txt", Bytes::from_static(b"replaced")).await.unwrap();
    assert_eq!(bucket.read("notes/a.txt").await.unwrap(), "replaced");
    bucket.put("empty", Bytes::new()).await.unwrap();
    assert_eq!(bucket.read("empty").await.unwrap(), "", "an empty object is an object");

    bucket.put_with("once", "first", PutOptions::new().if_absent()).await.unwrap();
    let error = bucket.put_with("once", "second", PutOptions::new().if_absent()).await.unwrap_err();
    assert_eq!(
        (error.kind(), error.code()),
        (ResourceErrorKind::ConditionFailed, Some("PreconditionFailed")),
        "{error}"
    );
    assert_eq!(error.key(), Some("once"));
    assert_eq!(bucket.read("once").await.unwrap(), "first", "nothing was written");
    bucket.put("once", "replaced").await.unwrap();
    assert_eq!(bucket.read("once").await.unwrap(), "replaced", "a plain write replaces");

    let error = bucket.get("missing").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::NotFound, "{error}");
    assert_eq!(error.key(), Some("missing"));
    assert!(error.to_string().starts_with("reading from the bucket `uploads` at key `missing`: "), "{error}");

    bucket.delete("notes/a.txt").await.unwrap();
    bucket.delete("notes/a.txt").await.unwrap();
    assert!(!bucket.exists("notes/a.txt").await.unwrap());
}

async fn ranges(buckets: Buckets) {
    let bucket = buckets.uploads;
    bucket.put("digits", "0123456789").await.unwrap();
    let part = bucket.get_range("digits", ByteRange::between(2, 5)).await.unwrap();
    assert_eq!((part.info.size, part.content_length, part.range), (10, 4, Some((2, 6))));
    assert_eq!(part.bytes().await.unwrap(), "2345");
    let read = |range| {
        let bucket = bucket.clone();
        async move { bucket.get_range("digits", range).await.unwrap().bytes().await.unwrap() }
    };
    assert_eq!(read(ByteRange::starting_at(7)).await, "789");
    assert_eq!(read(ByteRange::last(3)).await, "789");
    assert_eq!(read(ByteRange::between(8, 50)).await, "89", "a range past the end is cut to it");
    assert_eq!(read(ByteRange::last(50)).await, "0123456789");

    for outside in [ByteRange::between(10, 12), ByteRange::starting_at(11)] {
        let error = bucket.get_range("digits", outside).await.unwrap_err();
        assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Refused, Some("InvalidRange")), "{error}");
        assert_eq!(error.key(), Some("digits"));
    }
    let error = bucket.get_range("digits", ByteRange::between(5, 4)).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("MalformedRange")));
    let error = bucket.get_range("missing", ByteRange::between(0, 1)).await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::NotFound);
}

const LARGE: usize = 20 * 1024 * 1024 + 12_345;

/// The byte at `at` of the large object: not a repeating pattern a part
/// boundary could hide a mistake in.
fn large_byte(at: usize) -> u8 {
    (at.wrapping_mul(2_654_435_761) >> 13) as u8 ^ (at / 4099) as u8
}

/// The large object as a stream of uneven chunks, made as it is read.
fn large_stream() -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    const CHUNK: usize = 1_000_003;
    futures_util::stream::iter((0..LARGE).step_by(CHUNK)).map(|start| {
        let end = (start + CHUNK).min(LARGE);
        Ok(Bytes::from((start..end).map(large_byte).collect::<Vec<u8>>()))
    })
}

async fn a_large_streamed_object_goes_in_parts(buckets: Buckets) {
    const { assert!(LARGE > 2 * PART_SIZE, "more than two parts") };
    let bucket = buckets.uploads;
    let put =
        bucket.put_stream("large.bin", large_stream(), PutOptions::new().content_type("application/x-test")).await;
    assert!(put.unwrap().etag.is_some());

    let mut object = bucket.get("large.bin").await.unwrap();
    assert_eq!((object.info.size, object.content_length), (LARGE as u64, LARGE as u64));
    assert_eq!(object.info.content_type.as_deref(), Some("application/x-test"));
    let mut at = 0;
    while let Some(chunk) = object.body.chunk().await {
        let chunk = chunk.unwrap();
        for (offset, byte) in chunk.iter().enumerate() {
            assert_eq!(*byte, large_byte(at + offset), "byte {}", at + offset);
        }
        at += chunk.len();
    }
    assert_eq!(at, LARGE);

    let middle = PART_SIZE as u64 - 5;
    let part = bucket.get_range("large.bin", ByteRange::between(middle, middle + 9)).await.unwrap();
    let expected: Vec<u8> = (middle as usize..middle as usize + 10).map(large_byte).collect();
    assert_eq!(part.bytes().await.unwrap(), expected, "a range across a part boundary");
}

async fn a_failing_stream_stores_nothing(buckets: Buckets) {
    let bucket = buckets.uploads;
    // Past the first part, so that S3 has a multipart upload to abort.
    let chunks = large_stream().take(10).chain(futures_util::stream::iter([Err(std::io::Error::other("disk gone"))]));
    let error = bucket.put_stream("broken.bin", chunks, PutOptions::new()).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("BodyStreamFailed")), "{error}");
    assert!(error.message().contains("disk gone"), "{error}");
    assert_eq!(error.key(), Some("broken.bin"));
    assert!(!bucket.exists("broken.bin").await.unwrap(), "nothing was stored");
}

async fn listing(buckets: Buckets) {
    let bucket = buckets.uploads;
    for key in ["list/d", "list/b", "list/c/2", "list/a", "list/c/1", "other/x", "list"] {
        bucket.put(key, key.to_string()).await.unwrap();
    }
    let keys =
        |page: &celerity::resources::bucket::Page| page.objects.iter().map(|o| o.key.clone()).collect::<Vec<_>>();

    let first = bucket.list("list/", ListOptions::new().limit(2)).await.unwrap();
    assert_eq!(keys(&first), ["list/a", "list/b"]);
    assert_eq!(first.objects[0].size, 6);
    assert!(first.objects[0].etag.is_some() && first.objects[0].last_modified.is_some());
    let cursor = first.cursor.clone().expect("more to come");
    // A cursor travels as text, through a caller and back.
    let cursor = Cursor::from_text(cursor.as_str());
    let second = bucket.list("list/", ListOptions::new().limit(2).after(cursor)).await.unwrap();
    assert_eq!(keys(&second), ["list/c/1", "list/c/2"]);
    let third = bucket.list("list/", ListOptions::new().limit(2).after(second.cursor.unwrap())).await.unwrap();
    assert_eq!(keys(&third), ["list/d"]);
    assert_eq!(third.cursor, None, "the end");

    let all = bucket.list("", ListOptions::new()).await.unwrap();
    assert_eq!(keys(&all), ["list", "list/a", "list/b", "list/c/1", "list/c/2", "list/d", "other/x"]);
    assert_eq!(all.cursor, None);
    let none = bucket.list("nothing/", ListOptions::new()).await.unwrap();
    assert!(none.objects.is_empty() && none.cursor.is_none());

    let streamed: Vec<String> = bucket.objects("list/").map_ok(|object| object.key).try_collect().await.unwrap();
    assert_eq!(streamed, ["list/a", "list/b", "list/c/1", "list/c/2", "list/d"]);
}

async fn deleting_many(buckets: Buckets) {
    let bucket = buckets.uploads;
    bucket.put("a", "1").await.unwrap();
    bucket.put("b", "2").await.unwrap();
    let long = "k".repeat(1025);
    let result = bucket.delete_many(["a", "b", "missing", long.as_str(), "a"]).await.unwrap();
    let mut deleted = result.deleted.clone();
    deleted.sort();
    assert_eq!(
        deleted,
        ["a", "a", "b", "missing"],
        "a key that held nothing counts as deleted, a key named twice twice"
    );
    assert_eq!(result.failed.len(), 1);
    assert_eq!((result.failed[0].key.as_str(), result.failed[0].code.as_str()), (long.as_str(), "KeyTooLongError"));
    assert!(result.unsent.is_empty());
    assert!(!bucket.exists("a").await.unwrap() && !bucket.exists("b").await.unwrap());
    let empty = bucket.delete_many(Vec::<String>::new()).await.unwrap();
    assert!(empty.deleted.is_empty() && empty.failed.is_empty());
}

async fn copies(buckets: Buckets) {
    let (uploads, archive) = (buckets.uploads, buckets.archive);
    let options = PutOptions::new().content_type("text/csv").metadata("owner", "u-7");
    uploads.put_with("report.csv", "a,b\n1,2\n", options).await.unwrap();

    let copy = uploads.copy("report.csv", "copies/report.csv", CopyOptions::new()).await.unwrap();
    assert!(copy.etag.is_some());
    let info = uploads.info("copies/report.csv").await.unwrap().unwrap();
    assert_eq!(info.content_type.as_deref(), Some("text/csv"), "the source's content type");
    assert_eq!(info.metadata.get("owner").map(String::as_str), Some("u-7"), "and metadata");
    assert_eq!(uploads.read("copies/report.csv").await.unwrap(), "a,b\n1,2\n");

    let replacing = CopyOptions::replacing(PutOptions::new().content_type("text/plain"));
    uploads.copy("report.csv", "copies/plain.txt", replacing).await.unwrap();
    let info = uploads.info("copies/plain.txt").await.unwrap().unwrap();
    assert_eq!(info.content_type.as_deref(), Some("text/plain"));
    assert!(info.metadata.is_empty(), "replaced together with the content type");

    uploads.copy_to("report.csv", &archive, "2026/report.csv", CopyOptions::new()).await.unwrap();
    assert_eq!(archive.read("2026/report.csv").await.unwrap(), "a,b\n1,2\n");
    assert!(!uploads.exists("2026/report.csv").await.unwrap());

    // A key S3 would read as a query or a fragment, were it not escaped.
    uploads.put("odd/name ?#é.csv", "odd").await.unwrap();
    uploads.copy("odd/name ?#é.csv", "odd/copy.csv", CopyOptions::new()).await.unwrap();
    assert_eq!(uploads.read("odd/copy.csv").await.unwrap(), "odd");

    let error = uploads.copy("missing", "anywhere", CopyOptions::new()).await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::NotFound, "{error}");
    assert_eq!(error.key(), Some("missing"));
}

async fn keys_and_metadata_are_checked_before_sending(buckets: Buckets) {
    let bucket = buckets.uploads;
    let long = "é".repeat(513);
    let error = bucket.put(&long, "x").await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("KeyTooLongError")));
    assert_eq!(error.key(), Some(long.as_str()));
    let error = bucket.get(&long).await.unwrap_err();
    assert_eq!(error.code(), Some("KeyTooLongError"));
    bucket.put(&"é".repeat(512), "x").await.expect("1024 bytes of UTF-8 is a key");
    assert_eq!(bucket.read(&"é".repeat(512)).await.unwrap(), "x");

    let error = bucket.put("", "x").await.unwrap_err();
    assert_eq!(error.code(), Some("InvalidKey"));
    let big = PutOptions::new().metadata("note", "n".repeat(2048));
    let error = bucket.put_with("k", "x", big).await.unwrap_err();
    assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("MetadataTooLarge")));
    assert!(!bucket.exists("k").await.unwrap());
}

async fn signed_url_expiries(buckets: Buckets) {
    let bucket = buckets.uploads;
    for expiry in [Duration::ZERO, Duration::from_secs(7 * 24 * 3600 + 1)] {
        let error = bucket.read_url("a", expiry).await.unwrap_err();
        assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("InvalidExpiry")), "{error}");
        let error = bucket.write_url("a", expiry, None).await.unwrap_err();
        assert_eq!(error.code(), Some("InvalidExpiry"));
    }
    let signed = bucket.read_url("a", Duration::from_secs(600)).await;
    if buckets.on_moto {
        let signed = signed.unwrap();
        assert!(signed.url.contains("X-Amz-Signature="), "{}", signed.url);
        assert!(signed.expires_at > std::time::SystemTime::now() + Duration::from_secs(590));
    } else {
        let error = signed.unwrap_err();
        assert_eq!(error.kind(), ResourceErrorKind::Unsupported, "{error}");
        assert!(error.message().contains("S3-compatible server"), "{error}");
    }
}

/// An HTTP/1.1 request to `url` (`http://host:port/path?query`), answered
/// with the status and body.
fn http(method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, Vec<u8>) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut request = format!("{method} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let split = answer.windows(4).position(|window| window == b"\r\n\r\n").expect("an HTTP answer");
    let head = String::from_utf8_lossy(&answer[..split]).to_string();
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, answer[split + 4..].to_vec())
}

#[tokio::test]
async fn signed_urls_read_and_write_over_http() {
    let bucket = on_moto("signed").await.uploads;
    bucket.put_with("shared.txt", "for your eyes", PutOptions::new().content_type("text/plain")).await.unwrap();
    let read = bucket.read_url("shared.txt", Duration::from_secs(300)).await.unwrap();
    let (status, body) = tokio::task::spawn_blocking(move || http("GET", &read.url, &[], b"")).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(body, b"for your eyes");

    let write = bucket.write_url("uploaded.txt", Duration::from_secs(300), Some("text/plain")).await.unwrap();
    let (status, _) = tokio::task::spawn_blocking(move || {
        http("PUT", &write.url, &[("Content-Type", "text/plain")], b"sent by a browser")
    })
    .await
    .unwrap();
    assert_eq!(status, 200);
    assert_eq!(bucket.read("uploaded.txt").await.unwrap(), "sent by a browser");
    let info = bucket.info("uploaded.txt").await.unwrap().unwrap();
    assert_eq!(info.content_type.as_deref(), Some("text/plain"));
}

#[tokio::test]
async fn a_failed_multipart_upload_is_aborted() {
    let s3 = sdk().await;
    let buckets = on_moto("aborted").await;
    let chunks = large_stream().take(10).chain(futures_util::stream::iter([Err(std::io::Error::other("cut"))]));
    buckets.uploads.put_stream("broken.bin", chunks, PutOptions::new()).await.unwrap_err();
    let uploads = s3.list_multipart_uploads().bucket("m-aborted-uploads").send().await.unwrap();
    assert!(uploads.uploads().is_empty(), "no upload is left open: {:?}", uploads.uploads());
}

#[tokio::test]
async fn a_local_session_reaches_its_s3_server_with_the_bucket_keys() {
    let s3 = sdk().await;
    create_bucket(&s3, "l-session-uploads").await;
    let endpoint = servers::moto().endpoint();
    let buckets = configured(
        "l-session",
        &[
            ("CELERITY_PLATFORM", "local"),
            ("CELERITY_AWS_S3_ENDPOINT", endpoint.as_str()),
            ("CELERITY_LOCAL_BUCKET_ACCESS_KEY", "session-key"),
            ("CELERITY_LOCAL_BUCKET_SECRET_KEY", "session-secret"),
        ],
    );
    buckets.uploads.put("hello.txt", "from a session").await.unwrap();
    let stored = s3.get_object().bucket("l-session-uploads").key("hello.txt").send().await.unwrap();
    assert_eq!(stored.body.collect().await.unwrap().into_bytes(), "from a session");
}

#[tokio::test]
async fn a_server_out_of_reach_is_unreachable() {
    sdk().await;
    let nowhere = format!("http://127.0.0.1:{}", servers::free_port());
    let buckets =
        configured("nowhere", &[("CELERITY_PLATFORM", "aws"), ("CELERITY_AWS_S3_ENDPOINT", nowhere.as_str())]);
    let error = buckets.uploads.put("a", "b").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    assert!(error.message().contains(&nowhere), "names the server: {error}");

    let memory = TestBucket::new("uploads");
    memory.set_unreachable(true);
    let error = memory.bucket().read("a").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable);
    memory.set_unreachable(false);
    assert_eq!(memory.bucket().read("a").await.unwrap_err().kind(), ResourceErrorKind::NotFound);
}

/// A read the server cuts off after announcing more ends its stream with
/// an error, never with a shorter object.
#[tokio::test]
async fn a_read_cut_off_mid_object_ends_with_an_error() {
    sdk().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0; 8192];
            let _ = socket.read(&mut request).await;
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\nETag: \"e\"\r\n\r\n";
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&[b'x'; 10]).await;
            let _ = socket.shutdown().await;
        }
    });
    let endpoint = format!("http://{address}");
    let buckets = configured("cut", &[("CELERITY_PLATFORM", "local"), ("CELERITY_AWS_S3_ENDPOINT", endpoint.as_str())]);
    let object = buckets.uploads.get("partial.txt").await.unwrap();
    assert_eq!(object.content_length, 100);
    let error = object.bytes().await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    assert_eq!(error.key(), Some("partial.txt"));
}

/// The folder bucket keeps one file per object, inside the bucket's
/// folder whatever the key (`..`, a leading `/`), and leaves no temporary
/// file behind a failed write.
#[tokio::test]
async fn the_folder_keeps_one_file_per_object_and_no_leftovers() {
    let scratch = scratch();
    let root = scratch.path().join("session");
    let env = [("CELERITY_PLATFORM", "local"), ("CELERITY_LOCAL_BUCKET_DIR", root.to_str().unwrap())];
    let buckets = configured("files", &env);
    buckets.uploads.put("a", "1").await.unwrap();
    buckets.uploads.put("a/b", "2").await.unwrap();
    buckets.uploads.put(&"long/".repeat(100), "3").await.unwrap();
    buckets.uploads.put("../../escape", "4").await.unwrap();
    buckets.uploads.put("/absolute", "5").await.unwrap();
    let chunks = futures_util::stream::iter([Ok(Bytes::from_static(b"x")), Err(std::io::Error::other("cut"))]);
    buckets.uploads.put_stream("broken", chunks, PutOptions::new()).await.unwrap_err();
    let mut names: Vec<String> = std::fs::read_dir(root.join("files-uploads"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.iter().all(|name| !name.starts_with('.')), "no temporary file is left: {names:?}");
    // Nothing was written beside the bucket's folder, or above the session's.
    let beside: Vec<_> = std::fs::read_dir(&root).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(beside, ["files-uploads"], "only the bucket's folder is in the session's");
    let above: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(above, ["session"], "nothing escaped the session's folder");
    let all = buckets.uploads.list("", ListOptions::new()).await.unwrap();
    let keys: Vec<&str> = all.objects.iter().map(|object| object.key.as_str()).collect();
    assert_eq!(keys, ["../../escape", "/absolute", "a", "a/b", "long/".repeat(100).as_str()]);
    // A second handle on the same folder reads what the first wrote.
    let again = configured("files", &env);
    assert_eq!(again.uploads.read("a/b").await.unwrap(), "2");
    assert_eq!(again.uploads.read("../../escape").await.unwrap(), "4");
}

#[tokio::test]
async fn an_unknown_cursor_is_refused_by_the_buckets_that_make_their_own() {
    let folder = scratch();
    for buckets in [in_memory(), in_folder("cursor", folder.path())] {
        buckets.uploads.put("a", "1").await.unwrap();
        let options = ListOptions::new().after(Cursor::from_text("not-a-cursor"));
        let error = buckets.uploads.list("", options).await.unwrap_err();
        assert_eq!((error.kind(), error.code()), (ResourceErrorKind::Invalid, Some("InvalidCursor")), "{error}");
    }
}

#[tokio::test]
async fn a_platform_without_buckets_is_unsupported() {
    let buckets = configured("gcp", &[("CELERITY_PLATFORM", "gcp")]);
    let error = buckets.uploads.read("a").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unsupported, "{error}");
    assert!(error.message().contains("`gcp`"), "{error}");
}

/// A server that refuses the request is a refusal with its code, naming
/// the bucket, the operation and the key.
#[tokio::test]
async fn a_refusal_carries_the_services_code() {
    sdk().await;
    let refusing = servers::moto_refusing_credentials().endpoint();
    let buckets =
        configured("refused", &[("CELERITY_PLATFORM", "aws"), ("CELERITY_AWS_S3_ENDPOINT", refusing.as_str())]);
    let error = buckets.uploads.put("a.txt", "b").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Refused, "{error}");
    assert!(matches!(error.code(), Some("AccessDenied" | "InvalidAccessKeyId")), "{error}");
    assert!(error.to_string().starts_with("writing to the bucket `uploads` at key `a.txt`: "), "{error}");
}

async fn count(uploads: Bucket) -> celerity::Result<String> {
    let page = uploads.list("", ListOptions::new()).await?;
    Ok(page.objects.len().to_string())
}

/// A handler taking the default bucket is served the application's one
/// bucket, and an application with none does not start.
#[tokio::test]
async fn a_handler_takes_the_one_bucket_and_an_application_without_one_does_not_start() {
    let uploads = TestBucket::new("uploads");
    uploads.bucket().put("a", "1").await.unwrap();
    let config = Configuration::builder().resource("uploads", uploads.bucket()).build();
    let app = celerity::App::new().without_compiled_handlers().with_configuration(config).http("GET::/count", count);
    let response = app.into_test().call("GET::/count", celerity::testing::TestRequest::get("/count")).await;
    assert_eq!(response.expect_http().text(), "1");

    let links = Links::from_json(br#"{"orders": {"type": "queue", "configKey": "q"}}"#, "the test's links").unwrap();
    let app = celerity::App::new()
        .without_compiled_handlers()
        .with_configuration(Configuration::builder().links(links).build())
        .http("GET::/count", count);
    let error = app.run().await.unwrap_err();
    assert_eq!(error.type_name(), "ResourceError");
    assert!(error.message().contains("bucket"), "{}", error.message());
}

/// A local session with neither an S3 server nor a folder reaches MinIO
/// at its default address.
#[tokio::test]
async fn a_local_session_with_nothing_set_reaches_for_minio_at_its_default_address() {
    if TcpStream::connect("127.0.0.1:9000").is_ok() {
        // Something listens there on this machine; what it answers is its own.
        return;
    }
    sdk().await;
    let buckets = configured("defaults", &[("CELERITY_PLATFORM", "local")]);
    let error = buckets.uploads.read("a").await.unwrap_err();
    assert_eq!(error.kind(), ResourceErrorKind::Unreachable, "{error}");
    assert!(error.message().contains("http://localhost:9000"), "{error}");
}
