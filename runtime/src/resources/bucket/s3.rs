//! A bucket on S3, or on a server that speaks S3's API (a local session's
//! MinIO, an emulator), through the official AWS SDK.

use std::any::Any;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use aws_sdk_s3::Client;
use aws_sdk_s3::config::{Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::{ByteStream, DateTime};
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart, Delete, MetadataDirective, ObjectIdentifier};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use bytes::Bytes;
use futures_util::stream::StreamExt;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::backend::{Backend, CopyRequest, Fetched};
use super::body::{Body, Parts};
use super::deletion::Removal;
use super::range::{served_of, total_of};
use super::signing::Access;
use super::{ByteRange, CopyResult, Cursor, ListOptions, ObjectInfo, Page, PutOptions, PutResult};
use crate::aws::sdk_config;
use crate::future::BoxFuture;
use crate::resources::ResourceErrorKind;
use crate::resources::aws_fault::{fault, unbuilt};
use crate::resources::error::Fault;
use crate::resources::shown::shown;

/// The size of the parts of a multipart upload: a body larger than one part
/// is uploaded a part at a time, so that a write holds at most two parts
/// in memory whatever the object's size. S3's least part is 5 MiB.
pub const PART_SIZE: usize = 8 * 1024 * 1024;

/// What a copy's source path keeps as it is: S3 reads it as a URL path.
const COPY_SOURCE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Where and as whom S3 is reached, besides the process's AWS
/// configuration.
pub(crate) struct Reach<'a> {
    /// An S3-compatible server's endpoint, in place of S3's.
    pub(crate) endpoint: Option<&'a str>,
    /// An access key and secret key, in place of the process's credentials.
    pub(crate) credentials: Option<(String, String)>,
}

pub(crate) struct S3 {
    client: Client,
    bucket: String,
    /// The server standing in for S3, as a message may show it.
    endpoint: Option<String>,
}

impl S3 {
    /// The S3 bucket named `bucket`, reached as `reach` says.
    pub(crate) async fn new(bucket: String, reach: Reach<'_>) -> Self {
        let shared = sdk_config().await;
        let mut config = aws_sdk_s3::config::Builder::from(shared);
        if let Some(endpoint) = reach.endpoint {
            config = config.endpoint_url(endpoint);
        }
        if reach.endpoint.is_some() || shared.endpoint_url().is_some() {
            // A server standing in for S3 has no DNS name per bucket, and not
            // every one takes the checksums the SDK sends S3 unasked.
            config = config
                .force_path_style(true)
                .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
                .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
        }
        if let Some((access_key, secret_key)) = reach.credentials.clone() {
            config = config.credentials_provider(Credentials::new(access_key, secret_key, None, None, "celerity"));
        }
        if shared.region().is_none() {
            // A local server takes any region, and the signature needs one.
            config = config.region(Region::new("us-east-1"));
        }
        S3 { client: Client::from_conf(config.build()), bucket, endpoint: reach.endpoint.map(shown) }
    }

    /// The failure `error` is, naming the server where one stands in for
    /// S3 and could not be reached: in a local session, most likely one
    /// that is not running.
    fn failed<E>(&self, error: &SdkError<E, HttpResponse>) -> Fault
    where
        E: std::error::Error + ProvideErrorMetadata + 'static,
    {
        let mut fault = fault(error);
        if let (ResourceErrorKind::Unreachable, Some(endpoint)) = (fault.kind, &self.endpoint) {
            fault.message = format!("the S3-compatible server at {endpoint} could not be reached: {}", fault.message);
        }
        fault
    }

    async fn put_whole(&self, key: &str, content: Bytes, options: &PutOptions) -> Result<PutResult, Fault> {
        let output = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .set_content_type(options.content_type.clone())
            .set_metadata(metadata(options))
            .set_if_none_match(if_absent(options))
            .body(ByteStream::from(content))
            .send()
            .await
            .map_err(|error| self.failed(&error))?;
        Ok(PutResult { etag: output.e_tag().map(str::to_string), version: output.version_id().map(str::to_string) })
    }

