//! The `orders` binary: serves [`orders::app`], the application the
//! library builds, to the Celerity runtime (or, built with `aws-lambda`, on
//! AWS Lambda). `orders --manifest` prints its handler manifest as JSON
//! instead.

/// Serves the application `orders::app` builds. Returning the `App` lets
/// `#[celerity::main]` serve it.
#[celerity::main]
async fn main() -> celerity::App {
    orders::app()
}
