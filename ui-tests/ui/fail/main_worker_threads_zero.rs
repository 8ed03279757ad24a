#[celerity::main(worker_threads = 0)]
async fn main() {}