    async fn put_parts(
        &self,
        key: &str,
        first: Bytes,
        second: Bytes,
        mut parts: Parts,
        options: &PutOptions,
    ) -> Result<PutResult, Fault> {
        let created = self
            .client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .set_content_type(options.content_type.clone())
            .set_metadata(metadata(options))
            .send()
            .await
            .map_err(|error| self.failed(&error))?;
        let upload_id = created
            .upload_id()
            .ok_or_else(|| Fault::new(ResourceErrorKind::Malformed, None, "S3 started an upload without an id"))?
            .to_string();
        let mut abort = Abort {
            client: self.client.clone(),
            bucket: self.bucket.clone(),
            key: key.to_string(),
            upload_id: Some(upload_id.clone()),
        };
        let mut completed = Vec::new();
        let mut pending = [Some(first), Some(second)];
        let mut number = 0;
        loop {
            let part = match pending.iter_mut().find_map(Option::take) {
                Some(part) => part,
                None => match parts.next(false).await {
                    Ok(Some(part)) => part,
                    Ok(None) => break,
                    Err(fault) => return Err(abort.now(fault).await),
                },
            };
            number += 1;
            let uploaded = self
                .client
                .upload_part()
                .bucket(&self.bucket)
                .key(key)
                .upload_id(&upload_id)
                .part_number(number)
                .body(ByteStream::from(part))
                .send()
                .await;
            match uploaded {
                Ok(output) => completed.push(
                    CompletedPart::builder().set_e_tag(output.e_tag().map(str::to_string)).part_number(number).build(),
                ),
                Err(error) => return Err(abort.now(self.failed(&error)).await),
            }
        }
        let done = self
            .client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .upload_id(&upload_id)
            .set_if_none_match(if_absent(options))
            .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(completed)).build())
            .send()
            .await;
        match done {
            Ok(output) => {
                abort.upload_id = None;
                Ok(PutResult {
                    etag: output.e_tag().map(str::to_string),
                    version: output.version_id().map(str::to_string),
                })
            }
            Err(error) => Err(abort.now(self.failed(&error)).await),
        }
    }
}

/// An unfinished multipart upload, aborted when a write fails or is
/// dropped, so that S3 keeps (and bills) no orphaned parts.
struct Abort {
    client: Client,
    bucket: String,
    key: String,
    upload_id: Option<String>,
}

impl Abort {
    /// Aborts the upload, and answers with the fault that stopped it.
    async fn now(&mut self, fault: Fault) -> Fault {
        if let Some(upload_id) = self.upload_id.take() {
            let _ = self
                .client
                .abort_multipart_upload()
                .bucket(&self.bucket)
                .key(&self.key)
                .upload_id(upload_id)
                .send()
                .await;
        }
        fault
    }
}

impl Drop for Abort {
    fn drop(&mut self) {
        let Some(upload_id) = self.upload_id.take() else { return };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let request = self.client.abort_multipart_upload().bucket(&self.bucket).key(&self.key).upload_id(upload_id);
            runtime.spawn(async move {
                let _ = request.send().await;
            });
        }
    }
}

/// An answer of S3's that is not one it gives.
fn malformed(what: &str) -> Fault {
    Fault::new(ResourceErrorKind::Malformed, None, what)
}

fn metadata(options: &PutOptions) -> Option<HashMap<String, String>> {
    (!options.metadata.is_empty()).then(|| options.metadata.clone())
}

/// S3's condition for a write only to make an object.
fn if_absent(options: &PutOptions) -> Option<String> {
    options.if_absent.then(|| "*".to_string())
}

fn time(value: Option<&DateTime>) -> Option<SystemTime> {
    value.and_then(|value| SystemTime::try_from(*value).ok())
}

