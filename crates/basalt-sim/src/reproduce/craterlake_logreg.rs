//! CraterLake's logistic-regression rows: Table 3 (CraterLake and F1+ times, speedups;
//! target), Table 4 (feature ablations; validation) and Table 5 (128-bit; validation), from the
//! library's trace of one training run (`basalt_workloads::logreg`, [`Program::Logreg`]: HELR
//! iterations over 256-sample batches from weights at the paper's L = 38 residues) plus one
//! packed bootstrap per `BOOTSTRAP_REGION` in it (`inference.rs`), timed from the same
//! chain's [`Program::Bootstrap`] trace (the packed-bootstrapping row's; both NAG vectors as
//! one complex ciphertext).
//!
//! The paper says "many batches" and gives no count. We run [`ITERATIONS`], HELR's MNIST
//! training length (FAB §5.5 runs that task for 30 iterations), one batch per iteration
//! \[GAP\]: the times scale with it, the speedups and slowdowns hardly do. Nothing here is
//! fitted to these rows.

use std::path::Path;

use crate::SimError;
use crate::machine::Machine;
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::craterlake_security::LEVELS;
use crate::reproduce::inference::Inference;
use crate::reproduce::{Computed, Traces};
use crate::synth::Program;

/// Training iterations, one 256-sample batch each \[GAP\].
const ITERATIONS: u32 = 30;
/// "starting at computational depth L=38" (§8): 28-bit residues \[P\].
const START_LIMBS: u32 = 38;
/// CraterLake's quoted CPU time (Table 3: 356 s).
const CPU_MS: f64 = 356_000.0;
const ROW: &str = "Logistic Regression";

/// The run on `preset` with its bootstraps timed from the same chain's packed bootstrap.
fn load(traces: &Traces, preset: &str) -> Result<Option<Inference>, SimError> {
    let p = Program::Logreg {
        preset: preset.into(),
        start_limbs: START_LIMBS,
        iterations: ITERATIONS,
        seeded: true,
    };
    let b = Program::Bootstrap { preset: preset.into(), log_slots: None, dft: None, seeded: true };
    Inference::load(traces, &p, &b)
}

/// The rows, for CraterLake only.
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, SimError> {
    if paper != "craterlake" {
        return Ok(Vec::new());
    }
    let Some(r80) = load(traces, "CRATERLAKE_80_BOOT")? else { return Ok(Vec::new()) };
    let ablations = Ablations::load(data)?;
    let how = |run: &Inference, preset: &str, m: &Machine, on: &str| -> Result<String, SimError> {
        let (kernels, boot) = run.split_ms(m)?;
        Ok(format!(
            "library trace: HELR training (basalt_workloads::logreg: {ITERATIONS} NAG \
             iterations, one batch of 256 samples x 256 features = 2 fully packed data \
             ciphertexts each, from weights at L = {START_LIMBS} residues), {preset} \
             (reconstructed), plus {} packed bootstraps of that chain (w + i v; its \
             Bootstrap trace, once per bootstrap region), seeded keys, {on}: \
             {kernels:.2} ms of training kernels + {} x {boot:.2} ms",
            run.bootstraps, run.bootstraps
        ))
    };
    let h = |m: &Machine, on: &str| how(&r80, "CRATERLAKE_80_BOOT", m, on);
    let (mut out, t_cl) = ablations.rows((ROW, ROW), CPU_MS, &|m| r80.ms(m), &h)?;
    // The 200-bit column is left out: per-element normalisation (time / 2 at N = 128K) needs
    // a reading of what two side-by-side trainings are, and our 128K batch fits one ciphertext.
    for level in LEVELS.iter().filter(|l| l.bits == "128-bit") {
        let Some(r) = load(traces, level.preset)? else { continue };
        let m = level.machine(data)?;
        let how = how(&r, level.preset, &m, &level.file())?;
        out.extend(level.rows(ROW, (r.ms(&m)?, r.ring_degree()), (t_cl, r80.ring_degree()), &how));
    }
    Ok(out)
}
