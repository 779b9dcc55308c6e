//! The libraries as a [`TraceSource`] for the reproductions (`basalt sim reproduce`, Python's
//! `basalt.sim.reproduce`): whole programs (bootstraps, HMult at a level, HELR steps, the MNIST
//! networks, the LSTM, ResNet-20, the sort, logistic regression) are recorded by the code that
//! computes them, in shape-only mode, so those rows never come from a hand-written stream.
//!
//! Closed-form workloads ([`Workload`]: a paper's listing as a kernel stream, such as
//! CraterLake's Table 1 key switch or Strix's PBS epoch) are left to their generators.

use std::cell::RefCell;
use std::collections::HashMap;

use basalt_circuits::bootstrap::{Bootstrapper, Encapsulation, config::for_preset};
use basalt_circuits::helr::{self, Helr};
use basalt_circuits::lintrans::{GscOrder, Hoisting, LinearTransform, Strategy};
use basalt_circuits::polynomial::with_merged_rescales;
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters, ParametersLiteral};
use basalt_trace::{Trace, record};
use basalt_workloads::logreg::{LogReg, record_logreg};
use basalt_workloads::mnist;
use basalt_workloads::network::StrategyRule;
use basalt_workloads::resnet::ConvStrategy;
use basalt_workloads::sort::{BitonicSort, record_sort};
use basalt_workloads::trace::{record_inference, record_lstm};

use crate::program::{
    BasicOp, DftPlan, HelrStep, LolaNet, MnistNet, OpParams, Program, TraceSource, Workload,
};
use crate::{ReproError, ReproReport};

/// Records [`Program`]s with basalt-ckks / basalt-circuits and keeps each trace: a reproduction
/// times the same bootstrap on several machines and ablations, and recording one at N = 2^16
/// takes seconds.
#[derive(Default)]
pub struct LibrarySource {
    cache: RefCell<HashMap<Program, Trace>>,
}

impl TraceSource for LibrarySource {
    fn trace(&self, _: &Workload) -> Option<Trace> {
        None
    }

    fn program(&self, p: &Program) -> Result<Option<Trace>, String> {
        if let Some(t) = self.cache.borrow().get(p) {
            return Ok(Some(t.clone()));
        }
        let t = record_program(p)?;
        self.cache.borrow_mut().insert(p.clone(), t.clone());
        Ok(Some(t))
    }
}

/// `basalt sim reproduce` with the libraries' traces: one paper (`Some`) or all five, the
/// papers on threads of their own (each with its own [`LibrarySource`]: no two papers record
/// the same program, and a recording is thread-local), merged in [`crate::papers::PAPERS`]
/// order, so the report is the same as one paper after another, in about the time of the
/// slowest paper.
///
/// # Errors
/// The first paper's error in that order, as [`crate::reproduce_with`].
pub fn reproduce(paper: Option<&str>, data: &std::path::Path) -> Result<ReproReport, ReproError> {
    let one = |p: Option<&str>| crate::reproduce_with(p, data, &LibrarySource::default());
    if paper.is_some() {
        return one(paper);
    }
    let parts: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> =
            crate::papers::PAPERS.iter().map(|p| s.spawn(move || one(Some(p)))).collect();
        handles.into_iter().map(|h| h.join().expect("a reproduction thread panicked")).collect()
    });
    let mut out = ReproReport::default();
    for part in parts {
        let part = part?;
        out.rows.extend(part.rows);
        out.readings.extend(part.readings);
    }
    Ok(out)
}

/// A paper's own parameter set, built whatever its estimated security: these traces reproduce
/// what the papers ran (CraterLake's 80-bit sets, Osiris' Set II), so the opt-in below 128 bits
/// is explicit here, for the simulator's sources only. Every other entry point refuses such a
/// set unless its caller opts in.
fn paper_preset(name: &str) -> Result<Parameters, basalt_ckks::ParamError> {
    Parameters::preset_insecure(name)
}

