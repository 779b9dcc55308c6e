//! Time CKKS operations of a preset and print one JSON line per measurement.
//!
//! ```text
//! cargo run --release -p basalt-ckks --example ckks_bench -- \
//!     --preset LATTIGO_RESIDUAL --threads 1,2 --reps 5 [--level 9] [--variant hybrid|reordered] \
//!     [--seeded] [--ops ntt,mul_relin,rescale,rotate,rotate_hoisted_8]
//! ```

use basalt_ckks::KsVariant;
use basalt_ckks::bench::{self, BenchConfig, BenchOp};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = BenchConfig::default();
    let mut threads = vec![1usize];
    let mut i = 0;
    let value = |i: usize| -> &str {
        args.get(i + 1).map(String::as_str).unwrap_or_else(|| {
            eprintln!("missing value for {}", args[i]);
            std::process::exit(2)
        })
    };
    while i < args.len() {
        match args[i].as_str() {
            "--preset" => cfg.preset = value(i).to_string(),
            "--level" => cfg.level = value(i).parse().ok(),
            "--reps" => cfg.reps = value(i).parse().unwrap_or(5),
            "--threads" => threads = value(i).split(',').filter_map(|t| t.parse().ok()).collect(),
            "--variant" => {
                cfg.variant = match value(i) {
                    "reordered" => KsVariant::Reordered,
                    _ => KsVariant::Hybrid,
                }
            }
            "--ops" => cfg.ops = value(i).split(',').filter_map(BenchOp::parse).collect(),
            "--seeded" => {
                cfg.seeded = true;
                i += 1;
                continue;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2)
            }
        }
        i += 2;
    }
    for t in threads {
        cfg.threads = t;
        match bench::run(&cfg) {
            Ok(recs) => {
                for r in recs {
                    println!("{}", serde_json::to_string(&r).expect("records serialize"));
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1)
            }
        }
    }
}
