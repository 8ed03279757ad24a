#[celerity::main]
struct App;

fn main() {
    let _ = App;
}
