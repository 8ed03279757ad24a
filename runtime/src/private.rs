//! Items the attribute macros' generated code uses. Not a public API.
