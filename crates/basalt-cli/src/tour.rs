//! `basalt tour`: the first thing a newcomer runs. Each step computes for real, checks the result
//! against plaintext, and prints precision (bits) and time.

use std::time::Instant;

use clap::Args;

use basalt_ckks::precision::PrecisionStats;
use basalt_ckks::{
    Complex64, Encoder, Evaluator, KeyGenerator, Parameters, ParametersLiteral, encryptor,
};

#[derive(Args)]
pub struct TourArgs {
    /// Use small (insecure) rings so the tour finishes in seconds.
    #[arg(long)]
    quick: bool,
}

fn step(title: &str) {
    eprintln!("\n== {title}");
}

/// Time a closure, printing `label: ms`.
fn timed<R>(label: &str, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    eprintln!("   {label:<44} {:>9.1} ms", t.elapsed().as_secs_f64() * 1e3);
    r
}

fn check(label: &str, want: &[Complex64], have: &[Complex64], min_bits: f64) -> Result<(), String> {
    let p = PrecisionStats::new(want, have);
    // Mean precision is the criterion (as in Lattigo's reports); the worst slot is shown too.
    let ok = p.mean.l2 >= min_bits;
    eprintln!(
        "   {label:<44} precision mean {:5.1} bits, worst {:5.1} bits  {}",
        p.mean.l2,
        p.min.l2,
        if ok { "ok" } else { "TOO LOW" }
    );
    if ok {
        Ok(())
    } else {
        Err(format!("{label}: mean precision {:.1} bits below {min_bits}", p.mean.l2))
    }
}

pub fn run(a: &TourArgs) -> Result<(), String> {
    let params = ckks(a.quick).map_err(|e| format!("CKKS step failed: {e}"))?;
    bootstrap(a.quick).map_err(|e| format!("bootstrapping step failed: {e}"))?;
    mnist(a.quick).map_err(|e| format!("MNIST step failed: {e}"))?;
    let pbs_trace = tfhe(a.quick).map_err(|e| format!("TFHE step failed: {e}"))?;
    accelerators(&params, &pbs_trace).map_err(|e| format!("simulator step failed: {e}"))?;
    papers(a.quick).map_err(|e| format!("reproduction step failed: {e}"))?;
    eprintln!("\nTour complete.");
    Ok(())
}

/// TFHE: every message of the 2+2-bit set through a lookup table by programmable bootstrapping,
/// one at a time and batched. Returns the trace of one batched PBS for the Strix model.
fn tfhe(quick: bool) -> Result<basalt_trace::Trace, String> {
    use basalt_tfhe::TfheContext;
    let (set, insecure) = if quick { ("STRIX_I", true) } else { ("TFHERS_2_2_KS_PBS", false) };
    let ctx = TfheContext::new(set, insecure).map_err(|e| e.to_string())?;
    let p = ctx.params();
    step(&format!(
        "TFHE on {set}: n = {}, N = {}, k = {}, PBS base 2^{} × {} levels, {}-bit torus",
        p.lwe_dimension,
        p.polynomial_size,
        p.glwe_dimension,
        p.pbs_base_log,
        p.pbs_level,
        p.torus_bits
    ));
    let modulus = ctx.plaintext_modulus();
    let f = |m: u64| (m * m + 1) % modulus;
    let cts = timed(&format!("encrypt all {modulus} messages"), || {
        (0..modulus).map(|m| ctx.encrypt(m)).collect::<Result<Vec<_>, _>>()
    })
    .map_err(|e| e.to_string())?;
    let probe = modulus / 2;
    let one = timed("one KS + PBS computing m² + 1", || ctx.apply_lut(&cts[probe as usize], &f))
        .map_err(|e| e.to_string())?;
    let ok_one = ctx.decrypt(&one).map_err(|e| e.to_string())? == f(probe);
    let (out, trace) = basalt_trace::record(|| {
        timed(&format!("{modulus} KS + PBS, two-level batched over the cores"), || {
            ctx.apply_lut_batch(&cts, &f)
        })
    });
    let out = out.map_err(|e| e.to_string())?;
    let mut wrong = 0;
    for (m, c) in out.iter().enumerate() {
        if ctx.decrypt(c).map_err(|e| e.to_string())? != f(m as u64) {
            wrong += 1;
        }
    }
    eprintln!(
        "   f(m) = m² + 1 mod {modulus} on every message: {} of {} correct{}",
        modulus as usize - wrong,
        modulus,
        if ok_one && wrong == 0 { "  ok" } else { "  WRONG" }
    );
    if !ok_one || wrong > 0 {
        return Err(format!("{wrong} wrong PBS results"));
    }
    Ok(trace)
}

