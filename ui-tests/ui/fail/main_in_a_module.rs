mod server {
    #[celerity::main]
    pub async fn main() {}
}

fn main() {}
