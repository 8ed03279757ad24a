//! A datastore on DynamoDB (AWS, DynamoDB Local, emulators): the table the
//! deployment recorded, its key schema read once with `DescribeTable`,
//! and the expression model compiled to DynamoDB's expressions.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, KeySchemaElement, KeyType, KeysAndAttributes, Put,
    PutRequest, ReturnValue, ScalarAttributeType, TransactWriteItem, WriteRequest,
};

use super::backend::{
    Backend, BatchRead, BatchWrite, GroupFault, GroupWrite, QueryRequest, RawPage, ScanRequest, UpdateRequest,
};
use super::condition::Condition;
use super::expression::Expressions;
use super::key::{KeyAttribute, KeyKind, KeySchema, TableSchema};
use super::update::Update;
use super::value::{Item, Value};
use crate::aws::sdk_config;
use crate::future::BoxFuture;
use crate::resources::aws_fault::{fault, unbuilt};
use crate::resources::error::{Fault, ResourceErrorKind};
use crate::resources::shown::shown;

type Attributes = HashMap<String, AttributeValue>;

pub(crate) struct DynamoDb {
    client: Client,
    table: String,
    /// The endpoint it was pointed at, to name where it cannot be reached.
    endpoint: Option<String>,
}

/// Where a local session's DynamoDB Local listens by default.
pub(crate) const DEFAULT_LOCAL_ENDPOINT: &str = "http://localhost:8000";

/// Sends `request`, its failure named for the table.
macro_rules! sent {
    ($self:ident, $request:expr) => {
        $request.send().await.map_err(|error| $self.failed(&error))
    };
}

/// `builder` (of a transaction's `Put` or `Delete`, two types with the
/// same setters) built with `condition` compiled into it, where there is
/// one.
macro_rules! built_with {
    ($builder:expr, $condition:expr) => {{
        let mut expressions = Expressions::new();
        let condition = $condition.map(|condition| expressions.condition(condition));
        $builder
            .set_condition_expression(condition)
            .set_expression_attribute_names(expressions.names())
            .set_expression_attribute_values(expressions.values(to_attribute))
            .build()
            .map_err(unbuilt)
    }};
}

impl DynamoDb {
    /// DynamoDB for `table`, through `endpoint` where one is given, in
    /// `region` where the deployment recorded one (a table declared as
    /// external, elsewhere than the application). A `local` one is given
    /// the region and credentials DynamoDB Local takes where the
    /// environment sets none (it checks neither).
    pub(crate) async fn new(table: String, endpoint: Option<&str>, region: Option<String>, local: bool) -> Self {
        let shared = sdk_config().await;
        let mut config = aws_sdk_dynamodb::config::Builder::from(shared);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        if let Some(region) = region {
            config = config.region(aws_sdk_dynamodb::config::Region::new(region));
        } else if local && shared.region().is_none() {
            config = config.region(aws_sdk_dynamodb::config::Region::new("us-east-1"));
        }
        if local && shared.credentials_provider().is_none() {
            config = config.credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
                "local",
                "local",
                None,
                None,
                "celerity-local",
            ));
        }
        DynamoDb { client: Client::from_conf(config.build()), table, endpoint: endpoint.map(str::to_string) }
    }

    /// The failure `error` is; where DynamoDB could not be reached at an
    /// endpoint given, it names the endpoint (a local session's DynamoDB
    /// Local not started is the usual cause).
    fn failed<E>(&self, error: &aws_sdk_dynamodb::error::SdkError<E>) -> Fault
    where
        E: std::error::Error + aws_sdk_dynamodb::error::ProvideErrorMetadata + 'static,
    {
        let mut failure = fault(error);
        if let (ResourceErrorKind::Unreachable, Some(endpoint)) = (failure.kind, &self.endpoint) {
            failure.message = format!("{} (DynamoDB at {})", failure.message, shown(endpoint));
        }
        failure
    }

    fn put_request(&self, item: &Item, condition: Option<&Condition>) -> Result<Put, Fault> {
        built_with!(Put::builder().table_name(&self.table).set_item(Some(attributes(item))), condition)
    }

    fn delete_request(&self, key: &Item, condition: Option<&Condition>) -> Result<Delete, Fault> {
        built_with!(Delete::builder().table_name(&self.table).set_key(Some(attributes(key))), condition)
    }

    fn update_request(
        &self,
        key: &Item,
        update: &Update,
        condition: Option<&Condition>,
    ) -> Result<aws_sdk_dynamodb::types::Update, Fault> {
        let mut expressions = Expressions::new();
        let changes = expressions.update(update);
        let condition = condition.map(|condition| expressions.condition(condition));
        aws_sdk_dynamodb::types::Update::builder()
            .table_name(&self.table)
            .set_key(Some(attributes(key)))
            .update_expression(changes)
            .set_condition_expression(condition)
            .set_expression_attribute_names(expressions.names())
            .set_expression_attribute_values(expressions.values(to_attribute))
            .build()
            .map_err(unbuilt)
    }

    fn check_request(&self, key: &Item, condition: &Condition) -> Result<ConditionCheck, Fault> {
        let mut expressions = Expressions::new();
        let condition = expressions.condition(condition);
        ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(attributes(key)))
            .condition_expression(condition)
            .set_expression_attribute_names(expressions.names())
            .set_expression_attribute_values(expressions.values(to_attribute))
            .build()
            .map_err(unbuilt)
    }

    fn group_item(&self, write: &GroupWrite) -> Result<TransactWriteItem, Fault> {
        let item = TransactWriteItem::builder();
        Ok(match write {
            GroupWrite::Put(item_, condition) => item.put(self.put_request(item_, condition.as_ref())?),
            GroupWrite::Update(key, update, condition) => {
                item.update(self.update_request(key, update, condition.as_ref())?)
            }
            GroupWrite::Delete(key, condition) => item.delete(self.delete_request(key, condition.as_ref())?),
            GroupWrite::Check(key, condition) => item.condition_check(self.check_request(key, condition)?),
        }
        .build())
    }
}

