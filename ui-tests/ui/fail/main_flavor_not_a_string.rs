#[celerity::main(flavor = current_thread)]
async fn main() {}