/// CKKS bootstrapping: a ciphertext at level 0 refreshed, checked, then multiplied again.
/// Sparse (32 slots) on Lattigo's secure N = 2^16 chain: ~20 rotation keys instead of ~80,
/// so the step fits a laptop; `basalt bench bootstrap` runs the fully packed one.
fn bootstrap(quick: bool) -> Result<(), String> {
    use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, config::for_preset};
    let err = |e: basalt_circuits::CircuitError| e.to_string();
    let (params, cfg) = if quick {
        let p = basalt_circuits::testing::toy_bootstrap_params(
            11,
            2,
            2,
            3,
            basalt_ckks::SecretDistribution::Hamming { h: 64 },
        );
        let cfg =
            BootstrapConfig { cts_levels: 3, stc_levels: 2, ..BootstrapConfig::lattigo_default(9) };
        (p, cfg)
    } else {
        let p = Parameters::preset("N16QP1546H192H32").map_err(|e| e.to_string())?;
        (p, for_preset("N16QP1546H192H32", Some(5), 16).expect("preset has a circuit"))
    };
    let slots = 1usize << cfg.log_slots;
    let bt = Bootstrapper::new(&params, cfg).map_err(err)?;
    let b = bt.budget();
    step(&format!(
        "CKKS bootstrapping on {}: {slots} slots, CoeffToSlot {} + EvalMod {} + SlotToCoeff {} \
         levels, output at level {} of {}",
        params.name(),
        b.cts,
        b.evalmod,
        b.stc,
        b.output_level,
        params.max_level()
    ));
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let (keys, encaps) = timed(
        &format!("{} rotation keys, conjugation, encapsulation", bt.rotations().len()),
        || bt.generate_keys(&sk, false),
    )
    .map_err(err)?;
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let enc = Encoder::new(&params);
    let x: Vec<Complex64> =
        (0..slots).map(|i| Complex64::from_polar(0.8, i as f64 * 0.61)).collect();
    let pt = enc.encode(&x, slots, 0, params.default_scale()).map_err(|e| e.to_string())?;
    let ct = encryptor::encrypt_sk(&params, &pt, &sk).map_err(|e| e.to_string())?;
    let decrypt = |c: &basalt_ckks::Ciphertext| {
        encryptor::decrypt(&params, c, &sk)
            .and_then(|pt| enc.decode(&pt))
            .map_err(|e| e.to_string())
    };
    let (fresh, st) =
        timed("bootstrap a level-0 ciphertext", || bt.bootstrap_timed(&eval, encaps.as_ref(), &ct))
            .map_err(err)?;
    eprintln!(
        "   stages: ModRaise {:.0} ms, SubSum {:.0} ms, CoeffToSlot {:.0} ms, EvalMod {:.0} ms, \
         SlotToCoeff {:.0} ms",
        st.mod_raise_ms, st.subsum_ms, st.cts_ms, st.evalmod_ms, st.stc_ms
    );
    check(&format!("bootstrap(x), level 0 → {}", fresh.level()), &x, &decrypt(&fresh)?, 18.0)?;
    let sq = eval.rescale(&eval.mul_relin(&fresh, &fresh).map_err(|e| e.to_string())?);
    let sq = sq.map_err(|e| e.to_string())?;
    let want: Vec<Complex64> = x.iter().map(|v| v * v).collect();
    check("x² after bootstrapping", &want, &decrypt(&sq)?, 16.0)?;
    Ok(())
}

