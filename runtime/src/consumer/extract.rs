//! Handler arguments taken from a consumer record, or from the whole batch.

use serde::de::DeserializeOwned;

use super::{Batch, BatchInfo, PerRecord, RawRecord, Record, WholeBatch};
use crate::context::Context;
use crate::error::Error;
use crate::pipeline::FromEvent;

/// The record as it arrived.
impl FromEvent<PerRecord> for RawRecord {
    fn from_event(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.clone())
    }

    fn from_event_owned(record: RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record)
    }
}

/// The record with its body decoded from JSON; a body that does not fit
/// fails the record, naming the field.
impl<T: DeserializeOwned> FromEvent<PerRecord> for Record<T> {
    fn from_event(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.decode()?)
    }

    fn from_event_owned(record: RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(record.into_decoded()?)
    }
}

/// Where the record's batch came from.
impl FromEvent<PerRecord> for BatchInfo {
    fn from_event(record: &mut RawRecord, _cx: &Context) -> Result<Self, Error> {
        Ok(BatchInfo::of(record))
    }
}

/// The whole batch.
impl FromEvent<WholeBatch> for Batch {
    fn from_event(batch: &mut Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch.clone())
    }

    fn from_event_owned(batch: Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch)
    }
}

/// Where the batch came from.
impl FromEvent<WholeBatch> for BatchInfo {
    fn from_event(batch: &mut Batch, _cx: &Context) -> Result<Self, Error> {
        Ok(batch.info())
    }
}
