//! CraterLake's logistic-regression rows: Table 3 (CraterLake and F1+ times, speedups;
//! target), Table 4 (feature ablations; validation) and Table 5 (128 and 200 bits; validation), from the
//! library's trace of one training run (`basalt_workloads::logreg`, [`Program::Logreg`]: HELR
//! iterations over 256-sample batches from weights at the paper's L = 38 residues) plus one
//! packed bootstrap per bootstrap marker in it (`inference.rs`), timed from the same
//! chain's [`Program::Bootstrap`] trace (the packed-bootstrapping row's; both NAG vectors as
//! one complex ciphertext).
//!
//! The paper says "many batches" and gives no count. We run [`ITERATIONS`], HELR's MNIST
//! training length (FAB §5.5 runs that task for 30 iterations), one batch per iteration
//! \[GAP\]: the times scale with it, the speedups and slowdowns hardly do. Nothing here is
//! fitted to these rows.

use std::path::Path;

use crate::ReproError;
use crate::program::Program;
use crate::reproduce::craterlake::Ablations;
use crate::reproduce::craterlake_security::LEVELS;
use crate::reproduce::inference::Inference;
use crate::reproduce::{Computed, Traces};
use basalt_sim::machine::Machine;

/// Training iterations, one 256-sample batch each \[GAP\].
const ITERATIONS: u32 = 30;
/// "starting at computational depth L=38" (§8): 28-bit residues \[P\].
const START_LIMBS: u32 = 38;
/// CraterLake's quoted CPU time (Table 3: 356 s).
const CPU_MS: f64 = 356_000.0;
const ROW: &str = "Logistic Regression";

/// The run on `preset`, `side_by_side` trainings per ciphertext, with its bootstraps timed
/// from the same chain's packed bootstrap.
fn load(traces: &Traces, preset: &str, side_by_side: u32) -> Result<Option<Inference>, ReproError> {
    let p = Program::Logreg {
        preset: preset.into(),
        start_limbs: START_LIMBS,
        iterations: ITERATIONS,
        side_by_side,
        seeded: true,
    };
    let b = Program::Bootstrap { preset: preset.into(), log_slots: None, dft: None, seeded: true };
    Inference::load(traces, &p, &b)
}

/// The rows, for CraterLake only.
pub fn compute(paper: &str, data: &Path, traces: &Traces) -> Result<Vec<Computed>, ReproError> {
    if paper != "craterlake" {
        return Ok(Vec::new());
    }
    let Some(r80) = load(traces, "CRATERLAKE_80_BOOT", 1)? else { return Ok(Vec::new()) };
    let ablations = Ablations::load(data)?;
    let how = |run: &Inference, (preset, copies): (&str, u32), m: &Machine, on: &str| {
        let (kernels, boot) = run.split_ms(m)?;
        let side = if copies > 1 {
            format!(", each holding {copies} trainings side by side")
        } else {
            String::new()
        };
        Ok::<_, ReproError>(format!(
            "library trace: HELR training (basalt_workloads::logreg: {ITERATIONS} NAG \
             iterations, one batch of 256 samples x 256 features = 2 fully packed data \
             ciphertexts each{side}, from weights at L = {START_LIMBS} residues), {preset} \
             (reconstructed), plus {} packed bootstraps of that chain (w + i v; its \
             Bootstrap trace, once per bootstrap region), seeded keys, {on}: \
             {kernels:.2} ms of training kernels + {} x {boot:.2} ms",
            run.bootstraps, run.bootstraps
        ))
    };
    let h = |m: &Machine, on: &str| how(&r80, ("CRATERLAKE_80_BOOT", 1), m, on);
    let (mut out, t_cl) = ablations.rows((ROW, ROW), CPU_MS, &|m| r80.ms(m), &h)?;
    // At 200 bits (N = 128K) the paper normalises per element: one ciphertext holds two
    // trainings side by side, each in the 80-bit run's layout (2 data ciphertexts of 128
    // samples per iteration), so the program runs the 80-bit kernels on twice the ring and
    // its time is halved (`Level::rows`). Our batch would otherwise fit one 64K-slot
    // ciphertext and be another program.
    for level in &LEVELS {
        let Some(r) = load(traces, level.preset, level.side_by_side)? else { continue };
        let m = level.machine(data)?;
        let how = how(&r, (level.preset, level.side_by_side), &m, &level.file())?;
        out.extend(level.rows(ROW, (r.ms(&m)?, r.ring_degree()), (t_cl, r80.ring_degree()), &how));
    }
    Ok(out)
}
