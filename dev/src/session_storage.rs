//! Where the session's buckets and datastores live, so that `celerity-dev
//! run orders` needs no S3 or DynamoDB server on the machine.
//!
//! A blueprint that declares a `celerity/bucket` is served, in this order:
//!
//! 1. by the S3 API the environment names (`CELERITY_AWS_S3_ENDPOINT`),
//!    such as `celerity dev`'s MinIO: the handler inherits the variable and
//!    its SDK uses it;
//! 2. else by folders on disk, one per bucket, in the session's data folder,
//!    given to the handler as `CELERITY_LOCAL_BUCKET_DIR`.
//!
//! A `celerity/datastore` likewise: the DynamoDB API the environment names
//! (`CELERITY_AWS_DYNAMODB_ENDPOINT`), such as DynamoDB Local, else a file per datastore in the session's data folder
//! (`CELERITY_LOCAL_DATASTORE_DIR`). The SDK keeps a datastore's items
//! there, by the keys the blueprint declares for it.
//!
//! The data folder is `CELERITY_DEV_DATA_DIR`, else `celerity-dev/<binary>`
//! under the system's temporary folder: out of the application's sources,
//! and kept from one run to the next, so that what a run stored is there
//! to look at and to read again. Which of the two serves each kind is said
//! once at the start.

use std::path::{Path, PathBuf};

use crate::config::App;
use crate::log;
use crate::session_server::linked;

/// Names the folder the stand-ins keep their data in.
pub const ENV_DATA_DIR: &str = "CELERITY_DEV_DATA_DIR";
/// The folder of the buckets' folders, which the SDK reads.
pub const ENV_BUCKET_DIR: &str = "CELERITY_LOCAL_BUCKET_DIR";
/// The folder of the datastores' files, which the SDK reads.
pub const ENV_DATASTORE_DIR: &str = "CELERITY_LOCAL_DATASTORE_DIR";

/// A kind of resource served either by a named API or by a folder.
struct Kind {
    /// Its name in the links file.
    link: &'static str,
    /// The plural the log uses.
    plural: &'static str,
    /// The API it is served by, as the log names it.
    api: &'static str,
    /// The variable that names that API's endpoint in a local session.
    /// Only the kind's own: `AWS_ENDPOINT_URL` names where AWS is, which a
    /// local session's SDK does not read for its buckets and datastores.
    endpoint: &'static str,
    /// The variable giving the handler the stand-in's folder.
    folder_env: &'static str,
    /// The stand-in's folder, under the data folder.
    folder: &'static str,
}

const BUCKETS: Kind = Kind {
    link: "bucket",
    plural: "buckets",
    api: "S3",
    endpoint: "CELERITY_AWS_S3_ENDPOINT",
    folder_env: ENV_BUCKET_DIR,
    folder: "buckets",
};

const DATASTORES: Kind = Kind {
    link: "datastore",
    plural: "datastores",
    api: "DynamoDB",
    endpoint: "CELERITY_AWS_DYNAMODB_ENDPOINT",
    folder_env: ENV_DATASTORE_DIR,
    folder: "datastores",
};

/// How one kind is served.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Served {
    /// By the API at the endpoint the variable names.
    Api { variable: &'static str, endpoint: String },
    /// By the stand-in, in this folder.
    Folder(PathBuf),
}

/// What the handler's environment gets for the session's buckets and
/// datastores.
pub struct SessionStorage {
    env: Vec<(&'static str, String)>,
}

impl SessionStorage {
    /// The variables the handler is started with.
    pub fn handler_env(&self) -> Vec<(&'static str, String)> {
        self.env.clone()
    }
}

/// Decides how `kind` is served, from the variables `var` reads, with the
/// data folder `data`.
fn serve(kind: &Kind, var: &dyn Fn(&str) -> Option<String>, data: &Path) -> Served {
    match var(kind.endpoint) {
        Some(endpoint) => Served::Api { variable: kind.endpoint, endpoint },
        None => Served::Folder(data.join(kind.folder)),
    }
}

/// The session's data folder.
fn data_dir(var: &dyn Fn(&str) -> Option<String>, binary: &Path) -> PathBuf {
    match var(ENV_DATA_DIR) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let name = binary.file_stem().map(|stem| stem.to_string_lossy().into_owned());
            std::env::temp_dir().join("celerity-dev").join(name.unwrap_or_else(|| "app".to_owned()))
        }
    }
}

/// Serves `app`'s buckets and datastores, run from `binary`: says on the
/// log how each kind is served, and makes the folders of those the
/// stand-ins serve (a bucket's folder is the bucket, so it exists before
/// the handler writes to it). Fails when a folder cannot be made.
pub fn open(app: &App, binary: &Path) -> Result<SessionStorage, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let data = data_dir(&var, binary);
    let mut env = Vec::new();
    for kind in [&BUCKETS, &DATASTORES] {
        let names = linked(app, kind.link);
        if names.is_empty() {
            continue;
        }
        let names = names.join(", ");
        match serve(kind, &var, &data) {
            Served::Api { variable, endpoint } => log::line(&format!(
                "the {} {names}: the {} API at {endpoint} that {variable} names",
                kind.plural, kind.api
            )),
            Served::Folder(folder) => {
                let make = |dir: &Path| {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("could not make {} for the {} {names}: {e}", dir.display(), kind.plural))
                };
                make(&folder)?;
                if kind.link == BUCKETS.link {
                    let buckets = app.resources.links.iter().filter(|link| link.kind == kind.link);
                    for bucket in buckets {
                        make(&folder.join(&bucket.config_key))?;
                    }
                }
                log::line(&format!(
                    "the {} {names}: kept in {} ({} names no {} API; set it to use one)",
                    kind.plural,
                    folder.display(),
                    kind.endpoint,
                    kind.api
                ));
                env.push((kind.folder_env, folder.display().to_string()));
            }
        }
    }
    Ok(SessionStorage { env })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
    }

    #[test]
    fn the_kinds_own_api_is_used_before_the_stand_in() {
        let data = Path::new("/data");
        let own = reading(&[("CELERITY_AWS_S3_ENDPOINT", "http://minio:9000"), ("AWS_ENDPOINT_URL", "http://aws")]);
        assert_eq!(
            serve(&BUCKETS, &own, data),
            Served::Api { variable: "CELERITY_AWS_S3_ENDPOINT", endpoint: "http://minio:9000".into() }
        );
        let shared = reading(&[("AWS_ENDPOINT_URL", "http://aws")]);
        assert_eq!(serve(&DATASTORES, &shared, data), Served::Folder(PathBuf::from("/data/datastores")));
        assert_eq!(serve(&DATASTORES, &reading(&[]), data), Served::Folder(PathBuf::from("/data/datastores")));
        assert_eq!(serve(&BUCKETS, &reading(&[]), data), Served::Folder(PathBuf::from("/data/buckets")));
    }

    #[test]
    fn the_data_folder_is_named_or_the_binarys_own_under_the_temporary_folder() {
        let binary = Path::new("/work/target/debug/orders");
        assert_eq!(data_dir(&reading(&[(ENV_DATA_DIR, "/here")]), binary), PathBuf::from("/here"));
        assert_eq!(data_dir(&reading(&[]), binary), std::env::temp_dir().join("celerity-dev").join("orders"));
    }
}
