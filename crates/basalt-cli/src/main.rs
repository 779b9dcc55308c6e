//! `basalt`: one command for the tour, the benchmarks, traces and the simulator.

mod args;
mod bench;
mod bench_bootstrap;
mod calibrate;
mod compare;
mod keys_cmd;
mod progress_bar;
mod security;
mod sim;
mod tour;
mod trace_cmd;
mod workload;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "basalt",
    version,
    about = "Fast encrypted computing: CKKS, TFHE and accelerator models"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The newcomer's tour: real encrypted computations, checked against plaintext, timed.
    Tour(tour::TourArgs),
    /// Benchmarks, printed as JSON lines (one object per measurement).
    Bench(Box<bench::BenchArgs>),
    /// Accelerator models: reproduce the papers' tables, time traces.
    Sim(sim::SimArgs),
    /// Record a CKKS program in trace mode and print its kernel stream (JSON).
    Trace(trace_cmd::TraceArgs),
    /// Estimated security of every preset (lattice estimator); `--markdown` writes docs/security.md.
    Security(security::SecurityArgs),
    /// The papers' workloads run for real on real data: accuracy, precision, time, keys.
    Workload(workload::WorkloadArgs),
    /// Bytes of every key type of a CKKS preset, full and seeded, as serialized.
    Keys(keys_cmd::KeysArgs),
}

/// Die quietly on a closed pipe (`basalt trace … | head`), as other command-line tools do,
/// instead of panicking in `println!`: Rust's runtime ignores SIGPIPE, so a write to a closed
/// pipe returns an error that `println!` turns into a panic.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: `signal` with `SIG_DFL` only restores the default disposition of SIGPIPE; it is
    // called once, before any other thread exists, and installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() {
    default_sigpipe();
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Tour(a) => tour::run(&a),
        Cmd::Bench(a) => bench::run(&a),
        Cmd::Sim(a) => sim::run(&a),
        Cmd::Trace(a) => trace_cmd::run(&a),
        Cmd::Security(a) => security::run(&a),
        Cmd::Workload(a) => workload::run(&a),
        Cmd::Keys(a) => keys_cmd::run(&a),
    };
    if let Err(e) = result {
        eprintln!("basalt: {e}");
        std::process::exit(1);
    }
}
