#[celerity::main]
async fn main() {}

#[celerity::main]
async fn serve() {}
