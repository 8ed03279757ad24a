#[celerity::main]
fn main() -> celerity::Result<()> {
    Ok(())
}
