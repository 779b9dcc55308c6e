//! NN-20/50/100 with one PBS per ReLU: accuracy, agreement, CPU and Strix-model times as JSON.
//!
//! `cargo run --release -p basalt-workloads --example tfhe_nn -- nn-20 [--quick] [--threads T]
//!  [--images K|all] [--sizes 1024,2048,4096] [--no-timing] [--quiet]`
//!
//! Progress (keys, each image, each timing run) goes to stderr unless `--quiet`.

use basalt_workloads::tfhe_nn::{NnOptions, run_with};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get =
        |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let name = args.first().cloned().unwrap_or_else(|| "nn-20".into());
    let opts = NnOptions {
        quick: args.iter().any(|a| a == "--quick"),
        threads: get("--threads").map(|t| t.parse().expect("--threads takes an integer")),
        images: get("--images")
            .map(|v| if v == "all" { usize::MAX } else { v.parse().expect("--images") }),
        sizes: get("--sizes").map(|v| v.split(',').map(|s| s.parse().expect("--sizes")).collect()),
        timing: !args.iter().any(|a| a == "--no-timing"),
        progress: !args.iter().any(|a| a == "--quiet"),
    };
    match run_with(&name, &opts) {
        Ok(v) => println!("{}", serde_json::to_string(&v).expect("json")),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
