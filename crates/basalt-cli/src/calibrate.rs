//! `basalt sim calibrate`: measure this CPU's per-kernel costs with Basalt's own kernels and
//! write them as a machine file, so the simulator predicts Basalt's CPU time.
//!
//! The sim's unit models count cycles of integer-lane units; a CPU kernel is turned into one by
//! a virtual clock of 50 MHz (20 ns per cycle): `lanes` is then the number of elements the CPU
//! retires per 20 ns, large enough that rounding to an integer costs < 5%. Memory is modelled as
//! free (a very high bandwidth): DRAM traffic is already inside the measured kernel times.

use std::time::Duration;

use basalt_bench::harness::{in_pool, measure_for as measure};
use basalt_math::bench::random_poly;
use basalt_math::primes::ntt_primes;
use basalt_math::rns::BConv;
use basalt_math::sampler::{Xof, uniform_ntt};
use basalt_math::{Domain, RingContext};

const CYCLE_S: f64 = 20e-9;

/// Per-element costs in seconds, measured at N = 2^16 with 60-bit primes on one thread.
pub struct KernelCosts {
    pub ntt_limb: f64,
    pub elem_limb: f64,
    pub bconv_mac: f64,
    pub automorph_limb: f64,
    pub keygen_limb: f64,
    /// Seconds per output word written into fresh pages (allocation, page faults, zeroing,
    /// unmapping), beyond writing the same words into a kept buffer. A diagnostic: how much
    /// an allocation *can* cost here (the model uses [`OpOverhead`] instead).
    pub fresh_page_word: f64,
}

/// The evaluator's time outside the traced kernels, per kernel output word, measured on a
/// hold-out operation.
pub struct OpOverhead {
    /// Preset and level the hold-out operation ran at.
    pub preset: String,
    pub level: usize,
    /// Fastest measured rescale, and what the kernels alone predict for it (ms).
    pub measured_ms: f64,
    pub kernels_ms: f64,
    /// Kernel output words in the rescale's trace.
    pub words: f64,
    /// (measured − kernels) / words, in seconds (0 if the kernels already cover it).
    pub per_word: f64,
}

pub fn measure_costs(min_time: Duration) -> KernelCosts {
    in_pool(1, || {
        let log_n = 16;
        let q = ntt_primes(60, log_n, 25, &[]).expect("primes");
        let p = ntt_primes(61, log_n, 5, &q).expect("primes");
        let ctx = RingContext::new(log_n, &q, &p).expect("ring");
        let n = ctx.n() as f64;
        let limbs = 25usize;
        let a = random_poly(&ctx, limbs, 0, 1);
        // Thread CPU time (median), not wall time: on a shared machine (2 cores, several users)
        // wall-clock medians swing by 2× between runs as the thread waits for a core, while its
        // CPU time — which includes its page faults — does not. `sim validate-cpu` measures
        // the operations the same way.
        let ms = cpu_s;
        // Short repetitions (2 limbs, < 1 ms) so that few are disturbed by other work on the
        // core; the NTT of a limb is compute-bound (512 KiB stays in cache), as in an op.
        let mut x = random_poly(&ctx, 2, 0, 1);
        let ntt = ms(measure(min_time, || {
            ctx.ntt_assign(&mut x);
            ctx.intt_assign(&mut x);
        })) / 4.0;
        let mut y = a.clone();
        y.set_domain(Domain::Ntt);
        let mut z = y.clone();
        let add = ms(measure(min_time, || ctx.add_assign(&mut z, &y)));
        let mul_acc = ms(measure(min_time, || ctx.mul_acc(&mut z, &y, &y)));
        let scalars = vec![12345u64; limbs];
        let mul_scalar = ms(measure(min_time, || ctx.mul_scalar_assign(&mut z, &scalars)));
        let elem = (add + mul_acc + mul_scalar) / 3.0 / limbs as f64;
        let mut y2 = random_poly(&ctx, 2, 0, 2);
        y2.set_domain(Domain::Ntt);
        let auto = ms(measure(min_time, || drop(ctx.automorphism(&y2, 5)))) / 2.0;
        // 5 → 5 limbs: a ~2 ms repetition; the cost per multiply-add does not depend on the shape.
        let from: Vec<usize> = (0..5).collect();
        let to: Vec<usize> = (5..10).collect();
        let conv = BConv::new(&ctx, &from, &to);
        let mut out = vec![vec![0u64; ctx.n()]; to.len()];
        let bconv = ms(measure(min_time, || {
            let input: Vec<&[u64]> = (0..5).map(|i| a.limb(i)).collect();
            let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            conv.apply(&input, &mut o);
        })) / (n * 5.0 * 5.0);
        let keygen = ms(measure(min_time, || {
            drop(uniform_ntt(&ctx, &mut Xof::new([1; 32], b"cal"), 2, 0));
        })) / 2.0;
        // Fresh memory: Basalt's kernels are timed above on kept buffers, but an operation writes
        // many results into new `RnsPoly`s, and whether glibc serves those from reused heap or
        // from fresh, zero-filled pages (a page fault per 4 KiB) depends on its allocation
        // history. Measure the fresh-page case, which does not: 36 MiB (72 limbs) is above
        // glibc's largest mmap threshold, so every allocation maps new pages. Cost per word
        // beyond writing the same words into a kept buffer.
        let big = 72usize;
        let words = (big * ctx.n()) as f64;
        let fill = |p: &mut basalt_math::RnsPoly| {
            for i in 0..p.limbs() {
                p.limb_mut(i).fill(i as u64 + 1);
            }
        };
        let fresh = ms(measure(min_time, || {
            let mut p = basalt_math::RnsPoly::zero(ctx.n(), big, 0, Domain::Ntt);
            fill(&mut p);
            std::hint::black_box(&p);
        }));
        let mut kept = basalt_math::RnsPoly::zero(ctx.n(), big, 0, Domain::Ntt);
        let reuse = ms(measure(min_time, || {
            fill(&mut kept);
            std::hint::black_box(&kept);
        }));
        KernelCosts {
            fresh_page_word: ((fresh - reuse) / words).max(0.0),
            ntt_limb: ntt,
            elem_limb: elem,
            bconv_mac: bconv,
            automorph_limb: auto,
            keygen_limb: keygen,
        }
    })
}

