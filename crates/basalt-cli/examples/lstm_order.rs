//! The CraterLake LSTM (`basalt_workloads::lstm`) traced in both BSGS loop orders and timed on
//! `craterlake.toml`: how much of its time is the baby-step-centric order's spilled rotations
//! (docs/intermediates.md). The giant-step-centric order runs with its diagonals stored at
//! every limb (the loop order alone, as CraterLake would hold them) and with Osiris' OF-Limb
//! regeneration. A sensitivity, not a reading of the paper: the report keeps Lattigo's order.
//!
//! `cargo run --release -p basalt-cli --example lstm_order -- 15` (steps; 3 per bootstrap).

use basalt_circuits::lintrans::Hoisting;
use basalt_ckks::Parameters;
use basalt_workloads::network::StrategyRule;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let steps: usize = std::env::args().nth(1).map_or(Ok(15), |s| s.parse())?;
    let preset = "CRATERLAKE_80_BOOT";
    let params = Parameters::preset_insecure(preset)?; // CraterLake's 80-bit chain
    let m = basalt_sim::Machine::load("data/machines/craterlake.toml")?;
    let mib = |b: f64| b / (1u64 << 20) as f64;
    for (gsc, max_partials, of_limb) in
        [(false, 4, false), (true, 4, false), (true, 8, false), (true, 4, true), (true, 8, true)]
    {
        let rule = StrategyRule { hoisting: Hoisting::Single, gsc, max_partials, of_limb };
        let t = basalt_workloads::trace::record_lstm(&params, preset, steps, rule, true)?;
        let r = basalt_sim::simulate(&m, &t)?;
        let tr = &r.traffic;
        println!(
            "gsc={gsc} max_partials={max_partials} of_limb={of_limb}: {:.2} ms; MiB intermediates \
             {:.0}, keys {:.0}, plaintexts {:.0}",
            r.seconds * 1e3,
            mib(tr.intermediates),
            mib(tr.keys),
            mib(tr.plaintexts)
        );
    }
    Ok(())
}
