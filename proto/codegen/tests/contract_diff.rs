//! Our `proto/runtime.proto` must be wire-identical to the shared contract.

use std::path::{Path, PathBuf};

use celerity_proto_codegen::{compare, compile_descriptors, proto_crate_dir};

/// `<workspace root>/../shared/contract/runtime.proto`, relative to this
/// crate (`<workspace root>/proto/codegen`), so it works wherever the
/// repository is cloned with `shared/` beside it.
fn contract_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/contract/runtime.proto")
}

#[test]
fn runtime_proto_matches_the_contract() {
    let contract = contract_file();
    if !contract.is_file() {
        eprintln!(
            "NOTE: contract diff check SKIPPED: {} not found (the shared contract is expected \
             beside the repository, at <workspace root>/../shared/contract/runtime.proto)",
            contract.display()
        );
        return;
    }
    let contract_dir = contract.parent().expect("contract path has a parent");
    let theirs = compile_descriptors(contract_dir, "runtime.proto", false)
        .expect("the contract's runtime.proto does not compile");
    let ours =
        compile_descriptors(&proto_crate_dir(), "runtime.proto", false).expect("proto/runtime.proto does not compile");

    // Guard against comparing two empty sets.
    let items = compare::flatten(&theirs);
    assert!(
        items.keys().any(|item| item == "message .celerity.runtime.v1.RuntimeMessage"),
        "the contract did not compile to the expected package"
    );

    let differences = compare::diff(&ours, &theirs);
    assert!(
        differences.is_empty(),
        "proto/runtime.proto is not wire-identical to {} ({} difference(s)):\n  - {}",
        contract.display(),
        differences.len(),
        differences.join("\n  - ")
    );
}