/// Record `p` (no caching).
///
/// # Errors
/// An unknown preset, a preset without a bootstrapping circuit, a level above the preset's top,
/// or any scheme error, as text.
pub fn record_program(p: &Program) -> Result<Trace, String> {
    match p {
        Program::Bootstrap { preset, log_slots, dft, seeded } => {
            record_bootstrap(preset, *log_slots, dft.as_ref(), *seeded, false)
        }
        Program::Fused(inner) => record_fused(inner),
        Program::BasicOp { params, op, seeded } => record_basic_op(params, *op, *seeded),
        Program::HMult { preset, level, seeded, merged } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            let level = *level as usize;
            if level == 0 || level > params.max_level() {
                return Err(format!(
                    "HMult with rescale needs 1 <= level <= {} on {preset}, got {level}",
                    params.max_level()
                ));
            }
            let keys = KeyGenerator::new(&params).gen_symbolic_evaluation_keys(&[], false, *seeded);
            let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
            let ct = Ciphertext::symbolic(&params, level).map_err(|e| e.to_string())?;
            let (r, t) = record(|| -> Result<(), basalt_ckks::CkksError> {
                if *merged {
                    eval.mul_relin_rescale(&ct, &ct, false, None, 0.0)?;
                } else {
                    eval.rescale(&eval.mul_relin(&ct, &ct)?)?;
                }
                Ok(())
            });
            r.map_err(|e| e.to_string())?;
            Ok(t)
        }
        Program::Helr { preset, level, step, seeded } => {
            record_helr(preset, *level as usize, *step, *seeded)
        }
        Program::Mnist { net, preset, hoisting, gsc, max_partials, of_limb, seeded } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            let net = match net {
                MnistNet::Mlp => mnist::Net::Mlp,
                MnistNet::Lola => mnist::Net::Lola,
                MnistNet::Lenet => mnist::Net::Lenet,
            };
            let rule = StrategyRule {
                hoisting: *hoisting,
                gsc: *gsc,
                max_partials: *max_partials as usize,
                of_limb: *of_limb,
            };
            record_inference(&params, net, rule, *seeded).map_err(|e| e.to_string())
        }
        Program::Resnet20 { preset, sparse, seeded } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            let (boot_preset, log_slots, conv) = match sparse {
                None => (preset, None, ConvStrategy::LATTIGO),
                Some(s) => {
                    let order = GscOrder::GiantStepCentric { max_partials: 4, of_limb: true };
                    let conv = ConvStrategy { hoisting: s.hoisting, order };
                    (&s.boot_preset, Some(s.log_slots), conv)
                }
            };
            let boot_params = paper_preset(boot_preset).map_err(|e| e.to_string())?;
            let cfg = for_preset(boot_preset, log_slots, boot_params.log_n())
                .ok_or(format!("preset {boot_preset:?} has no bootstrapping circuit"))?;
            let (t, _) = basalt_workloads::resnet::record_resnet20(
                &params,
                (&boot_params, &cfg),
                conv,
                *seeded,
            )
            .map_err(|e| e.to_string())?;
            Ok(t)
        }
        Program::MatVec {
            preset,
            level,
            diagonals,
            hoisting,
            max_partials,
            gsc,
            rescale,
            seeded,
        } => {
            let rule = StrategyRule {
                hoisting: *hoisting,
                gsc: *gsc,
                max_partials: *max_partials as usize,
                of_limb: true,
            };
            record_matvec(preset, *level as usize, *diagonals as usize, rule, *rescale, *seeded)
        }
        Program::Sort { preset, log_len, seeded } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            let sort = BitonicSort { log_len: *log_len, ..BitonicSort::osiris() };
            record_sort(&params, &sort, *seeded).map(|(t, _)| t).map_err(|e| e.to_string())
        }
        Program::Lola { net, preset, seeded } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            match net {
                LolaNet::MnistEncryptedWeights => {
                    basalt_workloads::encrypted_weights::record_mnist(&params, LSTM_RULE, *seeded)
                }
                LolaNet::Cifar => basalt_workloads::cifar::record(&params, LSTM_RULE, *seeded),
            }
            .map_err(|e| e.to_string())
        }
        Program::Lstm { preset, steps, seeded } => {
            let params = paper_preset(preset).map_err(|e| e.to_string())?;
            record_lstm(&params, preset, *steps as usize, LSTM_RULE, *seeded)
                .map_err(|e| e.to_string())
        }
        Program::Logreg { preset, start_limbs, iterations, side_by_side, seeded } => {
            let runs = (*start_limbs as usize, *iterations as usize, *side_by_side as usize);
            record_logreg_program(preset, runs, *seeded)
        }
    }
}

