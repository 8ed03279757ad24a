//! A benchmark case, what each of its events is, and what one run of it
//! measured.

use crate::{
    BUCKET_ANSWER, BUCKET_TAG, CACHE_KEY, CACHE_TAG, CACHE_VALUE, CAPPED_TAGS, DATASTORE_TAG, ITEM_ID, ITEM_NAME,
    OBJECT, QUEUE_ANSWER, QUEUE_MESSAGE, QUEUE_TAG, SQL_ANSWER, SQL_TAG,
};

/// What each event of a case is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// An HTTP request with a body of `body` bytes, echoed back; on one tag,
    /// or spread round-robin over the eight capped tags.
    Http {
        /// Body size in bytes.
        body: usize,
        /// 1 or 8.
        tags: usize,
    },
    /// A consumer batch of [`BATCH_RECORDS`](crate::BATCH_RECORDS) records, one in ten failing;
    /// the answer must name exactly those.
    Consumer,
    /// An HTTP request whose handler sends `batch` WebSocket messages in one
    /// `WsSend`, waits for the acknowledgement (sent at once by the
    /// harness), and answers.
    WsSend {
        /// Messages per `WsSend`.
        batch: usize,
    },
    /// An HTTP request whose handler does one operation on a real Redis or
    /// Postgres, or the AWS API emulator. These cases pair (A) with itself:
    /// the SDK's resource handle against the client crate (`redis`, sqlx,
    /// the AWS SDK's) called directly (see [`Pairing`]).
    Resource {
        /// The operation.
        op: ResourceOp,
    },
}

impl Shape {
    /// How the case's two runs are paired.
    pub fn pairing(&self) -> Pairing {
        match self {
            Shape::Resource { .. } => Pairing::SdkHandleVsDirectClient,
            _ => Pairing::SdkVsRaw,
        }
    }
}

/// What a case's (A) and (B) are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// (A) the SDK handler, (B) the hand-written tonic handler: what the
    /// SDK costs against the protocol's limit.
    SdkVsRaw,
    /// Both the SDK handler, the same binary and protocol path: (A) with
    /// the SDK's resource handle, (B) with the same client crate called
    /// directly. The difference is the handle's own cost per operation.
    SdkHandleVsDirectClient,
}

/// One operation on a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceOp {
    /// `Cache::get` of one key holding a 64-byte value (`GET`).
    CacheGet,
    /// `Queue::send` of one 64-byte text message: locally an `XADD` to the
    /// queue's stream.
    QueueSend,
    /// `SELECT 1` on the writer pool of a `SqlDatabase` on Postgres
    /// (`query_scalar::<_, i32>`, `fetch_one`).
    SqlSelect,
    /// `Bucket::put` of a 64 KiB object to S3 (`PutObject`).
    BucketPut,
    /// `Datastore::get` of one item of a few attributes from DynamoDB
    /// (`GetItem`), read into a serde type.
    DatastoreGet,
}

/// The server a resource operation runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// The test kit's Redis: the cache and the queue.
    Redis,
    /// The test kit's Postgres: the SQL database.
    Postgres,
    /// The test kit's AWS API emulator (moto): the bucket and the
    /// datastore.
    Moto,
}

impl ResourceOp {
    /// Every operation, in the matrix's order.
    pub const ALL: [ResourceOp; 5] = [
        ResourceOp::CacheGet,
        ResourceOp::QueueSend,
        ResourceOp::SqlSelect,
        ResourceOp::BucketPut,
        ResourceOp::DatastoreGet,
    ];

    /// The server it runs against.
    pub fn server(self) -> Server {
        match self {
            ResourceOp::CacheGet | ResourceOp::QueueSend => Server::Redis,
            ResourceOp::SqlSelect => Server::Postgres,
            ResourceOp::BucketPut | ResourceOp::DatastoreGet => Server::Moto,
        }
    }

