#[celerity::main]
async fn main(port: u16) -> celerity::Result<()> {
    let _ = port;
    Ok(())
}
