//! The blueprint's datastore and bucket for a test's `orders` process,
//! shared by the tests that run it under the test kit's runtime
//! ([`super::Service`]) and those that run it as Lambda functions
//! (`tests/lambda.rs`).

use std::path::{Path, PathBuf};

/// The blueprint's datastore and bucket, as `celerity-dev run` gives them to
/// the handler when no DynamoDB or S3 is named: a local session
/// (`CELERITY_PLATFORM=local`) whose resource links name `ordersStore` and
/// `receiptsBucket`, its `resources` store (a file) recording their names
/// and the datastore's key, the datastore a JSON file in one folder and the
/// bucket a folder in another. All of it in a temporary folder of the
/// test's own.
pub struct Storage {
    dir: tempfile::TempDir,
}

impl Storage {
    /// Makes the folders and the resources store.
    pub fn new() -> Storage {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let storage = Storage { dir };
        std::fs::create_dir_all(storage.bucket()).expect("make the bucket's folder");
        std::fs::create_dir_all(storage.datastores()).expect("make the datastores' folder");
        let resources = serde_json::json!({
            "ordersStore": "ordersStore",
            "ordersStore_partitionKey": "id",
            "ordersStore_partitionKeyType": "S",
            "receiptsBucket": "receiptsBucket",
        });
        std::fs::write(storage.resources_store(), resources.to_string()).expect("write the resources store");
        storage
    }

    fn resources_store(&self) -> PathBuf {
        self.dir.path().join("resources.json")
    }

    fn buckets(&self) -> PathBuf {
        self.dir.path().join("buckets")
    }

    fn datastores(&self) -> PathBuf {
        self.dir.path().join("datastores")
    }

    /// The folder that is the bucket `receiptsBucket`.
    pub fn bucket(&self) -> PathBuf {
        self.buckets().join("receiptsBucket")
    }

    /// The file that is the datastore `ordersStore`.
    pub fn datastore_file(&self) -> PathBuf {
        self.datastores().join("ordersStore.json")
    }

    /// The variables that would name a real S3 or DynamoDB instead of the
    /// folders, which a process given [`Storage::env`] must not inherit
    /// from the test's own environment, for `env_remove`.
    pub fn unset() -> &'static [&'static str] {
        &["CELERITY_AWS_S3_ENDPOINT", "CELERITY_AWS_DYNAMODB_ENDPOINT"]
    }

    /// The environment that gives them to the process.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let links = serde_json::json!({
            "ordersStore": {"type": "datastore", "configKey": "ordersStore"},
            "receiptsBucket": {"type": "bucket", "configKey": "receiptsBucket"},
        });
        let path = |path: &Path| path.display().to_string();
        vec![
            ("CELERITY_PLATFORM", "local".to_string()),
            ("CELERITY_RESOURCE_LINKS", links.to_string()),
            ("CELERITY_CONFIG_RESOURCES_STORE_ID", path(&self.resources_store())),
            ("CELERITY_CONFIG_RESOURCES_STORE_KIND", "file".to_string()),
            ("CELERITY_LOCAL_DATASTORE_DIR", path(&self.datastores())),
            ("CELERITY_LOCAL_BUCKET_DIR", path(&self.buckets())),
        ]
    }

    /// The order `id` as the datastore's file holds it, in DynamoDB's
    /// tagged JSON (`{"id": {"S": "ord-1"}, ...}`); `None` where it holds
    /// no such order.
    pub fn stored_order(&self, id: &str) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(self.datastore_file()).ok()?;
        let table: serde_json::Value = serde_json::from_str(&text).expect("the datastore's file is JSON");
        let items = table["items"].as_array().expect("the file's items");
        items.iter().find(|item| item["id"]["S"] == id).cloned()
    }

    /// The text of the receipt of order `id` (the object
    /// `receipts/<id>.txt`) in the bucket's folder, if there is one.
    ///
    /// The folder bucket keeps an object as one file named by its key,
    /// percent-encoded (`receipts%2Ford-1%2Etxt`), holding the content, then
    /// what it knows of the object as JSON, then that JSON's length as 8
    /// bytes, big-endian; the JSON is checked to name the key and the
    /// receipt's content type.
    pub fn receipt(&self, id: &str) -> Option<String> {
        let key = format!("receipts/{id}.txt");
        let name = key.replace('/', "%2F").replace('.', "%2E");
        let file = std::fs::read(self.bucket().join(name)).ok()?;
        let (rest, length) = file.split_at(file.len().checked_sub(8).expect("a trailer"));
        let length = u64::from_be_bytes(length.try_into().expect("8 bytes"));
        let length = usize::try_from(length).expect("a header's length");
        let (content, header) = rest.split_at(rest.len().checked_sub(length).expect("a header"));
        let header: serde_json::Value = serde_json::from_slice(header).expect("the object's header is JSON");
        assert_eq!(header["key"], key.as_str(), "{header}");
        assert_eq!(header["contentType"], "text/plain; charset=utf-8", "{header}");
        Some(String::from_utf8(content.to_vec()).expect("the receipt is text"))
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage::new()
    }
}
