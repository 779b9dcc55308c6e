//! `basalt`: one command for the tour, benchmarks, traces and the simulator.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "basalt", version, about = "Fast encrypted computing: CKKS, TFHE and accelerator models")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The newcomer's tour: real encrypted computations, checked against plaintext.
    Tour,
}

fn main() {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Tour => println!("basalt tour: nothing to show yet"),
    }
}
