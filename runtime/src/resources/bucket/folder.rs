//! A bucket kept in a folder on disk, for a local session with no S3
//! server (`CELERITY_LOCAL_BUCKET_DIR`): each bucket a sub-folder, each
//! object one file.
//!
//! An object's file holds its content, then what is known about it (as
//! JSON), then the JSON's length as 8 bytes, big-endian: one file, so that
//! a write is made whole in a temporary file and renamed into place, and
//! a reader, which holds the file it opened, sees the old object or the
//! new one, never half of one. A file is named by its key, percent-encoded
//! (so that `a` and `a/b` are both objects, as on S3), capital letters
//! too (so that `Readme` and `README` are two files on a disk that does
//! not tell case apart, as macOS's and Windows' do not); a key too long for
//! a file name is named by its hash, `~<hash>`, and read back from its
//! file. Temporary files start with `.`, which no object's name does.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::stream::StreamExt;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::{Deserialize, Serialize};

use super::backend::Fetched;
use super::body::Body;
use super::digest::Digest;
use super::engine::{Store, Written, condition_failed};
use super::{ByteRange, ObjectInfo};
use crate::future::BoxFuture;
use crate::resources::ResourceErrorKind;
use crate::resources::error::Fault;

/// What a file name keeps of a key as it is: small letters, digits, `-`
/// and `_`. A `%` always starts an escape, whose hex digits are capitals,
/// so two names that differ only in case are never both made.
const NAME: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .add(b'A')
    .add(b'B')
    .add(b'C')
    .add(b'D')
    .add(b'E')
    .add(b'F')
    .add(b'G')
    .add(b'H')
    .add(b'I')
    .add(b'J')
    .add(b'K')
    .add(b'L')
    .add(b'M')
    .add(b'N')
    .add(b'O')
    .add(b'P')
    .add(b'Q')
    .add(b'R')
    .add(b'S')
    .add(b'T')
    .add(b'U')
    .add(b'V')
    .add(b'W')
    .add(b'X')
    .add(b'Y')
    .add(b'Z');
/// The longest percent-encoded name kept; longer keys are named by hash.
const LONGEST_NAME: usize = 200;
/// How much of an object one step of a read takes from disk.
const CHUNK: u64 = 256 * 1024;
/// The longest header read: a key, a content type and 2 KiB of metadata
/// fit many times over. A file whose last 8 bytes claim more is not one
/// this SDK wrote, and is refused before its claim is allocated.
const LONGEST_HEADER: u64 = 1024 * 1024;

/// A bucket's folder.
pub(crate) struct Folder {
    root: PathBuf,
}

/// What is known about an object, as its file keeps it.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    key: String,
    size: u64,
    content_type: Option<String>,
    metadata: HashMap<String, String>,
    etag: String,
    last_modified_millis: u64,
}

impl Header {
    fn info(self) -> ObjectInfo {
        let mut info = ObjectInfo::new(self.key, self.size);
        info.content_type = self.content_type;
        info.metadata = self.metadata;
        info.etag = Some(self.etag);
        // A time past what the platform's clock counts is read as unknown.
        info.last_modified = UNIX_EPOCH.checked_add(Duration::from_millis(self.last_modified_millis));
        info
    }
}

impl Folder {
    /// The bucket in the folder `root`, made on the first write.
    pub(crate) fn new(root: PathBuf) -> Self {
        Folder { root }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(file_name(key))
    }
}

/// The name of the file holding `key`.
fn file_name(key: &str) -> String {
    let name = utf8_percent_encode(key, NAME).to_string();
    if name.len() <= LONGEST_NAME {
        return name;
    }
    let mut digest = Digest::new();
    digest.update(key.as_bytes());
    format!("~{}", digest.hex())
}

fn disk(root: &Path, error: io::Error) -> Fault {
    Fault::unreachable(format!("the bucket's folder `{}` could not be used: {error}", root.display()))
}

fn corrupt(path: &Path, why: &str) -> Fault {
    Fault::new(
        ResourceErrorKind::Malformed,
        Some("CorruptObject"),
        format!("the object file `{}` is not one this SDK wrote: {why}", path.display()),
    )
}

/// Runs `work` off the async threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, Fault> + Send + 'static) -> Result<T, Fault> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| Err(Fault::unreachable(format!("the bucket's disk work stopped: {error}"))))
}

