//! The MNIST network rows: Osiris Table III(a) "MLP" and "LoLA" (Set I) and "LeNet" (Set II),
//! NH / SH / DH at 1 TB/s, and CraterLake Table 3 / 4 "MNIST Unencryp. Wghts." (LoLa on CraterLake and F1+;
//! the feature ablations, validation), each from the library's trace of one inference (`basalt_workloads::mnist`, recorded in
//! shape-only mode). Nothing here is fitted to these rows. The encrypted-weights row is in
//! `lola`.

use std::path::Path;

use crate::program::{Hoisting, MnistNet, Program};
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::{Computed, Traces, computed};
use basalt_sim::machine::Machine;
use basalt_sim::simulate;

use crate::ReproError;

/// Osiris' MNIST rows (Table III(a)): network, row, parameter set (Table II), giant-step
/// partial sums on chip, and Lattigo v5.2's CPU latency it quotes, for the improvement rows.
const OSIRIS_ROWS: [(MnistNet, &str, &str, u32, f64); 3] = [
    (MnistNet::Mlp, "MLP", "OSIRIS_SET_I", 4, 570_000.0),
    (MnistNet::Lola, "LoLA", "OSIRIS_SET_I", 4, 470_000.0),
    (MnistNet::Lenet, "LeNet", "OSIRIS_SET_II", LENET_PARTIALS, 2_940_000.0),
];

/// Giant-step partial sums Osiris keeps on chip in LeNet's products \[D\]: §IV-D keeps
/// `n2 = 4` "in the highest multiplicative level matrix-vector products in bootstrapping"
/// because more do not fit ("what can be stored on-chip"); the same bytes hold
/// 4 x (54 x 2^16) / (12 x 2^14) = 72 partials of Set II's top-level ciphertext in `Q∪P`
/// (`OSIRIS_SET_III_BOOT`'s top: 40 + 14 limbs at N = 2^16; Set II: 8 + 4 limbs at 2^14).
/// LeNet's layers never use more than 64, so the cap does not bind. (The MLP and LoLA rows
/// keep 4, their reading.)
const LENET_PARTIALS: u32 = 72;

/// CraterLake's quoted CPU time for LoLa-MNIST with unencrypted weights (Table 3).
const CRATERLAKE_CPU_MS: f64 = 561.0;

/// Rows of `paper` from the MNIST traces (none for the other papers).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    match paper {
        "osiris" => osiris(data, traces),
        "craterlake" => craterlake(data, traces),
        _ => Ok(Vec::new()),
    }
}

/// Table III(a): each network on its parameter set with the column's hoisting in the
/// giant-step-centric order (at most four giant-step partials, as the bootstrap rows) and
/// seeded keys, on osiris.toml at 1 TB/s. The improvement rows divide the quoted CPU time by
/// our NH latency: the paper's improvements match its NH column (Osiris Table III(a)).
fn osiris(data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    let m = Machine::load(data.join("machines").join("osiris.toml"))?;
    let cols = [("NH", Hoisting::None), ("SH", Hoisting::Single), ("DH", Hoisting::Double)];
    let mut out = Vec::new();
    for (net, row, preset, max_partials, cpu_us) in OSIRIS_ROWS {
        let mut nh = None;
        for (col, hoisting) in cols {
            // Each square's ModDown and Rescale fused (Osiris §V).
            let p = Program::Fused(Box::new(Program::Mnist {
                net,
                preset: preset.into(),
                hoisting,
                gsc: true,
                max_partials,
                of_limb: true,
                seeded: true,
            }));
            let Some(t) = traces.program(&p)? else { return Ok(Vec::new()) };
            let us = simulate(&m, &t)?.seconds * 1e6;
            nh.get_or_insert(us);
            let layers = match net {
                MnistNet::Lenet => "convolutions (multiplexed) and dense layers",
                _ => "dense layers",
            };
            let how = format!(
                "library trace: {row} inference (basalt_workloads::mnist, pseudo-random weights), \
                 {preset}, {col} BSGS {layers} in GSC order (<= {max_partials} partials), \
                 seeded keys, osiris.toml at 1 TB/s"
            );
            out.push(computed("III(a)", row, &format!("{col} latency"), us, &how));
        }
        if let Some(nh) = nh {
            let how = format!("quoted CPU {} s / our NH latency", cpu_us / 1e6);
            out.push(computed("III(a)", row, "improvement vs CPU", cpu_us / nh, &how));
        }
    }
    Ok(out)
}

/// Table 3 (CraterLake and F1+ times, speedups) and Table 4 (feature ablations, validation)
/// for LoLa-MNIST with unencrypted weights on `CRATERLAKE_MNIST` (N = 2^14, 5 levels of 28
/// bits, [GAP], data/papers/craterlake/readings.toml): single-hoisted BSGS in Lattigo's order
/// (the reading the bootstrap rows follow) and seeded keys, so that KSHGen halves key loads on
/// CraterLake and F1+ loads whole keys.
fn craterlake(data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    let p = Program::Mnist {
        net: MnistNet::Lola,
        preset: "CRATERLAKE_MNIST".into(),
        hoisting: Hoisting::Single,
        gsc: false,
        max_partials: 4,
        of_limb: false,
        seeded: true,
    };
    let Some(t) = traces.program(&p)? else { return Ok(Vec::new()) };
    let how = |m: &str| {
        format!(
            "library trace: LoLa-MNIST inference (basalt_workloads::mnist, pseudo-random \
             weights), CRATERLAKE_MNIST (reconstructed: N = 2^14, 5 x 28-bit levels), SH BSGS \
             dense layers, seeded keys, {m}"
        )
    };
    let rows = ("MNIST Unencryp. Wghts.", "MNIST Unencrypt. Wghts.");
    let ms = |m: &Machine| Ok(simulate(m, &t)?.seconds * 1e3);
    Ok(Ablations::load(data)?.rows(rows, CRATERLAKE_CPU_MS, &ms, &|_, m| Ok(how(m)))?.0)
}
