#[celerity::main]
async fn main() -> u8 {
    0
}