impl Backend for S3 {
    fn get<'a>(&'a self, key: &'a str, range: Option<ByteRange>) -> BoxFuture<'a, Result<Fetched, Fault>> {
        Box::pin(async move {
            let output = self
                .client
                .get_object()
                .bucket(&self.bucket)
                .key(key)
                .set_range(range.map(|range| range.header()))
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            // The length is what the body is counted against: without it, a
            // body cut short could not be told from a whole one.
            let content_length = output
                .content_length()
                .and_then(|length| u64::try_from(length).ok())
                .ok_or_else(|| malformed("S3 answered an object without its length"))?;
            let content_range = output.content_range();
            let served = range.and(content_range.and_then(served_of));
            if served.is_some_and(|(start, end)| end - start != content_length) {
                return Err(malformed("S3 answered a range whose length is not the range's"));
            }
            let mut info = ObjectInfo::new(key, content_range.and_then(total_of).unwrap_or(content_length));
            info.content_type = output.content_type().map(str::to_string);
            info.etag = output.e_tag().map(str::to_string);
            info.last_modified = time(output.last_modified());
            info.metadata = output.metadata().cloned().unwrap_or_default();
            info.version = output.version_id().map(str::to_string);
            let body = futures_util::stream::unfold(Some(output.body), |body| async move {
                let mut body = body?;
                match body.try_next().await {
                    Ok(Some(chunk)) => Some((Ok(chunk), Some(body))),
                    Ok(None) => None,
                    Err(error) => {
                        let fault = Fault::unreachable(format!("the object's content was cut off: {error}"));
                        Some((Err(fault), None))
                    }
                }
            });
            Ok(Fetched { info, range: served, content_length, body: body.boxed() })
        })
    }

