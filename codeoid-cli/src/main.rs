//! The `codeoid` command-line tool.

fn main() {
    println!("codeoid {}", env!("CARGO_PKG_VERSION"));
}