/// [`Program::Bootstrap`], with EvalMod's relinearised products fused with their rescales when
/// `merge_rescale` (else as the preset's circuit says).
fn record_bootstrap(
    preset: &str,
    log_slots: Option<u32>,
    dft: Option<&DftPlan>,
    seeded: bool,
    merge_rescale: bool,
) -> Result<Trace, String> {
    let params = paper_preset(preset).map_err(|e| e.to_string())?;
    let mut cfg = for_preset(preset, log_slots, params.log_n()).ok_or(format!(
        "preset {preset:?} has no bootstrapping circuit (N16QP1546H192H32, FAB, \
                 OSIRIS_SET_III_BOOT, OSIRIS_SET_IV_BOOT, CRATERLAKE_80_BOOT, \
                 CRATERLAKE_80_BOOT_UNPACKED, CRATERLAKE_128_BOOT, CRATERLAKE_200_BOOT)"
    ))?;
    cfg.merge_rescale |= merge_rescale;
    if let Some(d) = dft {
        let order = GscOrder::GiantStepCentric {
            max_partials: d.max_partials as usize,
            of_limb: d.of_limb,
        };
        let hoisting = d.hoisting;
        cfg.strategy = Some(Strategy::Bsgs { n1: d.n1 as usize, hoisting, order });
    }
    let bt = Bootstrapper::symbolic(&params, cfg).map_err(|e| e.to_string())?;
    // As `bootstrap::trace::record_bootstrap`, with the machine's key kind: seeded
    // keys emit KeyGen kernels and load half of each key (KSHGen, Osiris' PRNG).
    let eval = Evaluator::new(&params, bt.symbolic_keys(seeded)).map_err(|e| e.to_string())?;
    let encaps = match bt.config().ephemeral_h {
        None => None,
        Some(h) => Some(Encapsulation::symbolic(&params, h).map_err(|e| e.to_string())?),
    };
    // An exhausted ciphertext: the base primes only (level = limb index, so a split q_0
    // of b primes is level b − 1).
    let exhausted = params.base_primes() - 1;
    let mut ct = Ciphertext::symbolic(&params, exhausted).map_err(|e| e.to_string())?;
    ct.set_slots(bt.slots());
    // The input's scale must leave Q_0/Δ ≥ 2^ratio; presets whose default scale fills
    // q_0 (FAB's 54 bits) bootstrap at the largest scale the circuit accepts. The scale
    // changes no kernel, only whether the circuit runs.
    let q0: f64 = params.q()[..params.base_primes()].iter().map(|&q| (q as f64).log2()).sum();
    let max_log_scale = q0 - bt.message_ratio();
    if ct.scale().log2() > max_log_scale {
        ct.set_scale(max_log_scale.exp2());
    }
    let (out, t) = record(|| bt.bootstrap(&eval, encaps.as_ref(), &ct));
    out.map_err(|e| e.to_string())?;
    Ok(t)
}

/// [`Program::Fused`]: `inner` recorded with every HMult's ModDown and Rescale fused.
fn record_fused(inner: &Program) -> Result<Trace, String> {
    let Some((preset, seeded)) = inner.preset_and_seeding() else {
        return Err(format!("fusing needs a program on a preset, got {inner:?}"));
    };
    let params = paper_preset(preset).map_err(|e| e.to_string())?;
    // Every polynomial the program evaluates fuses its products, the Chebyshev power steps
    // included (their result changes before the rescale, so the rewrite below cannot).
    let recorded = with_merged_rescales(|| match inner {
        Program::Bootstrap { preset, log_slots, dft, seeded } => {
            record_bootstrap(preset, *log_slots, dft.as_ref(), *seeded, true)
        }
        other => record_program(other),
    })?;
    Ok(crate::fusion::fuse_hmult_rescale(&recorded, &params, seeded).0)
}