    /// The client crate (B) calls directly.
    pub fn client(self) -> &'static str {
        match self {
            ResourceOp::CacheGet | ResourceOp::QueueSend => "redis",
            ResourceOp::SqlSelect => "sqlx",
            ResourceOp::BucketPut => "aws-sdk-s3",
            ResourceOp::DatastoreGet => "aws-sdk-dynamodb",
        }
    }

    /// The tag its events go to.
    pub fn tag(self) -> &'static str {
        match self {
            ResourceOp::CacheGet => CACHE_TAG,
            ResourceOp::QueueSend => QUEUE_TAG,
            ResourceOp::SqlSelect => SQL_TAG,
            ResourceOp::BucketPut => BUCKET_TAG,
            ResourceOp::DatastoreGet => DATASTORE_TAG,
        }
    }

    /// The request body: the key to read, the message to send, the object
    /// to store, the item's id, or none (the query is the handler's own).
    pub fn request_body(self) -> &'static [u8] {
        match self {
            ResourceOp::CacheGet => CACHE_KEY.as_bytes(),
            ResourceOp::QueueSend => QUEUE_MESSAGE.as_bytes(),
            ResourceOp::SqlSelect => b"",
            ResourceOp::BucketPut => &OBJECT,
            ResourceOp::DatastoreGet => ITEM_ID.as_bytes(),
        }
    }

    /// The body every answer must have: the value read, the sent mark, the
    /// value the query returned, the stored mark, or the item's name.
    pub fn answer_body(self) -> &'static str {
        match self {
            ResourceOp::CacheGet => CACHE_VALUE,
            ResourceOp::QueueSend => QUEUE_ANSWER,
            ResourceOp::SqlSelect => SQL_ANSWER,
            ResourceOp::BucketPut => BUCKET_ANSWER,
            ResourceOp::DatastoreGet => ITEM_NAME,
        }
    }

    /// Its name in case names.
    pub fn label(self) -> &'static str {
        match self {
            ResourceOp::CacheGet => "cache-get",
            ResourceOp::QueueSend => "queue-send",
            ResourceOp::SqlSelect => "sql-select",
            ResourceOp::BucketPut => "bucket-put",
            ResourceOp::DatastoreGet => "datastore-get",
        }
    }
}

/// One line of the matrix.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name, matched by `--filter`.
    pub name: String,
    /// What each event is.
    pub shape: Shape,
    /// The credit window, declared by the handler as its initial credit.
    pub credit: u32,
    /// Events run before measuring.
    pub warmup: u64,
    /// Events measured.
    pub events: u64,
    /// The memory-growth case: run once per handler, after every round,
    /// comparing RSS after the warm-up with RSS at the end.
    pub memory: bool,
}

impl Case {
    /// The per-tag cap the handlers declare for the capped tags.
    pub fn tag_cap(&self) -> u32 {
        (self.credit / CAPPED_TAGS.len() as u32).max(1)
    }
}

/// What one run of one case against one handler measured.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    /// Events dispatched, warm-up included.
    pub dispatched: u64,
    /// Results read for them.
    pub answered: u64,
    /// Answers that were wrong, frames that broke the protocol, and failures
    /// of the run itself.
    pub errors: u64,
    /// The first few of them.
    pub first_errors: Vec<String>,
    /// `WsSend`s acknowledged.
    pub ws_sends: u64,
    /// Measured events per second.
    pub events_per_sec: f64,
    /// Latency percentiles of the measured events, in microseconds.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// CPU time (user + system) of the handler process per measured event.
    pub cpu_us_per_event: f64,
    /// CPU time of the load generator per measured event.
    pub gen_cpu_us_per_event: f64,
    /// Peak RSS of the handler process (`VmHWM`) at the end of the measured
    /// phase.
    pub peak_rss_kib: u64,
    /// RSS after the warm-up.
    pub rss_after_warmup_kib: u64,
    /// RSS at the end of the measured phase.
    pub rss_end_kib: u64,
    /// Heap allocations (`alloc`, `alloc_zeroed`, `realloc`) of the handler
    /// process per measured event, from its counting global allocator; NaN
    /// when the process did not count.
    pub allocs_per_event: f64,
    /// Bytes those allocations asked for, per measured event; NaN when not
    /// counted.
    pub alloc_bytes_per_event: f64,
    /// Voluntary context switches of the handler process (all its threads)
    /// per measured event; NaN when `/proc` could not be read.
    pub voluntary_cs_per_event: f64,
    /// Involuntary context switches, likewise.
    pub involuntary_cs_per_event: f64,
    /// The process exited by itself, successfully, after the drain.
    pub exit_ok: bool,
}

impl Sample {
    pub(crate) fn error(&mut self, error: impl Into<String>) {
        self.errors += 1;
        if self.first_errors.len() < 5 {
            self.first_errors.push(error.into());
        }
    }

    /// Whether every event was answered correctly and the process ended
    /// cleanly.
    pub fn is_clean(&self) -> bool {
        self.errors == 0 && self.answered == self.dispatched && self.exit_ok
    }
}
