//! Which platform started the process: the Celerity runtime, or AWS Lambda.

/// Where the process serves its handlers, read from its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Platform {
    /// The Celerity runtime, over the handler IPC protocol: when
    /// `CELERITY_RUNTIME_SOCKET` is set, and whenever Lambda is not recognised
    /// (the default socket, and its error when nothing serves there).
    Runtime,
    /// AWS Lambda: `AWS_LAMBDA_RUNTIME_API` set and no runtime socket.
    Lambda,
}

/// The platform `lookup` (a variable name to its value) describes. A socket
/// named for the runtime wins: a Celerity runtime started inside a Lambda
/// sandbox still serves its handlers itself.
pub(crate) fn detect(lookup: impl Fn(&str) -> Option<String>) -> Platform {
    let set = |name: &str| lookup(name).is_some_and(|value| !value.is_empty());
    if !set("CELERITY_RUNTIME_SOCKET") && set("AWS_LAMBDA_RUNTIME_API") { Platform::Lambda } else { Platform::Runtime }
}

/// Why a binary built without Lambda support cannot serve there.
#[cfg(not(feature = "aws-lambda"))]
pub(crate) const WITHOUT_FEATURE: &str = "AWS_LAMBDA_RUNTIME_API is set and CELERITY_RUNTIME_SOCKET is not, so this \
     process runs on AWS Lambda, but it was built without Lambda support: enable the `aws-lambda` feature of the \
     `celerity` crate (celerity = { version = \"...\", features = [\"aws-lambda\"] }) and build again";

#[cfg(test)]
mod tests {
    use super::*;

    fn platform(env: &[(&str, &str)]) -> Platform {
        detect(|name| env.iter().find(|(n, _)| *n == name).map(|(_, value)| value.to_string()))
    }

    #[test]
    fn the_runtime_socket_wins_and_lambda_needs_its_api() {
        assert_eq!(platform(&[]), Platform::Runtime);
        assert_eq!(platform(&[("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")]), Platform::Lambda);
        assert_eq!(
            platform(&[("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"), ("CELERITY_RUNTIME_SOCKET", "/tmp/r.sock")]),
            Platform::Runtime
        );
        assert_eq!(platform(&[("AWS_LAMBDA_RUNTIME_API", "")]), Platform::Runtime);
    }
}