/// A workload: LoLa-CryptoNets on an encrypted MNIST-sized image (Osiris Set I, the paper's
/// LoLA row), checked against the same network in cleartext, then the same inference traced
/// and timed on the accelerator models that report it. Weights are seeded pseudo-random (no
/// trained model ships with Basalt): the step is about the encrypted computation.
fn mnist(quick: bool) -> Result<(), String> {
    use basalt_circuits::lintrans::Hoisting;
    use basalt_workloads::mnist::{self, Net};
    use basalt_workloads::network::{Model, StrategyRule};
    let params = if quick {
        basalt_circuits::testing::toy_params(11, 6, 40, 2)
    } else {
        Parameters::preset("OSIRIS_SET_I").map_err(|e| e.to_string())?
    };
    let err = |e: basalt_circuits::CircuitError| e.to_string();
    let net = Net::Lola;
    let network = net.build(1);
    step(&format!(
        "An encrypted MNIST inference: {} on {} (N = 2^{}, depth {}, weights pseudo-random)",
        network.name,
        params.name(),
        params.log_n(),
        network.depth()
    ));
    let rule =
        StrategyRule { hoisting: Hoisting::Double, gsc: true, max_partials: 4, of_limb: true };
    let model = Model::prepare(&params, &network, rule, false).map_err(err)?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let keys = timed(&format!("{} rotation keys", model.rotations().len()), || {
        kg.gen_evaluation_keys(&sk, &model.rotations(), false, false)
    });
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let enc = Encoder::new(&params);
    let xs = net.inputs(&mnist::test_image(5));
    let slots = model.input_slots();
    let cts = xs
        .iter()
        .map(|x| {
            let v: Vec<Complex64> = x.iter().map(|&r| Complex64::new(r, 0.0)).collect();
            let pt = enc.encode(&v, slots, model.input_level(), params.default_scale())?;
            encryptor::encrypt_sk(&params, &pt, &sk)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let out = timed(&format!("inference on {} input ciphertexts", cts.len()), || {
        model.evaluate(&eval, &cts)
    })
    .map_err(err)?;
    let have = encryptor::decrypt(&params, &out, &sk)
        .and_then(|pt| enc.decode(&pt))
        .map_err(|e| e.to_string())?;
    let want: Vec<Complex64> =
        network.evaluate_plain(&xs).into_iter().map(|r| Complex64::new(r, 0.0)).collect();
    check("10 class scores vs the cleartext network", &want, &have[..want.len()], 12.0)?;
    let data = &crate::sim::resolve_data(std::path::Path::new("data"));
    if quick || !basalt_sim::source::exists(&data.join("machines")) {
        return Ok(());
    }
    let t = basalt_workloads::trace::record_inference(&params, net, rule, true).map_err(err)?;
    for m in ["osiris", "craterlake", "basalt_cpu"] {
        let machine = basalt_sim::Machine::load(crate::sim::machine_path(data, m))
            .map_err(|e| e.to_string())?;
        match basalt_sim::simulate(&machine, &t) {
            Ok(r) => eprintln!("   the same inference on {m:<12} {:>10.1} us", r.seconds * 1e6),
            Err(e) => eprintln!("   the same inference on {m:<12} cannot run: {e}"),
        }
    }
    eprintln!(
        "   (the papers' figures beside ours: `basalt sim reproduce osiris`, `… craterlake`)"
    );
    Ok(())
}

/// The same CKKS programs, recorded in trace mode, timed on every machine model.
fn accelerators(params: &Parameters, pbs_trace: &basalt_trace::Trace) -> Result<(), String> {
    use crate::trace_cmd::{Program, TraceArgs, record_program};
    step(&format!(
        "The same programs on the accelerator models ({}; traces recorded from the library)",
        params.name()
    ));
    let data = &crate::sim::resolve_data(std::path::Path::new("data"));
    if !basalt_sim::source::exists(&data.join("machines")) {
        eprintln!(
            "   (skipped: data/machines not found; set BASALT_DATA to the repository's data)"
        );
        return Ok(());
    }
    let programs = [(Program::Hmult, "HMult+relin+rescale"), (Program::Rotate, "rotation")];
    let mut traces = Vec::new();
    for (p, _) in programs {
        traces.push(record_program(params, &TraceArgs::new(p, params.name()))?);
    }
    // A fully packed bootstrap of Lattigo's N = 2^16 chain, traced without arithmetic.
    let btp_params = Parameters::preset("N16QP1546H192H32").map_err(|e| e.to_string())?;
    let btp = timed("trace a fully packed N = 2^16 bootstrap (no arithmetic)", || {
        record_program(&btp_params, &TraceArgs::new(Program::Bootstrap, "N16QP1546H192H32"))
    })?;
    traces.push(btp);
    eprintln!(
        "   {:<12} {:>22} {:>22} {:>22}",
        "machine", programs[0].1, programs[1].1, "bootstrap (2^15 slots)"
    );
    for m in ["osiris", "fab", "craterlake", "f1plus", "cpu", "basalt_cpu"] {
        let path = crate::sim::machine_path(data, m);
        if !basalt_sim::source::is_file(&path) {
            continue;
        }
        let machine = basalt_sim::Machine::load(path).map_err(|e| e.to_string())?;
        let mut cells = Vec::new();
        for t in &traces {
            cells.push(match basalt_sim::simulate(&machine, t) {
                Ok(r) => crate::compare::latency(r.seconds),
                Err(e) => format!("({e})").chars().take(22).collect(),
            });
        }
        eprintln!("   {m:<12} {:>22} {:>22} {:>22}", cells[0], cells[1], cells[2]);
    }
    let strix = basalt_sim::Machine::load(crate::sim::machine_path(data, "strix"))
        .map_err(|e| e.to_string())?;
    match basalt_sim::simulate(&strix, pbs_trace) {
        Ok(r) => {
            eprintln!("   strix        the batched PBS of the TFHE step: {:.1} us", r.seconds * 1e6)
        }
        Err(e) => eprintln!("   strix        cannot run the TFHE step's trace: {e}"),
    }
    eprintln!(
        "   (`basalt sim run --machine NAME --trace FILE` for utilisation and traffic; `cpu` is a \
         paper baseline, `basalt_cpu` this machine after `basalt sim calibrate`)"
    );
    Ok(())
}

/// The papers' tables beside the models' figures: per paper and role, rows modelled and rows
/// within tolerance (the quick tour runs the two papers that take milliseconds).
fn papers(quick: bool) -> Result<(), String> {
    let list: &[&str] =
        if quick { &["mxv", "strix"] } else { &["osiris", "fab", "mxv", "craterlake", "strix"] };
    step(&format!(
        "The papers' tables beside the models ({}; every row: docs/reproduction-status.md)",
        if quick { "HE-MxV and Strix" } else { "all five papers, about a minute" }
    ));
    let data = &crate::sim::resolve_data(std::path::Path::new("data"));
    if !basalt_repro::data::exists(&data.join("papers")) {
        eprintln!("   (skipped: data/papers not found; set BASALT_DATA to the repository's data)");
        return Ok(());
    }
    // One call for all five runs the papers in parallel; the quick tour names its two.
    let r = timed("reproduce", || {
        if !quick {
            return basalt_repro::library::reproduce(None, data);
        }
        list.iter().try_fold(basalt_repro::ReproReport::default(), |mut acc, p| {
            acc.rows.extend(basalt_repro::library::reproduce(Some(p), data)?.rows);
            Ok(acc)
        })
    })
    .map_err(|e| e.to_string())?;
    for p in list {
        for role in [basalt_repro::papers::Role::Target, basalt_repro::papers::Role::Validation] {
            let rows: Vec<_> = r.rows.iter().filter(|x| x.paper == *p && x.role == role).collect();
            if rows.is_empty() {
                continue;
            }
            let modelled = rows.iter().filter(|x| x.ours.is_some()).count();
            let within = rows.iter().filter(|x| x.within == Some(true)).count();
            eprintln!(
                "   {p:<11} {:<10} {:>3} rows, {modelled:>3} modelled, {within:>3} within tolerance",
                format!("{role:?}").to_lowercase(),
                rows.len()
            );
        }
    }
    eprintln!(
        "   (`basalt sim reproduce [paper]` for ours, theirs and how; why rows miss: \
         docs/reproduction.md)"
    );
    Ok(())
}

fn ckks(quick: bool) -> Result<Parameters, String> {
    let params = if quick {
        Parameters::new_insecure(ParametersLiteral::toy(12, 55, 40, 5, 56, 2, 3))
            .map_err(|e| e.to_string())?
    } else {
        Parameters::preset("LATTIGO_RESIDUAL").map_err(|e| e.to_string())?
    };
    let sec = params.security();
    step(&format!(
        "CKKS on {}: N = 2^{}, log QP = {:.0}, {} levels, dnum = {}, security ≈ {:.0} bits ({})",
        params.name(),
        params.log_n(),
        params.log_qp(),
        params.max_level(),
        params.dnum(),
        sec.bits,
        sec.attack
    ));
    let slots = params.max_slots();
    let kg = KeyGenerator::new(&params);
    let sk = timed("secret + public key", || kg.gen_secret_key());
    let pk = kg.gen_public_key(&sk);
    let keys = timed("relinearisation + 2 rotation + conjugation keys", || {
        kg.gen_evaluation_keys(&sk, &[1, 5], true, false)
    });
    let eval = Evaluator::new(&params, keys).map_err(|e| e.to_string())?;
    let enc = Encoder::new(&params);

    // Deterministic inputs in the unit disc.
    let x: Vec<Complex64> =
        (0..slots).map(|i| Complex64::from_polar(0.9, i as f64 * 0.37)).collect();
    let y: Vec<Complex64> = (0..slots)
        .map(|i| Complex64::new((i as f64 * 0.11).sin(), (i as f64 * 0.05).cos() * 0.5))
        .collect();
    let (level, scale) = (params.max_level(), params.default_scale());
    let err = |e: basalt_ckks::CkksError| e.to_string();
    let cx = timed(&format!("encode + encrypt {slots} complex slots"), || {
        enc.encode(&x, slots, level, scale).and_then(|pt| encryptor::encrypt_pk(&params, &pt, &pk))
    })
    .map_err(err)?;
    let cy =
        encryptor::encrypt_pk(&params, &enc.encode(&y, slots, level, scale).map_err(err)?, &pk)
            .map_err(err)?;
    let decrypt = |c: &basalt_ckks::Ciphertext| {
        encryptor::decrypt(&params, c, &sk).and_then(|pt| enc.decode(&pt))
    };
    check("decrypt(encrypt(x)) = x", &x, &decrypt(&cx).map_err(err)?, 20.0)?;

    let prod = timed("x · y: multiply + relinearise", || eval.mul_relin(&cx, &cy)).map_err(err)?;
    let prod = timed("rescale", || eval.rescale(&prod)).map_err(err)?;
    let want: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    check("x · y", &want, &decrypt(&prod).map_err(err)?, 20.0)?;

    let rot = timed("rotate x by 5 slots", || eval.rotate(&cx, 5)).map_err(err)?;
    let want: Vec<Complex64> = (0..slots).map(|i| x[(i + 5) % slots]).collect();
    check("rotate(x, 5)", &want, &decrypt(&rot).map_err(err)?, 20.0)?;

    let conj = timed("conjugate x", || eval.conjugate(&cx)).map_err(err)?;
    let want: Vec<Complex64> = x.iter().map(|v| v.conj()).collect();
    check("conj(x)", &want, &decrypt(&conj).map_err(err)?, 20.0)?;

    let hoisted =
        timed("rotate x by 1 and 5, hoisted (one ModUp)", || eval.rotate_hoisted(&cx, &[1, 5]))
            .map_err(err)?;
    let want: Vec<Complex64> = (0..slots).map(|i| x[(i + 1) % slots]).collect();
    check("hoisted rotate(x, 1)", &want, &decrypt(&hoisted[0]).map_err(err)?, 20.0)?;
    Ok(params)
}