/// Measure the evaluator's non-kernel time on `rescale` (allocation of results, copies,
/// passes the trace does not record) and spread it over the kernel output words of its trace.
///
/// Why rescale: it runs the same evaluator machinery (fresh result polynomials, INTT/BConv/NTT
/// and element-wise passes) as key switching and HMult, but is neither, so the model's
/// predictions for those two stay out-of-sample (`basalt bench ckks` reports them).
pub fn measure_op_overhead(
    c: &KernelCosts,
    preset: &str,
    min_time: Duration,
) -> Result<OpOverhead, String> {
    let ops = Ops::new(preset, &[])?;
    let m = ops.eval.mul_relin(&ops.ct, &ops.ct).map_err(|e| e.to_string())?;
    let measured = in_pool(1, || cpu_s(measure(min_time, || drop(ops.eval.rescale(&m)))));
    let trace = ops.trace(crate::trace_cmd::Program::Rescale)?;
    // The kernels alone, and with 1 ns per output word: the difference counts the words with
    // the simulator's own rule (`units::cost`), so the two cannot drift apart.
    let text = machine_toml(c, None, "", "");
    let mut mach = basalt_sim::Machine::from_toml(&text, std::path::Path::new("calibration"))
        .map_err(|e| e.to_string())?;
    let kernels = basalt_sim::simulate(&mach, &trace).map_err(|e| e.to_string())?.seconds;
    mach.memory.output_overhead_ns_per_word = Some(1.0);
    let with = basalt_sim::simulate(&mach, &trace).map_err(|e| e.to_string())?.seconds;
    let words = (with - kernels) / 1e-9;
    Ok(OpOverhead {
        preset: ops.params.name().to_string(),
        level: ops.level,
        measured_ms: measured * 1e3,
        kernels_ms: kernels * 1e3,
        words,
        per_word: if words > 0.0 { ((measured - kernels) / words).max(0.0) } else { 0.0 },
    })
}

/// Median thread CPU time of a measurement, in seconds.
fn cpu_s(s: basalt_bench::Stats) -> f64 {
    s.thread_cpu_median_ms * 1e-3
}

/// Real keys and a real top-level ciphertext of a preset, for timing whole operations.
pub struct Ops {
    pub params: basalt_ckks::Parameters,
    pub eval: basalt_ckks::Evaluator,
    pub ct: basalt_ckks::Ciphertext,
    pub level: usize,
}

