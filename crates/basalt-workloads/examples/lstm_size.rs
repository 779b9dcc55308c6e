//! What a full-size run of the `lstm` workload holds at its peak, counted from shapes as the run
//! counts it before it generates anything (`lstm_run::Memory`, the figure its refusal names):
//! the bootstrap's keys, the network's rotation keys, the encoded diagonals, the working
//! ciphertexts. Nothing is generated or encrypted (seconds at N = 2^16).
//!
//! `cargo run --release -p basalt-workloads --example lstm_size [-- PRESET...]`
//! (default: `CRATERLAKE_80_BOOT`, the workload's, and `LATTIGO_N16QP1546H192H32`).

use basalt_workloads::lstm_run::{self, PRESET};
use basalt_workloads::registry::RunOptions;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut presets: Vec<String> = std::env::args().skip(1).collect();
    if presets.is_empty() {
        presets = vec![PRESET.into(), "LATTIGO_N16QP1546H192H32".into()];
    }
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    for preset in presets {
        // The papers' own sets may be below 128 bits: this counts, it encrypts nothing.
        let opts =
            RunOptions { preset: Some(preset.clone()), allow_insecure: true, ..Default::default() };
        let m = lstm_run::memory(&opts)?;
        println!(
            "{}",
            json!({
                "preset": preset,
                "memory_gib": {
                    "bootstrap_keys": gib(m.bootstrap_keys),
                    "network_keys": gib(m.network_keys),
                    "bootstrap_diagonals": gib(m.bootstrap_diagonals),
                    "encoded_diagonals": gib(m.diagonals),
                    "secret_key_and_tables": gib(m.fixed),
                    "working_ciphertexts": gib(m.working),
                    "total": gib(m.total()),
                },
            })
        );
    }
    Ok(())
}
