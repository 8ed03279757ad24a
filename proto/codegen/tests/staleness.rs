//! The checked-in generated code must match what the generator produces now.

use std::fs;

#[test]
fn checked_in_generated_code_is_up_to_date() {
    let dir = celerity_proto_codegen::generated_dir();
    let mut stale = Vec::new();
    for (name, expected) in celerity_proto_codegen::generate().expect("code generation failed") {
        let path = dir.join(&name);
        match fs::read_to_string(&path) {
            Ok(actual) if actual == expected => {}
            Ok(_) => stale.push(format!("{name} differs from the generator's output")),
            Err(err) => stale.push(format!("{name} cannot be read ({}): {err}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "generated code under proto/src/generated/ is stale:\n  {}\n\
         run `cargo run -p celerity-proto-codegen` and commit the result",
        stale.join("\n  ")
    );
}

#[test]
fn generation_is_deterministic() {
    let first = celerity_proto_codegen::generate().expect("code generation failed");
    let second = celerity_proto_codegen::generate().expect("code generation failed");
    assert_eq!(first, second);
}

#[test]
fn generated_code_has_no_build_script_output() {
    for (name, contents) in celerity_proto_codegen::generate().expect("code generation failed") {
        assert!(!contents.contains("cargo:"), "{name} contains cargo: directives");
    }
}
