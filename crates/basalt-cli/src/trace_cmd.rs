//! `basalt trace`: run a CKKS program in trace mode (symbolic ciphertexts: no arithmetic) and
//! print the kernel stream as JSON, for `basalt sim run` or any other tool.

use clap::builder::TypedValueParser;
use clap::{Args, ValueEnum};

use basalt_circuits::lintrans::Hoisting;
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, KsVariant, Parameters};
use basalt_trace::{Trace, record};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Program {
    /// Multiply two ciphertexts, relinearise, rescale.
    Hmult,
    /// Multiply and relinearise (no rescale), as `bench ckks`'s `mul_relin`.
    MulRelin,
    /// Rescale a ciphertext.
    Rescale,
    /// Rotate by one slot.
    Rotate,
    /// Rotate by one slot twice in a row: the second key switch reads the same Galois key,
    /// which a large enough on-chip store keeps (`basalt sim run` reports the hit).
    RotateTwice,
    /// Eight rotations sharing one decomposition (single hoisting).
    Hoisted8,
    /// A full bootstrap of a level-0 ciphertext with the preset's circuit (`--log-slots`).
    Bootstrap,
    /// One LoLa-CryptoNets MNIST inference (`basalt_workloads::mnist`; `--dft-hoisting` for its
    /// dense layers, `--plain-order` for Lattigo's loop order), as `sim reproduce` times it.
    MnistLola,
    /// One SecureML MLP MNIST inference, as `mnist-lola`.
    MnistMlp,
    /// One inference of Orion's LeNet (`basalt_workloads::lenet`; Osiris Set II), as
    /// `mnist-lola`.
    MnistLenet,
    /// One ResNet-20 inference (`basalt_workloads::resnet`) on a bootstrapping preset, each
    /// bootstrap an empty marker region, as `sim reproduce` times it (`basalt sim run
    /// --bootstrap-trace` adds the preset's `bootstrap` trace once per marker).
    Resnet20,
    /// Osiris' bitonic sort (`basalt_workloads::sort`) of `2^--log-slots` values (default
    /// 2^14) on a preset such as OSIRIS_SET_IV, each bootstrap a marker as in `resnet20`.
    Sort,
    /// One LSTM inference (`basalt_workloads::lstm`, CraterLake §8) on a bootstrapping preset:
    /// `--steps` recurrence steps, bootstrapped at 128 slots whenever the levels run out.
    Lstm,
    /// One LoLa-MNIST inference with encrypted weights (`basalt_workloads::encrypted_weights`,
    /// single-hoisted BSGS in Lattigo's order), as `sim reproduce craterlake` times it.
    MnistLolaEncrypted,
    /// One LoLa-CIFAR inference (`basalt_workloads::cifar`), as `sim reproduce craterlake`.
    LolaCifar,
    /// CraterLake's logistic-regression training (`basalt_workloads::logreg`, HELR) on a
    /// bootstrapping preset: `--steps` iterations from weights at `--level` (default 37: the
    /// paper's L = 38 residues), each bootstrap an empty marker region, as `sim reproduce`
    /// times it.
    Logreg,
}

#[derive(Args, Clone)]
pub struct TraceArgs {
    /// Which program to record.
    #[arg(long, value_enum, default_value = "hmult")]
    pub program: Program,
    /// CKKS preset (name or alias).
    #[arg(long, default_value = "LATTIGO_RESIDUAL")]
    pub preset: String,
    /// Level to run at (default: the top).
    #[arg(long)]
    pub level: Option<usize>,
    /// Use FAB's reordered key switching.
    #[arg(long)]
    pub reordered: bool,
    /// Use seeded (KSHGen) keys: the trace then contains KeyGen kernels.
    #[arg(long)]
    pub seeded: bool,
    /// Slots of the bootstrap program (log2; default fully packed); for `sort`, the values
    /// sorted (log2; default 14).
    #[arg(long, value_parser = crate::args::log_slots)]
    pub log_slots: Option<u32>,
    /// Bootstrap only: every DFT as BSGS with this many baby steps, in Osiris' giant-step-centric
    /// order with at most `--max-partials` partial sums and OF-Limb diagonals (unless
    /// `--stored-diagonals`); default: the circuit's automatic plan.
    #[arg(long, value_parser = crate::args::count_u32)]
    pub dft_n1: Option<u32>,
    /// Bootstrap (with `--dft-n1`) and networks: hoisting of the BSGS baby steps.
    #[arg(
        long,
        default_value = "double",
        value_parser = clap::builder::PossibleValuesParser::new(["none", "single", "double"])
            .try_map(|s| s.parse::<Hoisting>())
    )]
    pub dft_hoisting: Hoisting,
    /// Networks only: Lattigo's baby-step-centric BSGS order instead of Osiris' giant-step-centric one.
    #[arg(long)]
    pub plain_order: bool,
    /// MNIST networks, and bootstraps given `--dft-n1`, in the giant-step-centric order: store
    /// every diagonal at every limb instead of regenerating it from one limb (OF-Limb), to
    /// measure the loop order alone.
    #[arg(long, conflicts_with = "plain_order")]
    pub stored_diagonals: bool,
    /// Networks, and bootstraps given `--dft-n1`: giant-step partial sums kept at once in the
    /// giant-step-centric order (`sim reproduce` uses 4, and 72 for LeNet).
    #[arg(long, default_value_t = 4, value_parser = crate::args::count_u32)]
    pub max_partials: u32,
    /// LSTM: recurrence steps (CraterLake's 50 bootstraps x 3 steps on CRATERLAKE_80_BOOT);
    /// logreg: training iterations (the reproduction runs 30).
    #[arg(long, default_value_t = 150, value_parser = crate::args::steps)]
    pub steps: u32,
    /// Accept a preset estimated below 128-bit security (`basalt security` lists them): the
    /// papers' 80-bit CraterLake sets, for instance.
    #[arg(long)]
    pub allow_insecure: bool,
}

