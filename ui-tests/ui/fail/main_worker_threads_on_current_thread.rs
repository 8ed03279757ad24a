#[celerity::main(flavor = "current_thread", worker_threads = 2)]
async fn main() {}
