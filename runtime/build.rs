//! Names for sets of features that several modules are compiled under, so
//! that each set is written once: `#[cfg(resource_operations)]` for any
//! resource kind with operations of its own, `#[cfg(messaging)]` for a
//! queue or a topic, `#[cfg(session_redis)]` for any kind held in a local
//! session's Redis, `#[cfg(sql)]` for any SQL engine.

fn main() {
    // Features are part of what reruns a build script; nothing else is read.
    println!("cargo::rerun-if-changed=build.rs");
    let enabled = |feature: &str| {
        std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase().replace('-', "_"))).is_some()
    };
    let aliases: [(&str, &[&str]); 4] = [
        ("messaging", &["queue", "topic"]),
        ("resource_operations", &["queue", "topic", "cache", "sql-postgres", "sql-mysql", "bucket", "datastore"]),
        ("session_redis", &["queue", "topic", "cache"]),
        ("sql", &["sql-postgres", "sql-mysql"]),
    ];
    for (alias, features) in aliases {
        println!("cargo::rustc-check-cfg=cfg({alias})");
        if features.iter().any(|feature| enabled(feature)) {
            println!("cargo::rustc-cfg={alias}");
        }
    }
}
