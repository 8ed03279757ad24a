//! Which backend serves a datastore, by the deployment's platform.

use std::path::PathBuf;
use std::sync::Arc;

use super::backend::Backend;
use super::key::{KeyAttribute, KeyKind, KeySchema, TableSchema};
use super::{Resolved, dynamodb, memory};
use crate::config::Platform;
use crate::resources::ResourceRef;
use crate::resources::error::{Fault, ResourceErrorKind};

/// Resolves the datastore `resource` names, by its platform.
pub(super) async fn resolve(resource: &ResourceRef) -> Result<Resolved, Fault> {
    let deployment = resource.deployment();
    let platform = deployment.platform;
    let table = resource.identifier().await?;
    let endpoint = deployment.endpoints.dynamodb.clone();
    let backend: Arc<dyn Backend> = match platform {
        Platform::Aws => {
            let region = resource.setting("_region").await?;
            Arc::new(dynamodb::DynamoDb::new(table.clone(), endpoint.as_deref(), region, false).await)
        }
        Platform::Local => match (&endpoint, &deployment.endpoints.datastore_dir) {
            (None, Some(folder)) => {
                let schema = local_schema(resource).await?;
                let path = PathBuf::from(folder).join(format!("{}.json", file_name(&table)));
                let table_in_file = memory::MemoryTable::in_file(schema.clone(), path)?;
                return Ok(Resolved { table, backend: table_in_file, schema });
            }
            _ => {
                let endpoint = endpoint.as_deref().unwrap_or(dynamodb::DEFAULT_LOCAL_ENDPOINT);
                Arc::new(dynamodb::DynamoDb::new(table.clone(), Some(endpoint), None, true).await)
            }
        },
        other => {
            return Err(Fault::unsupported(format!(
                "datastores are served on `aws` and in a `local` session, and the deployment's platform is \
                 `{other}` (CELERITY_PLATFORM)"
            )));
        }
    };
    let schema = backend.schema().await?;
    Ok(Resolved { table, backend, schema })
}

/// A table name as a file name: characters a file name cannot hold are
/// replaced.
fn file_name(table: &str) -> String {
    table.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect()
}

/// The key schema a local session's file-kept table is read and written
/// by, as the deployment recorded it.
async fn local_schema(resource: &ResourceRef) -> Result<TableSchema, Fault> {
    let kind = |setting: Option<String>| match setting.as_deref() {
        None | Some("S") => Ok(KeyKind::String),
        Some("N") => Ok(KeyKind::Number),
        Some("B") => Ok(KeyKind::Binary),
        Some(other) => Err(Fault::new(
            ResourceErrorKind::Config,
            None,
            format!("a key type is `S`, `N` or `B`, and the deployment recorded `{other}`"),
        )),
    };
    let partition = resource.required_setting("_partitionKey").await?;
    let partition_kind = kind(resource.setting("_partitionKeyType").await?)?;
    let mut schema = KeySchema::new(KeyAttribute::new(partition, partition_kind));
    if let Some(sort) = resource.setting("_sortKey").await? {
        schema = schema.with_sort(KeyAttribute::new(sort, kind(resource.setting("_sortKeyType").await?)?));
    }
    Ok(TableSchema { table: schema, indexes: Default::default(), global: Default::default() })
}