fn attributes(item: &Item) -> Attributes {
    item.iter().map(|(name, value)| (name.clone(), to_attribute(value))).collect()
}

fn to_attribute(value: &Value) -> AttributeValue {
    match value {
        Value::String(text) => AttributeValue::S(text.clone()),
        Value::Number(text) => AttributeValue::N(text.clone()),
        Value::Binary(bytes) => AttributeValue::B(Blob::new(bytes.clone())),
        Value::Bool(flag) => AttributeValue::Bool(*flag),
        Value::Null => AttributeValue::Null(true),
        Value::List(values) => AttributeValue::L(values.iter().map(to_attribute).collect()),
        Value::Map(map) => AttributeValue::M(attributes(map)),
        Value::StringSet(texts) => AttributeValue::Ss(texts.clone()),
        Value::NumberSet(numbers) => AttributeValue::Ns(numbers.clone()),
        Value::BinarySet(values) => AttributeValue::Bs(values.iter().map(|bytes| Blob::new(bytes.clone())).collect()),
    }
}

fn malformed(what: &str) -> Fault {
    Fault::new(
        ResourceErrorKind::Malformed,
        Some("UnexpectedAnswer"),
        format!("DynamoDB answered with {what}, which this SDK does not read"),
    )
}

fn from_attribute(value: &AttributeValue) -> Result<Value, Fault> {
    Ok(match value {
        AttributeValue::S(text) => Value::String(text.clone()),
        AttributeValue::N(text) => Value::Number(text.clone()),
        AttributeValue::B(blob) => Value::Binary(blob.as_ref().to_vec()),
        AttributeValue::Bool(flag) => Value::Bool(*flag),
        AttributeValue::Null(_) => Value::Null,
        AttributeValue::L(values) => Value::List(values.iter().map(from_attribute).collect::<Result<_, _>>()?),
        AttributeValue::M(map) => Value::Map(item(map)?),
        AttributeValue::Ss(texts) => Value::StringSet(texts.clone()),
        AttributeValue::Ns(numbers) => Value::NumberSet(numbers.clone()),
        AttributeValue::Bs(values) => Value::BinarySet(values.iter().map(|blob| blob.as_ref().to_vec()).collect()),
        _ => return Err(malformed("an attribute type")),
    })
}

fn item(attributes: &Attributes) -> Result<Item, Fault> {
    attributes.iter().map(|(name, value)| Ok((name.clone(), from_attribute(value)?))).collect()
}

fn items(list: &[Attributes]) -> Result<Vec<Item>, Fault> {
    list.iter().map(item).collect()
}

fn key_schema(elements: &[KeySchemaElement], kinds: &HashMap<&str, KeyKind>) -> Result<KeySchema, Fault> {
    let attribute = |element: &KeySchemaElement| {
        let name = element.attribute_name();
        KeyAttribute::new(name, kinds.get(name).copied().unwrap_or(KeyKind::String))
    };
    let partition = elements
        .iter()
        .find(|element| *element.key_type() == KeyType::Hash)
        .ok_or_else(|| malformed("a key schema without a partition key"))?;
    let mut schema = KeySchema::new(attribute(partition));
    if let Some(sort) = elements.iter().find(|element| *element.key_type() == KeyType::Range) {
        schema = schema.with_sort(attribute(sort));
    }
    Ok(schema)
}