/// The file at `path` opened, with its header; `None` where there is no
/// file, or it holds another key (of the same hash).
fn open(root: &Path, path: &Path, key: Option<&str>) -> Result<Option<(File, Header)>, Fault> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(disk(root, error)),
    };
    let length = file.metadata().map_err(|error| disk(root, error))?.len();
    if length < 8 {
        return Err(corrupt(path, "it is too short"));
    }
    let mut trailer = [0; 8];
    file.seek(SeekFrom::Start(length - 8)).and_then(|_| file.read_exact(&mut trailer)).map_err(|e| disk(root, e))?;
    let header_length = u64::from_be_bytes(trailer);
    if header_length > LONGEST_HEADER {
        return Err(corrupt(path, "its header is longer than any this SDK writes"));
    }
    let Some(content_length) = length.checked_sub(8).and_then(|rest| rest.checked_sub(header_length)) else {
        return Err(corrupt(path, "its header is longer than the file"));
    };
    let mut header = vec![0; header_length as usize];
    file.seek(SeekFrom::Start(content_length))
        .and_then(|_| file.read_exact(&mut header))
        .map_err(|error| disk(root, error))?;
    let header: Header = serde_json::from_slice(&header).map_err(|_| corrupt(path, "its header is not JSON"))?;
    if header.size != content_length {
        return Err(corrupt(path, "its header's size is not its content's"));
    }
    if key.is_some_and(|key| key != header.key) {
        return Ok(None);
    }
    Ok(Some((file, header)))
}

/// A temporary file, removed unless it was renamed into place: a write
/// that fails or is dropped leaves nothing behind.
struct Temporary {
    path: Option<PathBuf>,
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

static TEMPORARIES: AtomicU64 = AtomicU64::new(0);

impl Store for Folder {
    fn describe(&self) -> &'static str {
        "a bucket kept in a folder"
    }

