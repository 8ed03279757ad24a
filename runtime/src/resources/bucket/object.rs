//! What a bucket knows about an object, and what a write or a copy gives
//! it.

use std::collections::HashMap;
use std::time::SystemTime;

use crate::resources::error::Fault;

/// The most bytes of user metadata S3 takes with an object: every key and
/// value, counted in bytes of UTF-8.
pub const MAX_METADATA_BYTES: usize = 2048;

/// What a bucket knows about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectInfo {
    /// The object's key.
    pub key: String,
    /// The whole object's size in bytes, also where a range of it was read.
    pub size: u64,
    /// The content type it was stored with. `None` in a listing, which
    /// does not carry each object's headers: ask [`Bucket::info`](super::Bucket::info).
    pub content_type: Option<String>,
    /// The entity tag identifying its content, quoted as S3 gives it. Its
    /// form is the backend's own: compare tags of one bucket, never across
    /// backends. S3's is the MD5 of a single write and a digest of the
    /// parts' of a multipart one; the folder and in-memory buckets give the
    /// 128-bit FNV-1a hash of the content, in hexadecimal.
    pub etag: Option<String>,
    /// When it was last written.
    pub last_modified: Option<SystemTime>,
    /// The user metadata it was stored with, keys in lower case as S3 keeps
    /// them. Empty in a listing.
    pub metadata: HashMap<String, String>,
    /// The version this describes, where the bucket keeps versions. `None`
    /// in a listing, and on the folder and in-memory buckets.
    pub version: Option<String>,
}

impl ObjectInfo {
    pub(crate) fn new(key: impl Into<String>, size: u64) -> Self {
        ObjectInfo {
            key: key.into(),
            size,
            content_type: None,
            etag: None,
            last_modified: None,
            metadata: HashMap::new(),
            version: None,
        }
    }
}

/// How an object is written: its content type and user metadata, and
/// whether only to make a new object.
///
/// ```
/// use celerity::resources::bucket::PutOptions;
///
/// let options = PutOptions::new().content_type("image/png").metadata("uploaded-by", "u-7").if_absent();
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PutOptions {
    pub(crate) content_type: Option<String>,
    pub(crate) metadata: HashMap<String, String>,
    pub(crate) if_absent: bool,
}

impl PutOptions {
    /// No content type (S3 records `binary/octet-stream`; the folder and
    /// in-memory buckets record none) and no metadata.
    pub fn new() -> Self {
        PutOptions::default()
    }

    /// The object's content type.
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = Some(content_type.into());
        self
    }

    /// A user metadata entry. Keys are kept in lower case, as S3 keeps
    /// them; keys and values together take at most
    /// [`MAX_METADATA_BYTES`], keys are letters, digits, `-`, `_` and `.`,
    /// and values are printable ASCII.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into().to_ascii_lowercase(), value.into());
        self
    }

    /// Only where the key holds nothing: a write to a key that holds an
    /// object stores nothing, and fails as
    /// [`ConditionFailed`](crate::resources::ResourceErrorKind::ConditionFailed)
    /// (S3's `If-None-Match: *`, code `PreconditionFailed`). Two writes
    /// racing for one key: one of them makes it.
    pub fn if_absent(mut self) -> Self {
        self.if_absent = true;
        self
    }

    /// The options, or why S3 would not take their metadata.
    pub(crate) fn check(&self) -> Result<(), Fault> {
        check_metadata(&self.metadata)
    }
}

/// The metadata, or why S3 would not take it: S3 carries it in HTTP
/// headers, which hold only so much and only so many characters.
pub(crate) fn check_metadata(metadata: &HashMap<String, String>) -> Result<(), Fault> {
    let size: usize = metadata.iter().map(|(key, value)| key.len() + value.len()).sum();
    if size > MAX_METADATA_BYTES {
        return Err(Fault::invalid(
            "MetadataTooLarge",
            format!("the metadata is {size} bytes, and S3 takes at most {MAX_METADATA_BYTES}"),
        ));
    }
    for (key, value) in metadata {
        let key_ok = !key.is_empty()
            && key.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'));
        if !key_ok {
            return Err(Fault::invalid(
                "InvalidMetadata",
                format!("the metadata key `{key}` is not letters, digits, `-`, `_` and `.`"),
            ));
        }
        if !value.bytes().all(|byte| byte == b' ' || byte.is_ascii_graphic()) {
            return Err(Fault::invalid(
                "InvalidMetadata",
                format!("the value of the metadata key `{key}` is not printable ASCII"),
            ));
        }
    }
    Ok(())
}

/// What a bucket recorded about an object it stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PutResult {
    /// The entity tag of the content (see [`ObjectInfo::etag`]).
    pub etag: Option<String>,
    /// The version the write made, where the bucket keeps versions.
    pub version: Option<String>,
}

/// How a copy is written. Without a content type or metadata, the copy
/// carries the source's; giving either replaces both, as S3 replaces them
/// together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyOptions {
    pub(crate) replace: Option<PutOptions>,
}

impl CopyOptions {
    /// The source's content type and metadata.
    pub fn new() -> Self {
        CopyOptions::default()
    }

    /// The copy's content type and metadata, in place of the source's.
    pub fn replacing(options: PutOptions) -> Self {
        CopyOptions { replace: Some(options) }
    }
}

/// What a bucket recorded about the object a copy made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyResult {
    /// The entity tag of the copy.
    pub etag: Option<String>,
    /// The version the copy made, where the destination keeps versions.
    pub version: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_held_to_what_s3_headers_carry() {
        assert!(PutOptions::new().metadata("Uploaded-By", "u 7").check().is_ok());
        assert_eq!(PutOptions::new().metadata("A", "b").metadata, HashMap::from([("a".into(), "b".into())]));
        let big = PutOptions::new().metadata("k", "v".repeat(MAX_METADATA_BYTES));
        assert_eq!(big.check().unwrap_err().code.as_deref(), Some("MetadataTooLarge"));
        assert_eq!(
            PutOptions::new().metadata("a b", "v").check().unwrap_err().code.as_deref(),
            Some("InvalidMetadata")
        );
        assert_eq!(PutOptions::new().metadata("a", "é").check().unwrap_err().code.as_deref(), Some("InvalidMetadata"));
    }
}