/// Which write of a cancelled group failed, and why, from the reasons
/// DynamoDB gives one by one (`None` for the writes that did not fail).
fn cancelled(error: &aws_sdk_dynamodb::error::SdkError<TransactWriteItemsError>, general: Fault) -> GroupFault {
    let Some(TransactWriteItemsError::TransactionCanceledException(exception)) = error.as_service_error() else {
        return GroupFault { index: None, fault: general };
    };
    let failing = exception
        .cancellation_reasons()
        .iter()
        .enumerate()
        .find(|(_, reason)| reason.code().is_some_and(|code| code != "None"));
    let Some((index, reason)) = failing else {
        return GroupFault { index: None, fault: general };
    };
    let kind = match reason.code() {
        Some("ConditionalCheckFailed" | "TransactionConflict") => ResourceErrorKind::ConditionFailed,
        Some("ThrottlingError" | "ProvisionedThroughputExceeded") => ResourceErrorKind::Throttled,
        _ => ResourceErrorKind::Refused,
    };
    let message = format!(
        "the atomic group was cancelled: write {index} failed with {}{}",
        reason.code().unwrap_or_default(),
        reason.message().map(|message| format!(" ({message})")).unwrap_or_default()
    );
    GroupFault { index: Some(index), fault: Fault::new(kind, Some("TransactionCanceledException"), message) }
}

/// The backend's `$name` (put or delete): `$request` builds the write
/// as a transaction's member, whose item (or key), condition and
/// expression attributes the single write (`$operation`, its builder
/// another type with the same setters) is sent with.
macro_rules! conditional_write {
    ($name:ident, $item:ident, $request:ident, $operation:ident, $set:ident, $get:ident) => {
        fn $name<'a>(&'a self, $item: &'a Item, condition: Option<&'a Condition>) -> BoxFuture<'a, Result<(), Fault>> {
            Box::pin(async move {
                let built = self.$request($item, condition)?;
                let request = self
                    .client
                    .$operation()
                    .table_name(&self.table)
                    .$set(Some(built.$get().clone()))
                    .set_condition_expression(built.condition_expression().map(str::to_string))
                    .set_expression_attribute_names(built.expression_attribute_names().cloned())
                    .set_expression_attribute_values(built.expression_attribute_values().cloned());
                sent!(self, request)?;
                Ok(())
            })
        }
    };
}