impl TraceArgs {
    /// `program` on `preset` with every option at its command-line default (top level, hybrid
    /// key switching, full keys, the circuit's own DFT plans).
    pub fn new(program: Program, preset: &str) -> TraceArgs {
        TraceArgs {
            program,
            preset: preset.to_string(),
            level: None,
            reordered: false,
            seeded: false,
            log_slots: None,
            dft_n1: None,
            dft_hoisting: Hoisting::Double,
            plain_order: false,
            stored_diagonals: false,
            max_partials: 4,
            steps: 150,
            allow_insecure: false,
        }
    }
}

/// Record `program` on `params`. Ciphertexts and keys are symbolic (shape only), so nothing is
/// sampled or computed: a trace at any parameter size takes milliseconds.
pub fn record_program(params: &Parameters, a: &TraceArgs) -> Result<Trace, String> {
    check_against_preset(params, a)?;
    if let Some(p) = workload(a) {
        // The recorder `sim reproduce` uses (seeded keys on request, the workloads' own
        // circuits), so a printed trace is the one a reproduction row timed.
        return basalt_repro::library::record_program(&p);
    }
    let level = a.level.unwrap_or(params.max_level());
    let kg = KeyGenerator::new(params);
    let rotations: Vec<i64> = match a.program {
        Program::Hmult | Program::MulRelin | Program::Rescale => vec![],
        Program::Rotate | Program::RotateTwice => vec![1],
        Program::Hoisted8 => (1..=8).collect(),
        _ => unreachable!("workload programs are recorded by `workload`"),
    };
    let keys = kg.gen_symbolic_evaluation_keys(&rotations, false, a.seeded);
    let variant = if a.reordered { KsVariant::Reordered } else { KsVariant::Hybrid };
    let eval = Evaluator::new(params, keys).map_err(|e| e.to_string())?.with_variant(variant, 4);
    let ct = Ciphertext::symbolic(params, level).map_err(|e| e.to_string())?;
    let (r, t) = record(|| -> Result<(), basalt_ckks::CkksError> {
        match a.program {
            Program::Hmult => {
                let m = eval.mul_relin(&ct, &ct)?;
                eval.rescale(&m)?;
            }
            Program::MulRelin => {
                eval.mul_relin(&ct, &ct)?;
            }
            Program::Rescale => {
                eval.rescale(&ct)?;
            }
            Program::Rotate => {
                eval.rotate(&ct, 1)?;
            }
            Program::RotateTwice => {
                let once = eval.rotate(&ct, 1)?;
                eval.rotate(&once, 1)?;
            }
            Program::Hoisted8 => {
                eval.rotate_hoisted(&ct, &rotations)?;
            }
            _ => unreachable!("workload programs are recorded by `workload`"),
        }
        Ok(())
    });
    r.map_err(|e| e.to_string())?;
    Ok(t)
}

