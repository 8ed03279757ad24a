#[celerity::main(flavour = "current_thread")]
async fn main() {}