    fn put<'a>(&'a self, key: &'a str, body: Body, options: &'a PutOptions) -> BoxFuture<'a, Result<PutResult, Fault>> {
        Box::pin(async move {
            let mut parts = Parts::new(body, PART_SIZE);
            let first = parts.next(true).await?.unwrap_or_default();
            let second = if first.len() == PART_SIZE { parts.next(false).await? } else { None };
            match second {
                None => self.put_whole(key, first, options).await,
                Some(second) => self.put_parts(key, first, second, parts, options).await,
            }
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), Fault>> {
        Box::pin(async move {
            self.client
                .delete_object()
                .bucket(&self.bucket)
                .key(key)
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            Ok(())
        })
    }

    fn delete_batch<'a>(&'a self, keys: &'a [String]) -> BoxFuture<'a, Vec<Removal>> {
        Box::pin(async move {
            let sent = async {
                let objects = keys
                    .iter()
                    .map(|key| ObjectIdentifier::builder().key(key).build().map_err(unbuilt))
                    .collect::<Result<Vec<_>, _>>()?;
                let delete = Delete::builder().set_objects(Some(objects)).quiet(false).build().map_err(unbuilt)?;
                self.client
                    .delete_objects()
                    .bucket(&self.bucket)
                    .delete(delete)
                    .send()
                    .await
                    .map_err(|error| self.failed(&error))
            };
            let output = match sent.await {
                Ok(output) => output,
                Err(fault) if fault.kind == ResourceErrorKind::Unreachable => {
                    return keys.iter().map(|key| Removal::Unsent(key.clone(), fault.clone())).collect();
                }
                Err(fault) => {
                    let code = fault.code.unwrap_or_else(|| "InternalError".to_string());
                    return keys
                        .iter()
                        .map(|key| Removal::Failed {
                            key: key.clone(),
                            code: code.clone(),
                            message: fault.message.clone(),
                        })
                        .collect();
                }
            };
            let mut answered: HashMap<&str, Removal> = HashMap::new();
            for deleted in output.deleted() {
                if let Some(key) = deleted.key() {
                    answered.insert(key, Removal::Deleted(key.to_string()));
                }
            }
            for error in output.errors() {
                if let Some(key) = error.key() {
                    let removal = Removal::Failed {
                        key: key.to_string(),
                        code: error.code().unwrap_or("InternalError").to_string(),
                        message: error.message().unwrap_or("S3 refused to delete it").to_string(),
                    };
                    answered.insert(key, removal);
                }
            }
            // Looked up, not taken: a key named twice in one request has
            // one answer, which is the answer for both.
            keys.iter()
                .map(|key| {
                    answered.get(key.as_str()).cloned().unwrap_or_else(|| {
                        Removal::Unsent(key.clone(), Fault::unreachable("S3 answered the delete without this key"))
                    })
                })
                .collect()
        })
    }

    fn info<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<ObjectInfo>, Fault>> {
        Box::pin(async move {
            let output = match self.client.head_object().bucket(&self.bucket).key(key).send().await {
                Ok(output) => output,
                // A `HEAD` answer has no body to carry S3's `NoSuchKey`: the
                // SDK reads a 404 as its own `NotFound`.
                Err(error) if error.as_service_error().is_some_and(|error| error.is_not_found()) => return Ok(None),
                Err(error) => return Err(self.failed(&error)),
            };
            let mut info = ObjectInfo::new(key, output.content_length().unwrap_or_default().max(0) as u64);
            info.content_type = output.content_type().map(str::to_string);
            info.etag = output.e_tag().map(str::to_string);
            info.last_modified = time(output.last_modified());
            info.metadata = output.metadata().cloned().unwrap_or_default();
            info.version = output.version_id().map(str::to_string);
            Ok(Some(info))
        })
    }

    fn list<'a>(&'a self, prefix: &'a str, options: &'a ListOptions) -> BoxFuture<'a, Result<Page, Fault>> {
        let (limit, cursor) = (options.page_size(), options.cursor.as_ref());
        Box::pin(async move {
            let output = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(prefix)
                .max_keys(limit.min(i32::MAX as usize) as i32)
                .set_continuation_token(cursor.map(|cursor| cursor.as_str().to_string()))
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            let objects = output
                .contents()
                .iter()
                .map(|object| {
                    let key = object.key().ok_or_else(|| malformed("S3 listed an object without its key"))?;
                    let mut info = ObjectInfo::new(key, object.size().unwrap_or_default().max(0) as u64);
                    info.etag = object.e_tag().map(str::to_string);
                    info.last_modified = time(object.last_modified());
                    Ok(info)
                })
                .collect::<Result<_, Fault>>()?;
            let cursor = match (output.is_truncated(), output.next_continuation_token()) {
                (Some(true), Some(token)) => Some(Cursor::from_text(token)),
                _ => None,
            };
            Ok(Page { objects, cursor })
        })
    }

    fn copy<'a>(&'a self, request: CopyRequest<'a>) -> BoxFuture<'a, Result<CopyResult, Fault>> {
        let CopyRequest { key, to, to_key, options } = request;
        Box::pin(async move {
            let destination = to.as_any().downcast_ref::<S3>().ok_or_else(|| {
                Fault::unsupported(
                    "the destination bucket is not on S3 (or an S3-compatible server), as this one is: S3 copies \
                     within itself",
                )
            })?;
            let source = utf8_percent_encode(&format!("{}/{key}", self.bucket), COPY_SOURCE).to_string();
            let mut request = self.client.copy_object().bucket(&destination.bucket).key(to_key).copy_source(source);
            if let Some(replace) = &options.replace {
                request = request
                    .metadata_directive(MetadataDirective::Replace)
                    .set_content_type(replace.content_type.clone())
                    .set_metadata(metadata(replace));
            }
            let output = request.send().await.map_err(|error| self.failed(&error))?;
            Ok(CopyResult {
                etag: output.copy_object_result().and_then(|result| result.e_tag()).map(str::to_string),
                version: output.version_id().map(str::to_string),
            })
        })
    }

    fn sign<'a>(&'a self, key: &'a str, access: &'a Access, expiry: Duration) -> BoxFuture<'a, Result<String, Fault>> {
        Box::pin(async move {
            let config = PresigningConfig::expires_in(expiry)
                .map_err(|error| Fault::invalid("InvalidExpiry", error.to_string()))?;
            let signed = match access {
                Access::Read => self
                    .client
                    .get_object()
                    .bucket(&self.bucket)
                    .key(key)
                    .presigned(config)
                    .await
                    .map_err(|error| self.failed(&error))?,
                Access::Write(content_type) => self
                    .client
                    .put_object()
                    .bucket(&self.bucket)
                    .key(key)
                    .set_content_type(content_type.clone())
                    .presigned(config)
                    .await
                    .map_err(|error| self.failed(&error))?,
            };
            Ok(signed.uri().to_string())
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