impl Backend for DynamoDb {
    fn schema(&self) -> BoxFuture<'_, Result<TableSchema, Fault>> {
        Box::pin(async move {
            let output = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            let table = output.table().ok_or_else(|| malformed("no table description"))?;
            let kinds: HashMap<&str, KeyKind> = table
                .attribute_definitions()
                .iter()
                .map(|definition| {
                    let kind = match definition.attribute_type() {
                        ScalarAttributeType::N => KeyKind::Number,
                        ScalarAttributeType::B => KeyKind::Binary,
                        _ => KeyKind::String,
                    };
                    (definition.attribute_name(), kind)
                })
                .collect();
            let mut indexes = BTreeMap::new();
            let mut global = BTreeSet::new();
            for index in table.global_secondary_indexes() {
                if let Some(name) = index.index_name() {
                    indexes.insert(name.to_string(), key_schema(index.key_schema(), &kinds)?);
                    global.insert(name.to_string());
                }
            }
            for index in table.local_secondary_indexes() {
                if let Some(name) = index.index_name() {
                    indexes.insert(name.to_string(), key_schema(index.key_schema(), &kinds)?);
                }
            }
            Ok(TableSchema { table: key_schema(table.key_schema(), &kinds)?, indexes, global })
        })
    }

    fn get<'a>(&'a self, key: &'a Item, consistent: bool) -> BoxFuture<'a, Result<Option<Item>, Fault>> {
        Box::pin(async move {
            let output = self
                .client
                .get_item()
                .table_name(&self.table)
                .set_key(Some(attributes(key)))
                .consistent_read(consistent)
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            output.item().filter(|found| !found.is_empty()).map(item).transpose()
        })
    }

    conditional_write!(put, item_, put_request, put_item, set_item, item);

    conditional_write!(delete, key, delete_request, delete_item, set_key, key);

    fn update<'a>(&'a self, change: UpdateRequest<'a>) -> BoxFuture<'a, Result<Item, Fault>> {
        Box::pin(async move {
            let request = self.update_request(change.key, change.update, change.condition)?;
            let output = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(request.key().clone()))
                .update_expression(request.update_expression())
                .set_condition_expression(request.condition_expression().map(str::to_string))
                .set_expression_attribute_names(request.expression_attribute_names().cloned())
                .set_expression_attribute_values(request.expression_attribute_values().cloned())
                .return_values(ReturnValue::AllNew)
                .send()
                .await
                .map_err(|error| self.failed(&error))?;
            output.attributes().map(item).transpose()?.ok_or_else(|| malformed("no item after the update"))
        })
    }

    fn query<'a>(&'a self, request: &'a QueryRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        Box::pin(async move {
            let mut expressions = Expressions::new();
            let key = expressions.key_condition(request.partition, request.sort);
            let filter = request.filter.map(|filter| expressions.condition(filter));
            let call = self
                .client
                .query()
                .table_name(&self.table)
                .set_index_name(request.index.map(str::to_string))
                .key_condition_expression(key)
                .set_filter_expression(filter)
                .set_expression_attribute_names(expressions.names())
                .set_expression_attribute_values(expressions.values(to_attribute))
                .scan_index_forward(!request.descending)
                .consistent_read(request.consistent)
                .set_limit(request.limit.map(|limit| limit.min(i32::MAX as u32) as i32))
                .set_exclusive_start_key(request.start.as_ref().map(attributes));
            let output = sent!(self, call)?;
            Ok(RawPage { items: items(output.items())?, last: output.last_evaluated_key().map(item).transpose()? })
        })
    }

    fn scan<'a>(&'a self, request: &'a ScanRequest<'a>) -> BoxFuture<'a, Result<RawPage, Fault>> {
        Box::pin(async move {
            let mut expressions = Expressions::new();
            let filter = request.filter.map(|filter| expressions.condition(filter));
            let call = self
                .client
                .scan()
                .table_name(&self.table)
                .consistent_read(request.consistent)
                .set_filter_expression(filter)
                .set_expression_attribute_names(expressions.names())
                .set_expression_attribute_values(expressions.values(to_attribute))
                .set_limit(request.limit.map(|limit| limit.min(i32::MAX as u32) as i32))
                .set_exclusive_start_key(request.start.as_ref().map(attributes));
            let output = sent!(self, call)?;
            Ok(RawPage { items: items(output.items())?, last: output.last_evaluated_key().map(item).transpose()? })
        })
    }

    fn batch_get<'a>(&'a self, keys: &'a [Item], consistent: bool) -> BoxFuture<'a, Result<BatchRead, Fault>> {
        Box::pin(async move {
            let request = KeysAndAttributes::builder()
                .set_keys(Some(keys.iter().map(attributes).collect()))
                .consistent_read(consistent)
                .build()
                .map_err(unbuilt)?;
            let output = sent!(self, self.client.batch_get_item().request_items(&self.table, request))?;
            let found = match output.responses().and_then(|responses| responses.get(&self.table)) {
                Some(list) => items(list)?,
                None => Vec::new(),
            };
            let left = match output.unprocessed_keys().and_then(|left| left.get(&self.table)) {
                Some(left) => items(left.keys())?,
                None => Vec::new(),
            };
            Ok((found, left))
        })
    }

    fn batch_write<'a>(&'a self, writes: &'a [BatchWrite]) -> BoxFuture<'a, Result<Vec<BatchWrite>, Fault>> {
        Box::pin(async move {
            let mut requests = Vec::with_capacity(writes.len());
            for write in writes {
                requests.push(match write {
                    BatchWrite::Put(item_) => WriteRequest::builder()
                        .put_request(PutRequest::builder().set_item(Some(attributes(item_))).build().map_err(unbuilt)?)
                        .build(),
                    BatchWrite::Delete(key) => WriteRequest::builder()
                        .delete_request(
                            DeleteRequest::builder().set_key(Some(attributes(key))).build().map_err(unbuilt)?,
                        )
                        .build(),
                });
            }
            let output = sent!(self, self.client.batch_write_item().request_items(&self.table, requests))?;
            let mut left = Vec::new();
            for request in output.unprocessed_items().and_then(|left| left.get(&self.table)).into_iter().flatten() {
                if let Some(put) = request.put_request() {
                    left.push(BatchWrite::Put(item(put.item())?));
                } else if let Some(delete) = request.delete_request() {
                    left.push(BatchWrite::Delete(item(delete.key())?));
                }
            }
            Ok(left)
        })
    }

    fn transact<'a>(&'a self, writes: &'a [GroupWrite]) -> BoxFuture<'a, Result<(), GroupFault>> {
        Box::pin(async move {
            let mut items_ = Vec::with_capacity(writes.len());
            for (index, write) in writes.iter().enumerate() {
                items_.push(self.group_item(write).map_err(|fault| GroupFault { index: Some(index), fault })?);
            }
            self.client
                .transact_write_items()
                .set_transact_items(Some(items_))
                .send()
                .await
                .map_err(|error| cancelled(&error, self.failed(&error)))?;
            Ok(())
        })
    }
}