impl Ops {
    /// Keys: relinearisation plus a rotation key per step in `rotations`.
    pub fn new(preset: &str, rotations: &[i64]) -> Result<Ops, String> {
        use basalt_ckks::*;
        let e = |e: CkksError| e.to_string();
        let params = Parameters::preset(preset).map_err(|e| e.to_string())?;
        let level = params.max_level();
        let kg = KeyGenerator::new(&params);
        let sk = kg.gen_secret_key();
        let mut keys = EvaluationKeys::default().with_relin(kg.gen_relin_key(&sk, false));
        for &r in rotations {
            keys = keys.with_galois(kg.gen_rotation_key(&sk, r, false));
        }
        let eval = Evaluator::new(&params, keys).map_err(e)?;
        let slots = params.max_slots();
        let vals: Vec<Complex64> =
            (0..slots).map(|i| Complex64::new((i as f64 * 0.01).sin(), 0.0)).collect();
        let pt =
            Encoder::new(&params).encode(&vals, slots, level, params.default_scale()).map_err(e)?;
        let ct = encryptor::encrypt_sk(&params, &pt, &sk).map_err(e)?;
        Ok(Ops { params, eval, ct, level })
    }

    /// The trace of `program` on these parameters at the ciphertext's level.
    pub fn trace(&self, program: crate::trace_cmd::Program) -> Result<basalt_trace::Trace, String> {
        let args = crate::trace_cmd::TraceArgs {
            level: Some(self.level),
            ..crate::trace_cmd::TraceArgs::new(program, self.params.name())
        };
        crate::trace_cmd::record_program(&self.params, &args)
    }
}

/// One line of `sim validate-cpu`.
pub struct Check {
    pub op: &'static str,
    pub measured_ms: f64,
    pub predicted_ms: f64,
    /// The operation the overhead was measured on (not a validation).
    pub holdout: bool,
}

