//! The MNIST network rows: Osiris Table III(a) "MLP" and "LoLA" (Set I, NH / SH / DH at
//! 1 TB/s) and CraterLake Table 3 / 4 "MNIST Unencryp. Wghts." (LoLa on CraterLake and F1+;
//! the feature ablations, validation), each from the library's trace of one inference (`basalt_workloads::mnist`, recorded in
//! shape-only mode). Nothing here is fitted to these rows. LeNet (Osiris Set II) needs a
//! network the workloads crate does not have yet; the encrypted-weights row is in `lola`.

use std::path::Path;

use crate::machine::Machine;
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::lola::shallow_rows;
use crate::reproduce::{Computed, Traces, computed};
use crate::synth::{DftHoisting, MnistNet, Program};
use crate::{SimError, simulate};

/// Lattigo v5.2's CPU latencies Osiris quotes (Table III(a)), for the improvement rows.
const OSIRIS_CPU_US: [(MnistNet, &str, f64); 2] =
    [(MnistNet::Mlp, "MLP", 570_000.0), (MnistNet::Lola, "LoLA", 470_000.0)];

/// CraterLake's quoted CPU time for LoLa-MNIST with unencrypted weights (Table 3).
const CRATERLAKE_CPU_MS: f64 = 561.0;

/// Rows of `paper` from the MNIST traces (none for the other papers).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    match paper {
        "osiris" => osiris(data, traces),
        "craterlake" => craterlake(data, traces),
        _ => Ok(Vec::new()),
    }
}

/// Table III(a): each network on `OSIRIS_SET_I` with the column's hoisting in the
/// giant-step-centric order (at most four giant-step partials, as the bootstrap rows) and
/// seeded keys, on osiris.toml at 1 TB/s. The improvement rows divide the quoted CPU time by
/// our NH latency: the paper's improvements match its NH column (digest §7.1).
fn osiris(data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let m = Machine::load(data.join("machines").join("osiris.toml"))?;
    let cols =
        [("NH", DftHoisting::None), ("SH", DftHoisting::Single), ("DH", DftHoisting::Double)];
    let mut out = Vec::new();
    for (net, row, cpu_us) in OSIRIS_CPU_US {
        let mut nh = None;
        for (col, hoisting) in cols {
            let p = Program::Mnist {
                net,
                preset: "OSIRIS_SET_I".into(),
                hoisting,
                gsc: true,
                seeded: true,
            };
            let Some(t) = traces.program(&p)? else { return Ok(Vec::new()) };
            let us = simulate(&m, &t)?.seconds * 1e6;
            nh.get_or_insert(us);
            let how = format!(
                "library trace: {row} inference (basalt_workloads::mnist, pseudo-random weights), \
                 OSIRIS_SET_I, {col} BSGS dense layers in GSC order (<= 4 partials), seeded \
                 keys, osiris.toml at 1 TB/s"
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
fn craterlake(data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    let p = Program::Mnist {
        net: MnistNet::Lola,
        preset: "CRATERLAKE_MNIST".into(),
        hoisting: DftHoisting::Single,
        gsc: false,
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
    shallow_rows(&Ablations::load(data)?, &t, rows, CRATERLAKE_CPU_MS, &how)
}