/// The simulator's description of a workload program (bootstrap, networks, sort), or `None`
/// for the single-operation programs recorded here.
fn workload(a: &TraceArgs) -> Option<basalt_repro::Program> {
    let (preset, seeded) = (a.preset.clone(), a.seeded);
    Some(match a.program {
        Program::Bootstrap => basalt_repro::Program::Bootstrap {
            preset,
            log_slots: a.log_slots,
            dft: a.dft_n1.map(|n1| basalt_repro::DftPlan {
                n1,
                hoisting: a.dft_hoisting,
                max_partials: a.max_partials,
                of_limb: !a.stored_diagonals,
            }),
            seeded,
        },
        Program::Resnet20 => basalt_repro::Program::Resnet20 { preset, sparse: None, seeded },
        Program::MnistLola | Program::MnistMlp | Program::MnistLenet => {
            basalt_repro::Program::Mnist {
                net: match a.program {
                    Program::MnistLola => basalt_repro::MnistNet::Lola,
                    Program::MnistMlp => basalt_repro::MnistNet::Mlp,
                    _ => basalt_repro::MnistNet::Lenet,
                },
                preset,
                hoisting: a.dft_hoisting,
                gsc: !a.plain_order,
                max_partials: a.max_partials,
                of_limb: !a.stored_diagonals,
                seeded,
            }
        }
        Program::Lstm => basalt_repro::Program::Lstm { preset, steps: a.steps, seeded },
        Program::MnistLolaEncrypted | Program::LolaCifar => basalt_repro::Program::Lola {
            net: if a.program == Program::LolaCifar {
                basalt_repro::LolaNet::Cifar
            } else {
                basalt_repro::LolaNet::MnistEncryptedWeights
            },
            preset,
            seeded,
        },
        Program::Logreg => basalt_repro::Program::Logreg {
            preset,
            start_limbs: a.level.map_or(38, |l| l as u32 + 1),
            iterations: a.steps,
            side_by_side: 1,
            seeded,
        },
        Program::Sort => {
            basalt_repro::Program::Sort { preset, log_len: a.log_slots.unwrap_or(14), seeded }
        }
        Program::Hmult
        | Program::MulRelin
        | Program::Rescale
        | Program::Rotate
        | Program::RotateTwice
        | Program::Hoisted8 => return None,
    })
}

/// The limits of `a` that depend on the preset: slots within the ring, baby steps within the
/// slots.
fn check_against_preset(params: &Parameters, a: &TraceArgs) -> Result<(), String> {
    let max_log_slots = params.log_n() - 1;
    if let Some(ls) = a.log_slots.filter(|&ls| ls > max_log_slots) {
        return Err(format!(
            "--log-slots {ls}: {} has at most 2^{max_log_slots} slots (N = 2^{})",
            params.name(),
            params.log_n()
        ));
    }
    let slots = 1u64 << a.log_slots.unwrap_or(max_log_slots);
    if let Some(n1) = a.dft_n1.filter(|&n1| u64::from(n1) > slots) {
        return Err(format!("--dft-n1 {n1}: more baby steps than the {slots} slots"));
    }
    Ok(())
}

/// Programs recorded step by step (`--steps`) grow with it: below this many steps they are
/// recorded at once, above it their size is measured first.
const PROBE_STEPS_FROM: u32 = 1000;

/// Refuse a trace that would not fit in memory, before recording it: a program whose size
/// grows with `--steps` is recorded at 1 and 2 steps, and its JSON size extrapolated linearly
/// (the recorder holds the trace and its JSON at once, hence twice that). Beyond the memory
/// available (`MemAvailable`), a clear error instead of an abort on a failed allocation.
fn check_trace_memory(params: &Parameters, a: &TraceArgs) -> Result<(), String> {
    if !matches!(a.program, Program::Lstm | Program::Logreg) || a.steps < PROBE_STEPS_FROM {
        return Ok(());
    }
    let json_bytes = |steps: u32| -> Result<u64, String> {
        let t = record_program(params, &TraceArgs { steps, ..a.clone() })?;
        Ok(serde_json::to_vec(&t).map_err(|e| e.to_string())?.len() as u64)
    };
    let (one, two) = (json_bytes(1)?, json_bytes(2)?);
    let per_step = two.saturating_sub(one);
    let need = 2 * (one + per_step * u64::from(a.steps - 1));
    if let Some(avail) = crate::args::available_memory().filter(|&m| need > m) {
        return Err(format!(
            "a {:?} trace of {} steps needs about {} (each step adds {}), more than the {} \
             available: record fewer steps",
            a.program,
            a.steps,
            basalt_ckks::progress::human_bytes(need),
            basalt_ckks::progress::human_bytes(2 * per_step),
            basalt_ckks::progress::human_bytes(avail)
        ));
    }
    Ok(())
}

pub fn run(a: &TraceArgs) -> Result<(), String> {
    let params = Parameters::preset_with(&a.preset, a.allow_insecure).map_err(|e| e.to_string())?;
    check_trace_memory(&params, a)?;
    let t = record_program(&params, a)?;
    println!("{}", serde_json::to_string(&t).map_err(|e| e.to_string())?);
    Ok(())
}