/// Time HMult (mul + relinearise), one key switch (rotation by one slot) and the hold-out
/// rescale on `preset` (thread CPU time, one thread) and predict each with `machine`.
pub fn validate(
    machine: &basalt_sim::Machine,
    preset: &str,
    min_time: Duration,
) -> Result<Vec<Check>, String> {
    use crate::trace_cmd::Program;
    let ops = Ops::new(preset, &[1])?;
    let (eval, ct) = (&ops.eval, &ops.ct);
    let m = eval.mul_relin(ct, ct).map_err(|e| e.to_string())?;
    let cases: [(&'static str, Program, bool); 3] = [
        ("mul_relin", Program::MulRelin, false),
        ("rotate", Program::Rotate, false),
        ("rescale", Program::Rescale, true),
    ];
    let mut out = Vec::new();
    for (op, program, holdout) in cases {
        let measured = in_pool(1, || {
            cpu_s(measure(min_time, || match program {
                Program::MulRelin => drop(eval.mul_relin(ct, ct)),
                Program::Rotate => drop(eval.rotate(ct, 1)),
                _ => drop(eval.rescale(&m)),
            }))
        });
        let trace = ops.trace(program)?;
        let predicted = basalt_sim::simulate(machine, &trace).map_err(|e| e.to_string())?.seconds;
        out.push(Check { op, measured_ms: measured * 1e3, predicted_ms: predicted * 1e3, holdout });
    }
    Ok(out)
}

/// A real bootstrap of `preset` with `2^log_slots` slots on this CPU (one thread, median
/// *thread CPU time* of three runs after a warm-up, as for the other operations: wall time
/// doubled under a concurrent build while CPU time did not) against the model's prediction for
/// the library trace of the same circuit. A sparse bootstrap needs few rotation keys (~20 at
/// 2^5 slots); a fully packed one at N = 2^16 needs ~15 GB of them.
///
/// # Errors
/// A preset without a bootstrapping circuit, or any scheme error.
pub fn validate_bootstrap(
    machine: &basalt_sim::Machine,
    preset: &str,
    log_slots: u32,
) -> Result<Check, String> {
    use basalt_circuits::bootstrap::{Bootstrapper, config::for_preset};
    use basalt_ckks::encryptor::encrypt_sk;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let params = basalt_ckks::Parameters::preset(preset).map_err(|e| err(&e))?;
    let cfg = for_preset(preset, Some(log_slots), params.log_n())
        .ok_or(format!("preset {preset:?} has no bootstrapping circuit"))?;
    let measured = in_pool(1, || -> Result<f64, String> {
        let bt = Bootstrapper::new(&params, cfg).map_err(|e| err(&e))?;
        let sk = basalt_ckks::KeyGenerator::new(&params).gen_secret_key();
        let (keys, encaps) = bt.generate_keys(&sk, false).map_err(|e| err(&e))?;
        let eval = basalt_ckks::Evaluator::new(&params, keys).map_err(|e| err(&e))?;
        // The input the trace recorder bootstraps: the base primes, the largest scale the
        // message ratio allows (or the preset's, if smaller).
        let q0: f64 = params.q()[..params.base_primes()].iter().map(|&q| (q as f64).log2()).sum();
        let scale = params.default_scale().min((q0 - bt.message_ratio()).exp2());
        let values = basalt_circuits::testing::random_values(bt.slots(), 1, false);
        let pt = basalt_ckks::Encoder::new(&params)
            .encode(&values, bt.slots(), params.base_primes() - 1, scale)
            .map_err(|e| err(&e))?;
        let ct = encrypt_sk(&params, &pt, &sk).map_err(|e| err(&e))?;
        let stats = measure(Duration::ZERO, || drop(bt.bootstrap(&eval, encaps.as_ref(), &ct)));
        Ok(cpu_s(stats))
    })?;
    let trace = basalt_repro::library::record_program(&basalt_repro::Program::Bootstrap {
        preset: preset.to_string(),
        log_slots: Some(log_slots),
        dft: None,
        seeded: false,
    })?;
    let predicted = basalt_sim::simulate(machine, &trace).map_err(|e| e.to_string())?.seconds;
    Ok(Check {
        op: "bootstrap",
        measured_ms: measured * 1e3,
        predicted_ms: predicted * 1e3,
        holdout: false,
    })
}

/// The machine file for the measured costs (`o`: the evaluator overhead, if measured).
pub fn machine_toml(c: &KernelCosts, o: Option<&OpOverhead>, date: &str, cpu: &str) -> String {
    let n = 65536.0f64;
    let lanes = |x: f64| (x.round() as u64).max(1);
    let ntt = lanes(16.0 * n * CYCLE_S / c.ntt_limb);
    let elem = lanes(n * CYCLE_S / c.elem_limb);
    let bconv = lanes(CYCLE_S / c.bconv_mac);
    let auto = lanes(n * CYCLE_S / c.automorph_limb);
    let keygen = lanes(n * CYCLE_S / c.keygen_limb);
    let us = |s: f64| s * 1e6;
    let fresh_ns = c.fresh_page_word * 1e9;
    let (overhead_line, overhead_note) = match o {
        Some(o) if o.per_word > 0.0 => (
            format!("output_overhead_ns_per_word = {:.6}\n", o.per_word * 1e9),
            format!(
                "#   Evaluator overhead outside the kernels, measured on rescale ({}, level {}):\n\
                 #   {:.2} ms (median thread CPU) vs {:.2} ms of kernels over {:.0} output words\n\
                 #   = {:.4} ns per word.\n",
                o.preset,
                o.level,
                o.measured_ms,
                o.kernels_ms,
                o.words,
                o.per_word * 1e9
            ),
        ),
        _ => (String::new(), String::new()),
    };
    format!(
        r#"# Basalt's own CPU kernels on this machine, one thread: written by `basalt sim calibrate`.
# Measured {date} on {cpu}, N = 2^16, 60-bit primes (median thread CPU time):
#   NTT/INTT per limb {ntt_us:.1} us; element-wise per limb {elem_us:.1} us (mean of add, mul_acc,
#   mul_scalar); BConv {bconv_ns:.3} ns per multiply-add; automorphism per limb {auto_us:.1} us;
#   XOF key regeneration per limb {keygen_us:.1} us. (Diagnostic: output written into fresh
#   pages costs {fresh_ns:.3} ns per word more than into a kept buffer.)
{overhead_note}# Virtual clock 50 MHz (20 ns cycles): `lanes` = elements retired per cycle. HBM is free here
# because DRAM traffic is inside the measured kernel times; `output_overhead_ns_per_word`
# charges every kernel's output words for the evaluator's time outside the kernels (see
# docs/simulator.md, "The CPU model").
schema_version = 1
name = "basalt_cpu"
paper = "none"
description = "Basalt on this CPU, single thread, calibrated by basalt sim calibrate"
clock_ghz = 0.05
clock_source = "virtual clock of the calibration (20 ns per cycle)"
word_bits = 64
max_ring_degree = 131072

[memory]
hbm_gbps = 1000000.0
onchip_mib = 1000000.0
eviction = "lru"
{overhead_line}source = "calibration: memory effects are inside the per-kernel times; allocation measured"

[schedule]
overlap = "serial"
prefetch_windows = 0

[[units]]
name = "ntt"
class = "ntt"
style = "iterative"
count = 1
lanes = {ntt}
source = "calibrated: {ntt_us:.1} us per limb at N = 2^16"

[[units]]
name = "elem"
class = "elem"
count = 1
lanes = {elem}
source = "calibrated: {elem_us:.1} us per limb"

[[units]]
name = "bconv"
class = "bconv"
style = "mac"
count = 1
lanes = {bconv}
source = "calibrated: {bconv_ns:.3} ns per multiply-add"

[[units]]
name = "automorph"
class = "automorph"
count = 1
lanes = {auto}
source = "calibrated: {auto_us:.1} us per limb"

[[units]]
name = "kshgen"
class = "kshgen"
count = 1
lanes = {keygen}
source = "calibrated: {keygen_us:.1} us per limb of XOF regeneration"
"#,
        ntt_us = us(c.ntt_limb),
        elem_us = us(c.elem_limb),
        bconv_ns = c.bconv_mac * 1e9,
        auto_us = us(c.automorph_limb),
        keygen_us = us(c.keygen_limb),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs() -> KernelCosts {
        KernelCosts {
            ntt_limb: 300e-6,
            elem_limb: 50e-6,
            bconv_mac: 1.3e-9,
            automorph_limb: 35e-6,
            keygen_limb: 400e-6,
            fresh_page_word: 3e-9,
        }
    }

    fn overhead(per_word: f64) -> OpOverhead {
        OpOverhead {
            preset: "P".into(),
            level: 3,
            measured_ms: 20.0,
            kernels_ms: 10.0,
            words: 1e7,
            per_word,
        }
    }

    /// The written machine is valid, prices a kernel as calibrated, and adds the overhead per
    /// output word — no timing involved.
    #[test]
    fn machine_file_prices_kernels_and_the_overhead_per_output_word() {
        use basalt_trace::{ElemOp, Event, Kernel, Trace};
        let path = std::path::Path::new("test");
        let t = Trace {
            events: vec![
                Event::Kernel(Kernel::Elem { n: 65536, limbs: 10, op: ElemOp::Add }),
                Event::Kernel(Kernel::BConv { n: 65536, from: 2, to: 5 }),
            ],
        };
        let bare =
            basalt_sim::Machine::from_toml(&machine_toml(&costs(), None, "d", "c"), path).unwrap();
        assert_eq!(bare.memory.output_overhead_ns_per_word, None);
        let s0 = basalt_sim::simulate(&bare, &t).unwrap().seconds;
        // 10 limbs × 50 us + 65,536 · 10 MACs × 1.3 ns, within the lane rounding (< 5 %).
        let want = 10.0 * 50e-6 + 65536.0 * 10.0 * 1.3e-9;
        assert!((s0 / want - 1.0).abs() < 0.05, "{s0} vs {want}");
        let text = machine_toml(&costs(), Some(&overhead(2e-9)), "d", "c");
        assert!(text.contains("output_overhead_ns_per_word = 2.000000"));
        assert!(text.contains("measured on rescale (P, level 3)"));
        let m = basalt_sim::Machine::from_toml(&text, path).unwrap();
        let s1 = basalt_sim::simulate(&m, &t).unwrap().seconds;
        // Output words: 10 limbs of the add + 5 of the BConv, N each, at 2 ns.
        let extra = 15.0 * 65536.0 * 2e-9;
        assert!((s1 - s0 - extra).abs() < 1e-9 * extra.max(1.0) + 1e-12, "{} vs {extra}", s1 - s0);
        // A zero overhead (the kernels already cover the hold-out) writes no field.
        let text = machine_toml(&costs(), Some(&overhead(0.0)), "d", "c");
        assert!(!text.contains("output_overhead_ns_per_word ="));
    }
}
