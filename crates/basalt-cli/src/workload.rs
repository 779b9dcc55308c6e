//! `basalt workload`: list the papers' workloads and run one for real on real data.
//!
//! ```text
//! basalt workload list
//! basalt workload run helr --quick              # toy ring, seconds
//! basalt workload run lola --json >> runs.jsonl # full size at Osiris' Set I
//! basalt workload run resnet20 --allow-insecure --images 2   # the first two test images
//! ```

use clap::{Args, Subcommand};
use serde_json::Value;

use basalt_workloads::registry::{self, RunOptions};

#[derive(Args)]
pub struct WorkloadArgs {
    #[command(subcommand)]
    cmd: WorkloadCmd,
}

#[derive(Subcommand)]
enum WorkloadCmd {
    /// The workloads, their papers and full-size presets.
    List {
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run a workload encrypted and in the clear; print accuracy, precision, time, keys.
    Run {
        /// A name from `basalt workload list`.
        name: String,
        /// A CKKS preset (default: the workload's paper's; the toy ring with --quick); for the
        /// TFHE networks (nn-20, nn-50, nn-100) one of NN_N1024, NN_N2048, NN_N4096 (default: all three).
        #[arg(long)]
        preset: Option<String>,
        /// Insecure toy ring and a few inputs: seconds (what CI runs).
        #[arg(long)]
        quick: bool,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print the JSON record (one line) instead of a summary.
        #[arg(long)]
        json: bool,
        /// Accept a preset estimated below 128-bit security (`basalt security` lists them).
        #[arg(long)]
        allow_insecure: bool,
        /// Run even when the memory estimate exceeds the memory available.
        #[arg(long)]
        force: bool,
        /// Encrypted images (inputs) to run, the first of the test split (default: the
        /// workload's own count).
        #[arg(long)]
        images: Option<usize>,
    },
}

pub fn run(a: &WorkloadArgs) -> Result<(), String> {
    match &a.cmd {
        WorkloadCmd::List { json } => {
            for w in registry::list() {
                if *json {
                    println!("{}", serde_json::to_string(&w).map_err(|e| e.to_string())?);
                } else {
                    println!("{:<8} {:<26} {}", w.name, w.preset, w.description);
                }
            }
            Ok(())
        }
        WorkloadCmd::Run { name, preset, quick, threads, json, allow_insecure, force, images } => {
            if *threads == Some(0) {
                return Err("--threads must be at least 1".into());
            }
            if *images == Some(0) {
                return Err("--images must be at least 1".into());
            }
            let opts = RunOptions {
                preset: preset.clone(),
                quick: *quick,
                threads: *threads,
                progress: !*json || std::io::IsTerminal::is_terminal(&std::io::stderr()),
                allow_insecure: *allow_insecure,
                force: *force,
                images: *images,
            };
            let mut record = registry::run(name, &opts).map_err(|e| e.to_string())?;
            // The TFHE networks' Strix time: a simulator figure, added above the workloads.
            basalt_repro::strix_nn::annotate(name, &mut record)?;
            if *json {
                println!("{record}");
            } else {
                print_summary(&record);
            }
            Ok(())
        }
    }
}

/// The record as a few readable lines.
fn print_summary(r: &Value) {
    println!("{} ({})", r["workload"].as_str().unwrap_or("?"), r["paper"].as_str().unwrap_or(""));
    // The TFHE networks run at several parameter sets: one record per set under `sizes`.
    if let Some(sizes) = r.get("sizes").and_then(Value::as_array) {
        print_sizes_summary(r, sizes);
        return;
    }
    let f = |k: &str| r.get(k).and_then(Value::as_f64);
    let pct = |k: &str| r["accuracy"].get(k).and_then(Value::as_f64).map(|v| 100.0 * v);
    println!(
        "  preset {} (N = 2^{}, ~{:.0}-bit security estimate){}",
        r["preset"].as_str().unwrap_or("?"),
        r["log_n"],
        r["security"]["estimated_bits"].as_f64().unwrap_or(0.0),
        if r["security"]["meets_128"].as_bool() == Some(true) {
            ""
        } else {
            ": insecure, a test ring"
        }
    );
    println!("  data: {}", r["data"].as_str().unwrap_or("?"));
    match (pct("plaintext"), pct("encrypted"), pct("agreement")) {
        (Some(p), Some(e), Some(a)) => {
            println!("  accuracy: plaintext {p:.2} %, encrypted {e:.2} %, agreement {a:.2} %");
        }
        (_, _, Some(a)) => println!("  agreement with the plaintext twin: {a:.2} %"),
        _ => {}
    }
    if let Some(w) = r.get("weights").and_then(Value::as_str) {
        println!("  weights: {w}");
    }
    if let Some(b) = f("precision_bits") {
        println!("  precision against the plaintext twin: {b:.1} bits");
    }
    println!(
        "  bootstraps {}, evaluation keys {:.1} MB, {} thread(s), wall {:.2} s",
        r["bootstraps"],
        f("key_bytes").unwrap_or(0.0) / 1e6,
        r["threads"],
        f("wall_s").unwrap_or(0.0)
    );
    for k in ["per_image_s", "per_iteration_s", "sort_s", "setup_s"] {
        if let Some(v) = f(k) {
            println!("  {k}: {v:.3}");
        }
    }
}

/// The TFHE networks' record: the network, then one block per parameter set with its
/// estimated security, its agreement with the plaintext twin and its time per image.
fn print_sizes_summary(r: &Value, sizes: &[Value]) {
    let pct = |v: &Value| v.as_f64().map_or("?".to_string(), |x| format!("{:.2} %", 100.0 * x));
    println!(
        "  network {} ({} layers, {} bootstraps per inference)",
        r["network"].as_str().unwrap_or("?"),
        r["layers"],
        r["pbs_per_inference"]
    );
    println!("  data: {}", r["data"].as_str().unwrap_or("?"));
    println!(
        "  plaintext accuracy {} on {} test images",
        pct(&r["plaintext_accuracy"]),
        r["plaintext_test_images"]
    );
    for s in sizes {
        let sec = &s["security"];
        println!(
            "  set {} (N = {}, k = {}, n = {}): ~{:.0}-bit security estimate{}",
            s["set"].as_str().unwrap_or("?"),
            s["polynomial_size"],
            s["glwe_dimension"],
            s["lwe_dimension"],
            sec["estimated_bits"].as_f64().unwrap_or(0.0),
            if sec["meets_128"].as_bool() == Some(true) { "" } else { ": below 128 bits" }
        );
        println!(
            "    {} encrypted image(s): agreement with the plaintext twin {} (classes), {} \
             (logits); encrypted accuracy {}",
            s["images"],
            pct(&s["agreement_class"]),
            pct(&s["agreement_logits"]),
            pct(&s["encrypted_accuracy"])
        );
        println!(
            "    {:.3} s per image ({} thread(s), batched), keys in {:.2} s",
            s["agreement_seconds_per_image"].as_f64().unwrap_or(0.0),
            s["agreement_threads"],
            s["keygen_seconds"].as_f64().unwrap_or(0.0)
        );
        for t in s["timing"].as_array().into_iter().flatten() {
            println!(
                "    one image, {} thread(s), {}: {:.3} s",
                t["threads"],
                t["schedule"].as_str().unwrap_or("?"),
                t["seconds"].as_f64().unwrap_or(0.0)
            );
        }
        if let Some(v) = s["strix_model"]["seconds"].as_f64() {
            println!("    Strix model: {v:.6} s per image");
        }
    }
}
