//! The kinds of resource a blueprint links.

use std::fmt;

/// A resource's kind, as the links file names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ResourceKind {
    /// `bucket`: an object store (S3 on AWS).
    Bucket,
    /// `queue`: a message queue (SQS on AWS).
    Queue,
    /// `topic`: a publish-subscribe topic (SNS on AWS).
    Topic,
    /// `datastore`: a NoSQL table (DynamoDB on AWS).
    Datastore,
    /// `cache`: a Redis-compatible cache (ElastiCache on AWS).
    Cache,
    /// `sqlDatabase`: a SQL database (RDS or Aurora on AWS).
    SqlDatabase,
    /// A kind this SDK does not know, kept as written.
    Other(String),
}

impl ResourceKind {
    /// The kind a links file names.
    pub fn parse(name: &str) -> ResourceKind {
        match name {
            "bucket" => ResourceKind::Bucket,
            "queue" => ResourceKind::Queue,
            "topic" => ResourceKind::Topic,
            "datastore" => ResourceKind::Datastore,
            "cache" => ResourceKind::Cache,
            "sqlDatabase" => ResourceKind::SqlDatabase,
            other => ResourceKind::Other(other.to_string()),
        }
    }

    /// The name a links file gives the kind.
    pub fn as_str(&self) -> &str {
        match self {
            ResourceKind::Bucket => "bucket",
            ResourceKind::Queue => "queue",
            ResourceKind::Topic => "topic",
            ResourceKind::Datastore => "datastore",
            ResourceKind::Cache => "cache",
            ResourceKind::SqlDatabase => "sqlDatabase",
            ResourceKind::Other(name) => name,
        }
    }

    /// The kind in the plural, for messages.
    pub(crate) fn plural(&self) -> String {
        match self {
            ResourceKind::Cache => "caches".to_string(),
            ResourceKind::SqlDatabase => "SQL databases".to_string(),
            other => format!("{}s", other),
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceKind::SqlDatabase => f.write_str("SQL database"),
            other => f.write_str(other.as_str()),
        }
    }
}
