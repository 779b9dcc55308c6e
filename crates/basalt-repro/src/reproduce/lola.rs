//! CraterLake's other two shallow LoLa rows, Table 3 (CraterLake and F1+ times, speedups) and
//! Table 4 (feature ablations, validation): "MNIST Encryp. Wghts." (LoLa-MNIST with every
//! weight a ciphertext, `basalt_workloads::encrypted_weights`) and "CIFAR Unencryp. Wghts."
//! (LoLa-CIFAR, `basalt_workloads::cifar`), each from the library's trace of one inference on
//! `CRATERLAKE_MNIST` (the shallow rows' reconstructed F1 parameters: N = 2^14, 5 × 28-bit
//! levels), single-hoisted BSGS in Lattigo's order, seeded keys. Nothing here is fitted to
//! these rows.

use std::path::Path;

use crate::program::{LolaNet, Program};
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::{Computed, Traces};
use basalt_sim::machine::Machine;
use basalt_sim::simulate;

use crate::ReproError;

/// The rows: network, Table 3 and Table 4 names (Table 4 spells them differently), quoted CPU
/// time (ms, Table 3) and what the trace is.
const ROWS: [(LolaNet, &str, &str, f64, &str); 2] = [
    (
        LolaNet::MnistEncryptedWeights,
        "MNIST Encryp. Wghts.",
        "MNIST Encryp. Wghts.",
        1369.0,
        "LoLa-MNIST inference with encrypted weights (basalt_workloads::encrypted_weights: every \
         weight vector, pre-rotated diagonal and bias a ciphertext read from memory, tensor \
         products relinearised once per sum)",
    ),
    (
        LolaNet::Cifar,
        "CIFAR Unencryp. Wghts.",
        "CIFAR Unencrypt. Wghts.",
        187_000.0,
        "LoLa-CIFAR inference (basalt_workloads::cifar: conv 83x8x8 s2 on 384 convolution-\
         representation inputs in 2 blocks, square, conv 163x6x6 s2 as one summed hybrid-diagonal \
         BSGS pass, square, dense 2608->10)",
    ),
];

/// Rows of `paper` (none but CraterLake's).
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "craterlake" {
        return Ok(Vec::new());
    }
    let machines = Ablations::load(data)?;
    let mut out = Vec::new();
    for (net, r3, r4, cpu_ms, what) in ROWS {
        let p = Program::Lola { net, preset: "CRATERLAKE_MNIST".into(), seeded: true };
        let Some(t) = traces.program(&p)? else { return Ok(Vec::new()) };
        let how = |m: &str| {
            format!(
                "library trace: {what}, pseudo-random weights, CRATERLAKE_MNIST (reconstructed: \
                 N = 2^14, 5 x 28-bit levels), SH BSGS, seeded keys, {m}"
            )
        };
        let ms = |m: &Machine| Ok(simulate(m, &t)?.seconds * 1e3);
        out.extend(machines.rows((r3, r4), cpu_ms, &ms, &|_, m| Ok(how(m)))?.0);
    }
    Ok(out)
}