/// [`Program::BasicOp`]: `op` on fresh shape-only ciphertexts at the level `params` names,
/// with a relinearisation key and the rotation key for one slot.
fn record_basic_op(params: &OpParams, op: BasicOp, seeded: bool) -> Result<Trace, String> {
    let (params, level) = match params {
        OpParams::Preset { name, level } => {
            (paper_preset(name).map_err(|e| e.to_string())?, *level as usize)
        }
        &OpParams::Uniform { log_n, q_limbs, p_limbs, dnum, word_bits } => {
            if q_limbs == 0 || p_limbs == 0 || dnum == 0 {
                return Err(format!(
                    "a uniform chain needs Q and P limbs and digits, got {q_limbs} / {p_limbs} / \
                     {dnum}"
                ));
            }
            let levels = (q_limbs - 1) as usize;
            let lit = ParametersLiteral::toy(
                log_n,
                word_bits,
                word_bits,
                levels,
                word_bits,
                p_limbs as usize,
                dnum as usize,
            );
            (Parameters::new_insecure(lit).map_err(|e| e.to_string())?, levels)
        }
    };
    if level > params.max_level() || (op == BasicOp::Rescale && level == 0) {
        return Err(format!(
            "{op:?} needs a level in {}..={}, got {level}",
            u32::from(op == BasicOp::Rescale),
            params.max_level()
        ));
    }
    let rotations: &[i64] = if op == BasicOp::Rotate { &[1] } else { &[] };
    let keys = KeyGenerator::new(&params).gen_symbolic_evaluation_keys(rotations, false, seeded);
    let relin = keys.relin.as_ref().map(|r| r.key.clone()).ok_or("no relinearisation key")?;
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let fresh = || Ciphertext::symbolic(&params, level).map_err(|e| e.to_string());
    let (a, b) = (fresh()?, fresh()?);
    let (r, t) = record(|| match op {
        BasicOp::Add => eval.add(&a, &b).map(drop),
        BasicOp::MulRelin => eval.mul_relin(&a, &b).map(drop),
        BasicOp::Rescale => eval.rescale(&a).map(drop),
        BasicOp::Rotate => eval.rotate(&a, 1).map(drop),
        BasicOp::KeySwitch => {
            let _key = basalt_trace::key_scope(basalt_trace::KeyId::Relin);
            drop(eval.keyswitch(&a.polys()[1], &relin));
            Ok(())
        }
    });
    r.map_err(|e| e.to_string())?;
    Ok(t)
}

/// [`Program::Logreg`]: CraterLake's batch on `preset`'s slots (`side_by_side` trainings per
/// ciphertext, each on its share of the slots), the bootstrap's output level and input scale
/// from the preset's circuit (fully packed, §8: one bootstrap refreshes every training's
/// weights).
fn record_logreg_program(
    preset: &str,
    (start_limbs, iterations, side_by_side): (usize, usize, usize),
    seeded: bool,
) -> Result<Trace, String> {
    let params = paper_preset(preset).map_err(|e| e.to_string())?;
    let cfg = for_preset(preset, None, params.log_n())
        .ok_or(format!("preset {preset:?} has no bootstrapping circuit"))?;
    let refreshed = cfg.budget(&params).map_err(|e| e.to_string())?.output_level;
    let boot_scale = params.default_scale().min(cfg.max_input_scale(&params));
    if !side_by_side.is_power_of_two() || params.max_slots() / side_by_side < 256 {
        return Err(format!(
            "side_by_side = {side_by_side}: a power of two leaving each training 256 slots or more"
        ));
    }
    let lr = LogReg::craterlake(params.max_slots() / side_by_side);
    let start = start_limbs.checked_sub(1).ok_or("start_limbs must be at least 1")?;
    record_logreg(&params, &lr, (start, iterations), (refreshed, boot_scale), seeded)
        .map(|(t, _)| t)
        .map_err(|e| e.to_string())
}

/// The LSTM's and the other LoLa rows' products: the CraterLake MNIST row's split (single
/// hoisting, Lattigo's order, at most four giant steps), the one reading of a CraterLake
/// matrix-vector product.
const LSTM_RULE: StrategyRule =
    StrategyRule { hoisting: Hoisting::Single, gsc: false, max_partials: 4, of_limb: true };

/// One product of a shape-only ciphertext at `level` (all slots) with `diagonals` consecutive
/// diagonals, split by `rule`, rescaled or not ([`Program::MatVec`]).
fn record_matvec(
    preset: &str,
    level: usize,
    diagonals: usize,
    rule: StrategyRule,
    rescale: bool,
    seeded: bool,
) -> Result<Trace, String> {
    let params = paper_preset(preset).map_err(|e| e.to_string())?;
    let slots = params.max_slots();
    let (indices, strategy) = ((0..diagonals).collect(), rule.strategy(diagonals));
    let lt = if rescale {
        LinearTransform::shapes(&params, indices, slots, strategy, level, 1.0)
    } else {
        LinearTransform::shapes_unrescaled(&params, indices, slots, strategy, level)
    }
    .map_err(|e| e.to_string())?;
    let keys =
        KeyGenerator::new(&params).gen_symbolic_evaluation_keys(&lt.rotations(), false, seeded);
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let mut ct = Ciphertext::symbolic(&params, level).map_err(|e| e.to_string())?;
    ct.set_slots(slots);
    let (r, t) = record(|| lt.evaluate(&eval, &ct).map(|_| ()));
    r.map_err(|e| e.to_string())?;
    Ok(t)
}