    fn read<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Option<Fetched>, Fault>> {
        Box::pin(async move {
            let (root, path, wanted) = (self.root.clone(), self.path(key), key.to_string());
            let opened = blocking(move || open(&root, &path, Some(&wanted))).await?;
            let Some((file, header)) = opened else { return Ok(None) };
            let served = range.map(|range| range.resolve(header.size)).transpose()?.flatten();
            let (start, end) = served.unwrap_or((0, header.size));
            let root = self.root.clone();
            let body =
                futures_util::stream::unfold((Some(file), start, end, root), |(file, at, end, root)| async move {
                    let mut file = file?;
                    if at >= end {
                        return None;
                    }
                    let take = CHUNK.min(end - at);
                    let step = blocking(move || {
                        let mut chunk = vec![0; take as usize];
                        let read = file.seek(SeekFrom::Start(at)).and_then(|_| file.read_exact(&mut chunk));
                        read.map_err(|error| disk(&root, error))?;
                        Ok((file, chunk, root))
                    })
                    .await;
                    match step {
                        Ok((file, chunk, root)) => Some((Ok(Bytes::from(chunk)), (Some(file), at + take, end, root))),
                        Err(fault) => Some((Err(fault), (None, end, end, PathBuf::new()))),
                    }
                });
            Ok(Some(Fetched { info: header.info(), range: served, content_length: end - start, body: body.boxed() }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>> {
        Box::pin(async move {
            let (root, path, wanted) = (self.root.clone(), self.path(key), key.to_string());
            let opened = blocking(move || open(&root, &path, Some(&wanted))).await?;
            Ok(opened.map(|(_, header)| header.info()))
        })
    }

    fn write<'a>(&'a self, key: &'a str, mut body: Body, written: Written) -> BoxFuture<'a, Result<ObjectInfo, Fault>> {
        Box::pin(async move {
            let root = self.root.clone();
            let temporary_path =
                root.join(format!(".tmp-{}-{}", std::process::id(), TEMPORARIES.fetch_add(1, Ordering::Relaxed)));
            let (made_root, made_path) = (root.clone(), temporary_path.clone());
            let mut file = blocking(move || {
                std::fs::create_dir_all(&made_root)
                    .and_then(|_| File::create(&made_path))
                    .map_err(|e| disk(&made_root, e))
            })
            .await?;
            let mut temporary = Temporary { path: Some(temporary_path) };
            let mut digest = Digest::new();
            let mut size = 0u64;
            while let Some(chunk) = body.next_chunk().await {
                let chunk = chunk?;
                digest.update(&chunk);
                size += chunk.len() as u64;
                let root = root.clone();
                file = blocking(move || {
                    file.write_all(&chunk).map_err(|error| disk(&root, error))?;
                    Ok(file)
                })
                .await?;
            }
            let millis = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
            let header = Header {
                key: key.to_string(),
                size,
                content_type: written.content_type,
                metadata: written.metadata,
                etag: digest.etag(),
                last_modified_millis: millis,
            };
            let header_key = key.to_string();
            let encoded = serde_json::to_vec(&header).map_err(|error| {
                Fault::invalid("InvalidMetadata", format!("the header could not be written: {error}"))
            })?;
            let (from, to, if_absent) = (temporary.path.clone().unwrap_or_default(), self.path(key), written.if_absent);
            let placed = blocking(move || {
                let done = file
                    .write_all(&encoded)
                    .and_then(|_| file.write_all(&(encoded.len() as u64).to_be_bytes()))
                    .and_then(|_| file.sync_all());
                done.map_err(|error| disk(&root, error))?;
                if !if_absent {
                    return std::fs::rename(&from, &to).map(|_| true).map_err(|error| disk(&root, error));
                }
                // A link is made only where no file is: the check and the
                // write are one step, as S3's are. The temporary name is
                // removed with the guard.
                match std::fs::hard_link(&from, &to) {
                    Ok(()) => Ok(false),
                    Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(condition_failed(&header_key)),
                    Err(error) => Err(disk(&root, error)),
                }
            })
            .await?;
            if placed {
                temporary.path = None;
            }
            Ok(header.info())
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>> {
        Box::pin(async move {
            let (root, path, wanted) = (self.root.clone(), self.path(key), key.to_string());
            blocking(move || {
                // A file of the same hash holding another key is left alone.
                if open(&root, &path, Some(&wanted))?.is_none() {
                    return Ok(());
                }
                match std::fs::remove_file(&path) {
                    Err(error) if error.kind() != io::ErrorKind::NotFound => Err(disk(&root, error)),
                    _ => Ok(()),
                }
            })
            .await
        })
    }

    fn keys<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<String>, Fault>> {
        Box::pin(async move {
            let (root, prefix) = (self.root.clone(), prefix.to_string());
            blocking(move || {
                let entries = match std::fs::read_dir(&root) {
                    Ok(entries) => entries,
                    Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
                    Err(error) => return Err(disk(&root, error)),
                };
                let mut keys = Vec::new();
                for entry in entries {
                    let name = entry.map_err(|error| disk(&root, error))?.file_name();
                    let Some(name) = name.to_str() else { continue };
                    let key = if name.starts_with('.') {
                        continue;
                    } else if name.starts_with('~') {
                        match open(&root, &root.join(name), None)? {
                            Some((_, header)) => header.key,
                            None => continue,
                        }
                    } else {
                        match percent_decode_str(name).decode_utf8() {
                            Ok(key) => key.into_owned(),
                            Err(_) => continue,
                        }
                    };
                    if key.starts_with(&prefix) {
                        keys.push(key);
                    }
                }
                Ok(keys)
            })
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_one_file_and_a_long_one_its_hash() {
        assert_eq!(file_name("photos/a b.jpg"), "photos%2Fa%20b%2Ejpg");
        assert_ne!(file_name("a"), file_name("a/b"));
        assert!(!file_name(".hidden").starts_with('.'), "no object's file looks temporary");
        let long = "k".repeat(600);
        assert!(file_name(&long).starts_with('~') && file_name(&long).len() == 33);
        assert_eq!(percent_decode_str(&file_name("é/ü")).decode_utf8().unwrap(), "é/ü");
    }

    #[test]
    fn keys_that_differ_in_case_name_files_that_differ_in_case_folded() {
        let folded = |key: &str| file_name(key).to_lowercase();
        assert_ne!(folded("Readme"), folded("README"));
        assert_ne!(folded("a/B"), folded("a/b"));
        assert_ne!(folded("/"), folded("%2f"));
        assert_eq!(percent_decode_str(&file_name("Photos/IMG.JPG")).decode_utf8().unwrap(), "Photos/IMG.JPG");
    }

    #[test]
    fn a_file_claiming_a_huge_header_is_refused_before_it_is_read() {
        let root = std::env::temp_dir().join(format!("celerity-folder-header-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let path = root.join("huge");
        // Within the file's length, so only the bound refuses it.
        let mut content = vec![0_u8; (LONGEST_HEADER + 1) as usize];
        content.extend_from_slice(&(LONGEST_HEADER + 1).to_be_bytes());
        std::fs::write(&path, content).unwrap();
        let fault = open(&root, &path, None).err().unwrap();
        assert_eq!(fault.code.as_deref(), Some("CorruptObject"));
        assert!(fault.message.contains("longer than any"), "{}", fault.message);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_modification_time_past_the_clock_is_unknown() {
        let header = Header {
            key: "k".into(),
            size: 0,
            content_type: None,
            metadata: HashMap::new(),
            etag: "\"e\"".into(),
            last_modified_millis: u64::MAX,
        };
        let _ = header.info();
    }
}
