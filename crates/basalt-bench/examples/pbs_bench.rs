//! Measure PBS on one parameter set and print JSON lines (one per measurement).
//!
//! ```text
//! cargo run --release -p basalt-bench --example pbs_bench -- --set TFHERS_2_2_KS_PBS \
//!     [--threads 1,2] [--counts 1,8,64,512] [--reps 20] [--failure-trials 10000] \
//!     [--core-batch B] [--no-stages] [--allow-insecure] [--latency-only] [--noise]
//! ```
//!
//! `--noise` prints the noise model's report only (no keys); `--failure-trials N` adds a measured
//! failure rate over N encrypt → LUT → decrypt trials (use ≥ 10,000 for sets I–III, 1,000 for IV).

use basalt_bench::tfhe::{BenchOptions, run_pbs_bench_with};
use basalt_tfhe::TfheParams;

fn list(s: &str) -> Vec<usize> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut set = "TFHERS_2_2_KS_PBS".to_string();
    let mut opts = BenchOptions::default();
    let mut allow_insecure = false;
    let mut noise_only = false;
    let mut i = 0;
    while i < args.len() {
        let next = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--set" => set = next,
            "--threads" => opts.threads = list(&next),
            "--counts" => opts.counts = list(&next),
            "--reps" => opts.latency_reps = next.parse().unwrap_or(20),
            "--failure-trials" => opts.failure_trials = next.parse().unwrap_or(0),
            "--core-batch" => opts.core_batch = next.parse().ok(),
            "--no-stages" => {
                opts.stages = false;
                i += 1;
                continue;
            }
            "--noise" => {
                noise_only = true;
                i += 1;
                continue;
            }
            "--latency-only" => {
                opts.counts.clear();
                i += 1;
                continue;
            }
            "--allow-insecure" => {
                allow_insecure = true;
                i += 1;
                continue;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let params = match TfheParams::preset(&set, allow_insecure) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if noise_only {
        let r = basalt_tfhe::noise::estimate(&params);
        println!("{}", serde_json::to_string(&r).expect("report serialises"));
        return;
    }
    let mut sink = |r: &basalt_bench::tfhe::BenchRecord| {
        println!("{}", serde_json::to_string(r).expect("record serialises"));
    };
    if let Err(e) = run_pbs_bench_with(&params, &opts, &mut sink) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