/// One HELR step ([`basalt_circuits::helr`], FAB's packing) on shape-only ciphertexts whose
/// iteration starts at `level`: the gradient of one data ciphertext, or the master's update of
/// `cts` gradients (their inputs are built unrecorded, so the trace holds the step alone);
/// `seeded` keys for machines with a key generator (Osiris).
fn record_helr(preset: &str, level: usize, step: HelrStep, seeded: bool) -> Result<Trace, String> {
    let params = paper_preset(preset).map_err(|e| e.to_string())?;
    let h = Helr::fab();
    let keys =
        KeyGenerator::new(&params).gen_symbolic_evaluation_keys(&h.rotations(), false, seeded);
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let fresh = || Ciphertext::symbolic(&params, level).map_err(|e| e.to_string());
    let (z, v) = (fresh()?, fresh()?);
    let err = |e: basalt_circuits::CircuitError| e.to_string();
    let (r, t) = match step {
        HelrStep::Gradient => record(|| helr::gradient(&eval, &z, &v, &h).map(|_| ())),
        HelrStep::Update { cts } => {
            let g = helr::gradient(&eval, &z, &v, &h).map_err(err)?;
            let mut w = Ciphertext::symbolic(&params, g.level()).map_err(|e| e.to_string())?;
            w.set_scale(g.scale());
            record(|| -> basalt_circuits::Result<()> {
                let mut sum = g.clone();
                for _ in 1..cts {
                    sum = eval.add(&sum, &g)?;
                }
                helr::update(&eval, &sum, &v, &w, &h).map(|_| ())
            })
        }
    };
    r.map_err(err)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    //! Each paper's reproduction records its bootstraps at N = 2^16 (a few seconds each in
    //! release), CraterLake's also two ResNet-20 inferences (about 17 s each) and two LSTM
    //! inferences (50 and 75 bootstraps); the three tests together take about two minutes
    //! on the shared 2-core machine.

    use std::path::PathBuf;

    use crate::papers::Role;
    use crate::program::DftPlan;
    use crate::reproduce_with;

    use super::*;

    fn data() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data")
    }

    fn modelled_from_library(r: &ReproReport, paper: &str, table: &str, row: &str, metric: &str) {
        let x =
            r.get(paper, table, row, metric).unwrap_or_else(|| panic!("{table}/{row}/{metric}"));
        let ours = x.ours.unwrap_or_else(|| panic!("{table}/{row}/{metric} not modelled"));
        assert!(ours.is_finite() && ours > 0.0, "{table}/{row}/{metric}: {ours}");
        assert!(x.ratio.is_some());
    }

    #[test]
    fn osiris_bootstrap_rows_come_from_library_traces() {
        let r = reproduce_with(Some("osiris"), &data(), &LibrarySource::default()).unwrap();
        for table in ["III(a)", "III(b)"] {
            for col in ["NH", "SH", "DH"] {
                let metric = format!("{col} latency");
                modelled_from_library(&r, "osiris", table, "Bootstrap", &metric);
                let row = r.get("osiris", table, "Bootstrap", &metric).unwrap();
                assert!(row.how.contains("library trace"), "{}", row.how);
            }
        }
        // 2 TB/s rows stay validation rows, and doubling the bandwidth never slows a column.
        let a = |t: &str, c: &str| r.get("osiris", t, "Bootstrap", c).unwrap();
        for col in ["NH latency", "SH latency", "DH latency"] {
            assert_eq!(a("III(b)", col).role, Role::Validation);
            assert!(a("III(b)", col).ours <= a("III(a)", col).ours, "{col}");
        }
        modelled_from_library(&r, "osiris", "III(b)", "Bootstrap", "DH vs NH speedup");
        // The MNIST networks (basalt_workloads): every column, and the larger network is slower.
        for row in ["MLP", "LoLA", "LeNet"] {
            for m in ["NH latency", "SH latency", "DH latency", "improvement vs CPU"] {
                modelled_from_library(&r, "osiris", "III(a)", row, m);
            }
        }
        let nh = |row: &str| r.get("osiris", "III(a)", row, "NH latency").unwrap().ours.unwrap();
        assert!(nh("LeNet") > nh("MLP") && nh("MLP") > nh("LoLA"));
        assert!(r.to_string().contains("Bootstrap"));
        // T_mult,a/s adds Set III's HMults to the bootstrap (ms → ns over 8 × 2^15 slots);
        // HELR-1024 adds its gradients and update to a (sparse, so cheaper) bootstrap.
        for col in ["NH latency", "SH latency", "DH latency"] {
            let boot_ns = a("III(a)", col).ours.unwrap() * 1e6 / (8.0 * 32768.0);
            let t_mult = r.get("osiris", "III(a)", "T_mult,a/s", col).unwrap().ours.unwrap();
            assert!(t_mult > boot_ns && t_mult < 1.1 * boot_ns, "{col}: {t_mult} vs {boot_ns}");
            // T_Mv:128,a/s adds 9 BSGS products of 128 diagonals: more than 8 HMults, less
            // than a second bootstrap.
            let t_mv = r.get("osiris", "III(a)", "T_Mv:128,a/s", col).unwrap();
            assert!(t_mv.how.contains("library traces"), "{}", t_mv.how);
            let t_mv = t_mv.ours.unwrap();
            assert!(t_mv > t_mult && t_mv < 2.0 * boot_ns, "{col}: {t_mv} vs {t_mult}, {boot_ns}");
            let helr = |t: &str| r.get("osiris", t, "HELR-1024", col).unwrap().ours.unwrap();
            assert!(helr("III(b)") < helr("III(a)"), "{col}");
        }
        modelled_from_library(&r, "osiris", "III(b)", "HELR-1024", "improvement vs CPU");
        modelled_from_library(&r, "osiris", "III(a)", "T_Mv:128,a/s", "improvement vs CPU");
        // Sorting: the library's sort plus its hundreds of sparse bootstraps, every column.
        for col in ["NH latency", "SH latency", "DH latency"] {
            let sort = |t: &str| r.get("osiris", t, "Sorting", col).unwrap().ours.unwrap();
            assert!(sort("III(b)") < sort("III(a)"), "{col}");
            // More than 105 stages x 4 bootstraps of ~the Set III bootstrap's time (ms -> s).
            assert!(sort("III(a)") > 300.0 * a("III(a)", col).ours.unwrap() / 1e3, "{col}");
        }
        modelled_from_library(&r, "osiris", "III(a)", "Sorting", "improvement vs CPU");
        // ResNet-20: the network on Set IV plus its 37 sparse bootstraps, every column.
        for col in ["NH latency", "SH latency", "DH latency"] {
            let resnet = |t: &str| r.get("osiris", t, "ResNet-20", col).unwrap();
            assert!(resnet("III(a)").how.contains("+ 37 x"), "{}", resnet("III(a)").how);
            let ms = |t: &str| resnet(t).ours.unwrap();
            assert!(ms("III(b)") < ms("III(a)"), "{col}");
            assert!(ms("III(a)") > 30.0 * a("III(a)", col).ours.unwrap(), "{col}");
        }
        modelled_from_library(&r, "osiris", "III(b)", "ResNet-20", "improvement vs CPU");
    }

    #[test]
    fn craterlake_and_fab_bootstrap_rows_come_from_library_traces() {
        let r = reproduce_with(Some("craterlake"), &data(), &LibrarySource::default()).unwrap();
        for row in ["Packed Bootstrapping", "Unpacked bootstrapping"] {
            for m in ["CraterLake time", "F1+ time", "speedup vs F1+", "speedup vs CPU"] {
                modelled_from_library(&r, "craterlake", "3", row, m);
            }
        }
        for row in ["Packed Bootstrapping", "Unpacked Bootstrapping"] {
            for m in
                ["speedup vs no KSHGen", "speedup vs no CRB/chaining", "speedup vs F1+ network"]
            {
                modelled_from_library(&r, "craterlake", "4", row, m);
                // Removing a feature never makes the bootstrap faster.
                assert!(r.get("craterlake", "4", row, m).unwrap().ours.unwrap() >= 1.0, "{m}");
            }
        }
        modelled_from_library(&r, "craterlake", "5", "Packed Bootstrapping", "128-bit time");
        for m in ["CraterLake time", "F1+ time", "speedup vs F1+", "speedup vs CPU"] {
            modelled_from_library(&r, "craterlake", "3", "MNIST Unencryp. Wghts.", m);
        }
        modelled_from_library(
            &r,
            "craterlake",
            "4",
            "MNIST Unencrypt. Wghts.",
            "speedup vs no KSHGen",
        );
        // ResNet-20 (basalt_workloads::resnet): its network trace plus one packed bootstrap per
        // marker, so more than the bootstraps alone; removing a feature never speeds it up.
        for m in ["CraterLake time", "F1+ time", "speedup vs F1+", "speedup vs CPU"] {
            modelled_from_library(&r, "craterlake", "3", "ResNet-20", m);
        }
        for m in ["speedup vs no KSHGen", "speedup vs no CRB/chaining", "speedup vs F1+ network"] {
            assert!(r.get("craterlake", "4", "ResNet-20", m).unwrap().ours.unwrap() >= 1.0, "{m}");
        }
        modelled_from_library(&r, "craterlake", "5", "ResNet-20", "128-bit time");
        let resnet = r.get("craterlake", "3", "ResNet-20", "CraterLake time").unwrap();
        let boots: f64 =
            resnet.how.split("plus ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let boot = r.get("craterlake", "3", "Packed Bootstrapping", "CraterLake time").unwrap();
        assert!(boots >= 19.0, "at least one bootstrap per ReLU: {boots}");
        assert!(resnet.ours.unwrap() > boots * boot.ours.unwrap(), "{}", resnet.how);
        // The LSTM (basalt_workloads::lstm, 150 steps, 50 bootstraps): every row, and
        // removing a feature never makes it faster.
        for m in ["CraterLake time", "F1+ time", "speedup vs F1+", "speedup vs CPU"] {
            modelled_from_library(&r, "craterlake", "3", "LSTM", m);
        }
        for m in ["speedup vs no KSHGen", "speedup vs no CRB/chaining", "speedup vs F1+ network"] {
            modelled_from_library(&r, "craterlake", "4", "LSTM", m);
            assert!(r.get("craterlake", "4", "LSTM", m).unwrap().ours.unwrap() >= 1.0, "{m}");
        }
        modelled_from_library(&r, "craterlake", "5", "LSTM", "128-bit time");
        // Logistic regression (basalt_workloads::logreg, 30 HELR iterations): every row, more
        // than its packed bootstraps alone, and removing a feature never makes it faster.
        let lr = "Logistic Regression";
        for m in ["CraterLake time", "F1+ time", "speedup vs F1+", "speedup vs CPU"] {
            modelled_from_library(&r, "craterlake", "3", lr, m);
        }
        for m in ["speedup vs no KSHGen", "speedup vs no CRB/chaining", "speedup vs F1+ network"] {
            assert!(r.get("craterlake", "4", lr, m).unwrap().ours.unwrap() >= 1.0, "{m}");
        }
        modelled_from_library(&r, "craterlake", "5", lr, "128-bit slowdown vs 80-bit");
        let x = r.get("craterlake", "3", lr, "CraterLake time").unwrap();
        let boots: f64 =
            x.how.split("plus ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert_eq!(boots, 14.0, "3 iterations from L = 38, then 2 per bootstrap: {}", x.how);
        assert!(x.ours.unwrap() > boots * boot.ours.unwrap(), "{}", x.how);
        // One slot is cheaper than 2^15 on the same machine.
        let t = |row: &str| r.get("craterlake", "3", row, "CraterLake time").unwrap().ours.unwrap();
        assert!(t("Unpacked bootstrapping") < t("Packed Bootstrapping"));
        // The targets: the packed bootstrap within the row's tolerance. The unpacked one
        // was too (0.87x) only while its chain switched keys over all 22 special residues at
        // every level; with CraterLake's level-dependent P (key_switch_bands, §3.1) it is 0.78x,
        // a documented miss (docs/reproduction-notes.md "Level-dependent key switching"), not a target.
        let x = r.get("craterlake", "3", "Packed Bootstrapping", "CraterLake time").unwrap();
        assert_eq!(x.within, Some(true), "packed: {:?} vs {}", x.ours, x.theirs);
        let x = r.get("craterlake", "3", "Unpacked bootstrapping", "CraterLake time").unwrap();
        assert!(x.ours.unwrap() > 0.5 * x.theirs, "unpacked: {:?} vs {}", x.ours, x.theirs);
        // F1+ (no CRB, no KSHGen) is slower than CraterLake, if far less than the paper says.
        let f1 = r.get("craterlake", "3", "Packed Bootstrapping", "F1+ time").unwrap();
        assert!(f1.ours.unwrap() > t("Packed Bootstrapping"));

        let f = reproduce_with(Some("fab"), &data(), &LibrarySource::default()).unwrap();
        modelled_from_library(&f, "fab", "7", "FAB", "T_mult a/slot");
        let x = f.get("fab", "7", "FAB", "T_mult a/slot").unwrap();
        assert!(x.how.contains("library traces"), "{}", x.how);
        modelled_from_library(&f, "fab", "7", "Lattigo", "speedup (time)");
        // Table 8: the HELR iteration's traces; 8 FPGAs beat one, by less than 8x (Amdahl).
        let it = |row: &str| f.get("fab", "8", row, "time per iteration").unwrap().ours.unwrap();
        modelled_from_library(&f, "fab", "8", "FAB-2", "communication per iteration");
        assert!(it("FAB-2") < it("FAB-1") && it("FAB-2") > it("FAB-1") / 8.0);
    }

    #[test]
    fn bad_programs_are_clear_errors() {
        let no_circuit = Program::Bootstrap {
            preset: "MXV_SET_A".into(),
            log_slots: None,
            dft: None,
            seeded: false,
        };
        let e = record_program(&no_circuit).unwrap_err();
        assert!(e.contains("has no bootstrapping circuit"), "{e}");
        let unknown =
            Program::Bootstrap { preset: "NOPE".into(), log_slots: None, dft: None, seeded: false };
        assert!(record_program(&unknown).is_err());
        let level0 = Program::HMult { preset: "FAB".into(), level: 0, seeded: false, merged: true };
        assert!(record_program(&level0).unwrap_err().contains("level"));
        let bad_n1 = Program::Bootstrap {
            preset: "CRATERLAKE_80_BOOT_UNPACKED".into(),
            log_slots: None,
            dft: Some(DftPlan {
                n1: 0,
                hoisting: Hoisting::Double,
                max_partials: 4,
                of_limb: true,
            }),
            seeded: false,
        };
        assert!(record_program(&bad_n1).is_err());
    }

    /// Osiris' T_Mv:128,a/s product: 128 diagonals split 32 x 4 in one GSC group (31 baby and
    /// 3 giant rotations, one stored limb loaded per diagonal); rescaled above the base level
    /// only; the library refuses a rescaled product at q_0 alone.
    #[test]
    fn matvec_program_records_the_bsgs_product() {
        let at = |level, hoisting, rescale| Program::MatVec {
            preset: "OSIRIS_SET_III".into(),
            level,
            diagonals: 128,
            hoisting,
            max_partials: 4,
            gsc: true,
            rescale,
            seeded: true,
        };
        let count = |t: &Trace, name: &str| {
            t.events
                .iter()
                .filter(|e| matches!(e, basalt_trace::Event::Enter { name: n } if n == name))
                .count()
        };
        let plain_limbs = |t: &Trace| {
            t.kernels()
                .filter_map(|k| match k {
                    basalt_trace::Kernel::PlainLoad { limbs, .. } => Some(*limbs),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        for h in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
            let t = record_program(&at(2, h, true)).unwrap();
            assert_eq!(count(&t, "Rotate"), 31 + 3, "{h:?}");
            assert_eq!(plain_limbs(&t), vec![1; 128], "{h:?}: OF-Limb loads one limb per diagonal");
            let base = record_program(&at(1, h, false)).unwrap();
            assert_eq!(count(&base, "Rotate"), 34, "{h:?}");
            assert!(t.events.len() > base.events.len(), "{h:?}: the rescale and a wider level");
        }
        assert!(record_program(&at(1, Hoisting::Double, true)).is_err());
    }

    /// A source whose programs fail makes the whole reproduction fail with the program named,
    /// instead of silently dropping the rows.
    struct Failing;

    impl TraceSource for Failing {
        fn trace(&self, _: &Workload) -> Option<Trace> {
            None
        }
        fn program(&self, _: &Program) -> Result<Option<Trace>, String> {
            Err("recorder broke".into())
        }
    }

    #[test]
    fn a_failing_trace_source_is_an_error_naming_the_program() {
        let e = reproduce_with(Some("fab"), &data(), &Failing).unwrap_err().to_string();
        assert!(e.contains("recorder broke") && e.contains("BasicOp"), "{e}");
    }
}
