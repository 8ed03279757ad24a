//! The versions this SDK declares.

/// The major version of the handler IPC protocol this SDK speaks.
pub const PROTOCOL_MAJOR: u32 = 1;
/// The minor version of the handler IPC protocol this SDK speaks.
pub const PROTOCOL_MINOR: u32 = 0;
/// This SDK's version, declared in `Ready.sdk_version`.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");
