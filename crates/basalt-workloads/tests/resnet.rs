//! A tiny ResNet of ResNet-20's structure (4×4 images, 2/4/8 channels, one block per stage, a
//! two-stage sign, the image at the level a bootstrap leaves: the top primes are the
//! bootstrap's, wider than the network's scale) run for real with bootstraps on a small
//! insecure ring against its cleartext twin; trace mode's bootstrap markers against inline
//! symbolic bootstraps; the trained networks on the digits (the `--quick` workload run
//! against its twin, the twins over the test split).

use basalt_circuits::Result;
use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::polynomial::minimax::{self, CompositeSign};
use basalt_circuits::testing::{precision_bits_real, toy_bootstrap_params};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Ciphertext, Encoder, Evaluator, KeyGenerator, Parameters, SecretDistribution};
use basalt_trace::{KernelKind, record};
use basalt_workloads::resnet::{
    Arch, Bootstrap, BootstrapMarker, ConvStrategy, Model, Network, Refresh, test_image,
};
use num_complex::Complex64;

const TINY: Arch =
    Arch { side: 4, in_channels: 3, base_channels: 2, blocks: 1, classes: 4, slots: 64 };

/// N = 2^10, five 40-bit levels after a bootstrap (of 64 sparse slots).
fn setup() -> (Parameters, Bootstrapper, CompositeSign) {
    let params = toy_bootstrap_params(10, 5, 2, 3, SecretDistribution::Hamming { h: 64 });
    let bt = Bootstrapper::new(&params, config()).unwrap();
    // Degrees 7 and 7: depth 3 + 3, so a sign never fits in one bootstrap's five levels.
    let sign = minimax::sign(&[7, 7], 0.05).unwrap();
    (params, bt, sign)
}

/// A message ratio of 2^24 puts the bootstrap's input scale (2^36) below the network's (2^40),
/// as on CraterLake's chain (2^48 against 2^56): the scale-lowering level is exercised.
fn config() -> BootstrapConfig {
    BootstrapConfig {
        cts_levels: 3,
        stc_levels: 2,
        log_message_ratio: 24.0,
        ..BootstrapConfig::lattigo_default(6)
    }
}

fn scales(params: &Parameters, bt: &Bootstrapper) -> (f64, f64) {
    let s = params.default_scale();
    assert!(bt.max_input_scale() < s);
    // The trace recorder reads it from the config, without building the circuit.
    assert_eq!(config().max_input_scale(params), bt.max_input_scale());
    (s, bt.max_input_scale())
}

/// `Model::prepare`, or with `share` `Model::prepare_sharing_keys`.
#[allow(clippy::too_many_arguments)]
fn prepare(
    share: bool,
    params: &Parameters,
    net: &Network,
    sign: &CompositeSign,
    level: usize,
    delta: (f64, f64),
    symbolic: bool,
) -> Result<Model> {
    let lattigo = ConvStrategy::LATTIGO;
    if share {
        Model::prepare_sharing_keys(params, net, sign, level, level, delta, lattigo, symbolic)
    } else {
        Model::prepare(params, net, sign, level, level, delta, lattigo, symbolic)
    }
}

#[test]
fn tiny_resnet_matches_its_cleartext_twin() -> Result<()> {
    tiny_resnet(false)
}

/// The steps chosen across the network for few keys (nested giant steps in some layers): the
/// same function, and trace mode still records the real run.
#[test]
fn tiny_resnet_sharing_keys_matches_its_twin_and_its_trace() -> Result<()> {
    tiny_resnet(true)
}

fn tiny_resnet(share: bool) -> Result<()> {
    let (params, bt, sign) = setup();
    let image = test_image(&TINY, 5);
    let net = Network::build(TINY, 11, &image)?;
    let delta = scales(&params, &bt);
    let out_level = bt.budget().output_level;
    let model = prepare(share, &params, &net, &sign, out_level, delta, false)?;
    let nested = model.transforms().filter(|lt| lt.split().outer.is_some()).count();
    assert_eq!(nested > 0, share, "{nested} transforms nest their giant steps");
    assert!(model.bootstraps() >= 7, "at least one per ReLU: {}", model.bootstraps());
    assert_eq!(TINY.bootstraps(&params, &sign, out_level, out_level, delta)?, model.bootstraps());
    eprintln!("tiny ResNet: {} bootstraps", model.bootstraps());

    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let mut rot = model.rotations();
    rot.extend(bt.rotations());
    rot.sort_unstable();
    rot.dedup();
    let eval = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &rot, true, false))?;
    let encaps = match bt.config().ephemeral_h {
        Some(h) => Some(Encapsulation::generate(&params, &sk, h)?),
        None => None,
    };
    let enc = Encoder::new(&params);
    let x: Vec<Complex64> = basalt_workloads::resnet::encode_image(&TINY, &image)?
        .iter()
        .map(|&v| Complex64::new(v, 0.0))
        .collect();
    let ct = encrypt_sk(&params, &enc.encode(&x, TINY.slots, model.input_level(), delta.0)?, &sk)?;
    let refresh = Bootstrap { bt: &bt, encaps: encaps.as_ref() };
    let (out, real) = record(|| model.evaluate(&eval, &refresh, &ct));
    let out = out?;
    // One evaluate for both: trace mode (with inline symbolic bootstraps) records the real run's
    // kernel stream, event for event.
    let sym = symbolic(&params, &sign, share)?;
    let inline = Bootstrap { bt: &sym.bt, encaps: Some(&sym.encaps) };
    let (r, traced) = record(|| sym.model.evaluate(&sym.eval, &inline, &sym.ct));
    r?;
    assert!(real.events == traced.events, "trace mode differs from the real run");
    let have: Vec<f64> =
        enc.decode(&decrypt(&params, &out, &sk)?)?.iter().take(4).map(|c| c.re).collect();

    let want = net.evaluate_plain(&image, Some(&sign))?;
    let exact = net.evaluate_plain(&image, None)?;
    let spread = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 1e-3, "a degenerate network would pass anything: {want:?}");
    let bits = precision_bits_real(&want, &have);
    eprintln!(
        "tiny ResNet: {bits:.1} bits vs the twin; twin vs exact ReLU {:.1} bits",
        precision_bits_real(&exact, &want)
    );
    assert!(bits > 12.0, "{bits:.1} bits: {want:?} vs {have:?}");
    Ok(())
}

/// The tiny network in trace mode: its model, keys, circuit, encapsulation and input, all
/// shape-only.
struct Symbolic {
    model: Model,
    eval: Evaluator,
    bt: Bootstrapper,
    encaps: Encapsulation,
    ct: Ciphertext,
    out_level: usize,
}

fn symbolic(params: &Parameters, sign: &CompositeSign, share: bool) -> Result<Symbolic> {
    let bt = Bootstrapper::symbolic(params, config())?;
    let net = Network::build(TINY, 11, &test_image(&TINY, 5))?;
    let delta = scales(params, &bt);
    let out_level = bt.budget().output_level;
    let model = prepare(share, params, &net, sign, out_level, delta, true)?;
    let mut rot = model.rotations();
    rot.extend(bt.rotations());
    rot.sort_unstable();
    rot.dedup();
    let eval = Evaluator::new(
        params,
        KeyGenerator::new(params).gen_symbolic_evaluation_keys(&rot, true, false),
    )?;
    let encaps = Encapsulation::symbolic(params, 32)?;
    let mut ct = Ciphertext::symbolic(params, model.input_level())?;
    ct.set_slots(TINY.slots);
    ct.set_scale(delta.0);
    Ok(Symbolic { model, eval, bt, encaps, ct, out_level })
}

/// Trace mode: the markers stand for exactly the bootstraps an inline (symbolic) bootstrap run
/// records, and the rest of the kernel stream is the same.
#[test]
fn bootstrap_markers_count_the_inline_bootstraps() -> Result<()> {
    let (params, _, sign) = setup();
    let Symbolic { model, eval, bt, encaps, ct, out_level } = symbolic(&params, &sign, false)?;
    let delta = scales(&params, &bt);
    let marker = BootstrapMarker { level: out_level };
    let (r, marked) = record(|| model.evaluate(&eval, &marker, &ct));
    r?;
    let inline = Bootstrap { bt: &bt, encaps: Some(&encaps) };
    let (r, full) = record(|| model.evaluate(&eval, &inline, &ct));
    r?;
    let markers = marked.markers(basalt_trace::Marker::Bootstrap);
    assert_eq!(markers, model.bootstraps());
    // Each bootstrap recorded on its own, from the very ciphertext the inference hands it:
    // the markers plus these are the inline run, kernel for kernel and load for load.
    struct Separately<'a> {
        bt: &'a Bootstrapper,
        encaps: &'a Encapsulation,
        traces: std::cell::RefCell<Vec<basalt_trace::Trace>>,
    }
    impl Refresh for Separately<'_> {
        fn output_level(&self) -> usize {
            self.bt.budget().output_level
        }
        fn refresh(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
            let (r, t) = record(|| self.bt.bootstrap(eval, Some(self.encaps), ct));
            self.traces.borrow_mut().push(t);
            r
        }
    }
    let sep = Separately { bt: &bt, encaps: &encaps, traces: Default::default() };
    let (r, _) = record(|| model.evaluate(&eval, &sep, &ct));
    r?;
    let boots = sep.traces.into_inner();
    assert_eq!(boots.len(), markers);
    // Each is the same bootstrap as one of a fresh level-0 ciphertext, but for its I/O.
    let mut one = Ciphertext::symbolic(&params, 0)?;
    one.set_slots(TINY.slots);
    one.set_scale(delta.1);
    let (r, boot) = record(|| bt.bootstrap(&eval, Some(&encaps), &one));
    r?;
    let compute = |t: &basalt_trace::Trace| {
        let mut c = t.counts();
        c.retain(|k, _| !matches!(k, KernelKind::CtLoad | KernelKind::CtStore));
        c
    };
    assert!(boots.iter().all(|b| compute(b) == compute(&boot)));
    for (kind, n) in full.counts() {
        let want = marked.counts().get(&kind).copied().unwrap_or(0)
            + boots.iter().map(|b| b.counts().get(&kind).copied().unwrap_or(0)).sum::<u64>();
        assert_eq!(n, want, "{kind:?}");
    }
    Ok(())
}

/// [48]'s composite sign: degrees 15, 15, 27, depth 4 + 4 + 5. SIGN_EPS = 2^-9 is the smallest
/// power of two at which it reaches [47]'s α = 13 (error ≤ 2^-13 on [ε, 1]); at 2^-10 it does
/// not. The time does not depend on ε, only the ReLU's accuracy near 0.
#[test]
fn resnet20_sign_is_lee_et_al_composite() {
    use basalt_workloads::resnet::{SIGN_DEGREES, SIGN_EPS};
    let s = minimax::sign(&SIGN_DEGREES, SIGN_EPS).unwrap();
    assert_eq!(s.degrees(), vec![15, 15, 27]);
    assert_eq!(s.depth(), 13);
    assert!(s.error() <= 2f64.powi(-13), "{:e}", s.error());
    let finer = minimax::sign(&SIGN_DEGREES, SIGN_EPS / 2.0).unwrap();
    assert!(finer.error() > 2f64.powi(-13), "{:e}", finer.error());
    for x in [SIGN_EPS, 0.01, 0.3, 1.0] {
        assert!((s.evaluate_plain(x) - 1.0).abs() <= 2f64.powi(-13), "{x}");
        assert!((s.evaluate_plain(-x) + 1.0).abs() <= 2f64.powi(-13), "{x}");
    }
}

/// Full size on CraterLake's reconstructed chains: the bootstrap count of the reproduced rows
/// (docs/reproduction-notes.md "ResNet-20 rows"), and what entering at the bootstrap's output level
/// instead of the top would cost.
#[test]
fn resnet20_bootstrap_counts_on_craterlake_chains() -> Result<()> {
    use basalt_circuits::bootstrap::config::for_preset;
    use basalt_workloads::resnet::{SIGN_DEGREES, SIGN_EPS};
    let sign = minimax::sign(&SIGN_DEGREES, SIGN_EPS)?;
    let mut counts = Vec::new();
    for preset in ["CRATERLAKE_80_BOOT", "CRATERLAKE_128_BOOT", "CRATERLAKE_200_BOOT"] {
        let params = Parameters::preset_insecure(preset).unwrap(); // CraterLake's sets
        let cfg = for_preset(preset, None, params.log_n()).unwrap();
        let arch = Arch { slots: 1 << cfg.log_slots, ..Arch::RESNET20 };
        let s = params.default_scale();
        let scales = (s, s.min(cfg.max_input_scale(&params)));
        let out = cfg.budget(&params)?.output_level;
        for input in [params.max_level(), out] {
            counts.push(arch.bootstraps(&params, &sign, input, out, scales)?);
        }
    }
    eprintln!("bootstraps (80, 128, 200 bits; each top, refreshed): {counts:?}");
    // 200 bits keeps the 80-bit levels at N = 2^17 (2^16 slots): the same network.
    assert_eq!(counts, vec![35, 37, 62, 66, 35, 37]);
    Ok(())
}

/// Osiris' Set IV (§VI, Table II): the network runs on `OSIRIS_SET_IV` (9 single-prime levels)
/// and bootstraps 2^14 slots on `OSIRIS_SET_IV_BOOT`, whose bootstrap returns Set IV's 11-limb
/// top. Run on the bootstrapping chain itself, its residual levels are double-prime (Basalt drops
/// a fixed number of primes per rescale), so only 4 remain and the sign's degree-27 stage
/// (depth 5, plus 1 for the product) does not fit: that is why the rows join two presets.
#[test]
fn resnet20_on_osiris_set_iv() -> Result<()> {
    use basalt_circuits::CircuitError;
    use basalt_circuits::bootstrap::config::for_preset;
    use basalt_workloads::resnet::{SIGN_DEGREES, SIGN_EPS};
    let sign = minimax::sign(&SIGN_DEGREES, SIGN_EPS)?;
    let boot = Parameters::preset("OSIRIS_SET_IV_BOOT").unwrap();
    let cfg = for_preset("OSIRIS_SET_IV_BOOT", Some(14), boot.log_n()).unwrap();
    let arch = Arch { slots: 1 << cfg.log_slots, ..Arch::RESNET20 };
    let out = cfg.budget(&boot)?.output_level;
    let set_iv = Parameters::preset("OSIRIS_SET_IV").unwrap();
    assert_eq!(out, set_iv.max_level(), "the bootstrap ends at Set IV's top");
    let s = set_iv.default_scale();
    assert!(cfg.max_input_scale(&boot) >= s, "no scale-lowering level at Δ = 2^36");
    let n = arch.bootstraps(&set_iv, &sign, out, out, (s, s))?;
    eprintln!("ResNet-20 on Set IV: {n} bootstraps");
    assert_eq!(n, 37);
    let on_boot = arch.bootstraps(&boot, &sign, out, out, (s, s));
    assert!(matches!(on_boot, Err(CircuitError::NotEnoughLevels { needed: 5, available: 4, .. })));
    Ok(())
}

/// The linear layers' strategy reaches the trace: double hoisting in the giant-step-centric
/// order changes the kernels, not the levels or the bootstraps.
#[test]
fn conv_strategy_changes_kernels_not_bootstraps() -> Result<()> {
    use basalt_circuits::lintrans::{GscOrder, Hoisting};
    let (params, bt, sign) = setup();
    let net = Network::build(TINY, 11, &test_image(&TINY, 5))?;
    let delta = scales(&params, &bt);
    let out = bt.budget().output_level;
    let gsc = GscOrder::GiantStepCentric { max_partials: 4, of_limb: true };
    let mut traces = Vec::new();
    for conv in [ConvStrategy::LATTIGO, ConvStrategy { hoisting: Hoisting::Double, order: gsc }] {
        let model = Model::prepare(&params, &net, &sign, out, out, delta, conv, true)?;
        let keys = KeyGenerator::new(&params).gen_symbolic_evaluation_keys(
            &model.rotations(),
            false,
            false,
        );
        let eval = Evaluator::new(&params, keys)?;
        let mut ct = Ciphertext::symbolic(&params, model.input_level())?;
        ct.set_slots(TINY.slots);
        ct.set_scale(delta.0);
        let marker = BootstrapMarker { level: out };
        let (r, t) = record(|| model.evaluate(&eval, &marker, &ct));
        r?;
        traces.push((model.bootstraps(), t.counts()));
    }
    assert_eq!(traces[0].0, traces[1].0);
    assert_ne!(traces[0].1, traces[1].1);
    Ok(())
}

fn split_score(r: &serde_json::Value, k: &str) -> f64 {
    r["test_split_plaintext"][k].as_f64().unwrap()
}

/// The `--quick` workload: the trained toy ResNet (4×4×3 digits, 4/8/16 channels) encrypted
/// on N = 2^10 with real bootstraps agrees with its twin (the same (7, 7) composite ReLU); the
/// whole test split in the clear classifies digits with the exact ReLU and with the twin's.
#[test]
fn quick_resnet20_agrees_with_its_twin_on_digits() {
    use basalt_workloads::registry::{self, RunOptions};
    let opts = RunOptions { quick: true, threads: Some(2), ..RunOptions::default() };
    let r = registry::run("resnet20", &opts).unwrap();
    eprintln!("{r}");
    assert_eq!(r["security"]["meets_128"], false, "a toy ring must not claim security");
    assert!(r["images"].as_u64().unwrap() >= 3, "{r}");
    assert!(r["bootstraps_per_image"].as_u64().unwrap() >= 7, "{r}");
    assert!(r["accuracy"]["agreement"].as_f64().unwrap() >= 0.99, "{r}");
    assert!(r["precision_bits"].as_f64().unwrap() > 10.0, "{r}");
    assert_eq!(r["test_split_plaintext"]["images"], 450);
    assert!(split_score(&r, "exact_relu") > 0.6, "trained weights classify digits: {r}");
    assert!(split_score(&r, "approx_relu") > 0.6, "{r}");
    let peak = split_score(&r, "max_relu_input");
    assert!(peak > 0.1 && peak <= 1.0, "ReLU inputs in the sign's domain: {r}");
    // The refusal's estimate counts exactly the keys the run made.
    let est = &r["memory_estimate_bytes"];
    let made = r["key_bytes"].as_u64().unwrap() + r["encapsulation_key_bytes"].as_u64().unwrap();
    let counted = est["bootstrap_keys"].as_u64().unwrap() + est["network_keys"].as_u64().unwrap();
    assert_eq!(made, counted, "{r}");
    assert!(r["rotation_keys"].as_u64().unwrap() > 0, "{r}");
}

/// The full-size run (CRATERLAKE_80_BOOT, 2^15 slots) counted from shapes, nothing generated:
/// with the diagonals encoded at use and each Galois key holding the parts of its levels only,
/// it needs well under 20 GiB (pre-encoded, the diagonals alone would take ~60 GiB), and the steps
/// chosen for shared keys need fewer key bytes than the per-layer ones.
#[test]
fn full_size_resnet20_memory_fits_in_20_gib() -> Result<()> {
    use basalt_circuits::bootstrap::config::for_preset;
    use basalt_workloads::resnet::trained;
    use basalt_workloads::resnet_run::{Memory, relu_sign};
    let name = "CRATERLAKE_80_BOOT";
    let params = Parameters::preset_insecure(name).unwrap(); // CraterLake's own 80-bit set
    let cfg = for_preset(name, Some(15), params.log_n()).unwrap();
    let bt = Bootstrapper::symbolic(&params, cfg)?;
    let net = trained(Arch { slots: 1 << 15, ..Arch::RESNET20 }).unwrap();
    let sign = relu_sign(false)?;
    let s = params.default_scale();
    let delta = (s, s.min(bt.max_input_scale()));
    let out = bt.budget().output_level;
    let shared = prepare(true, &params, &net, &sign, out, delta, true)?;
    let per_layer = prepare(false, &params, &net, &sign, out, delta, true)?;
    let m = Memory::of(&params, &bt, &shared)?;
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    eprintln!("{}", m.to_json());
    eprintln!(
        "total {:.2} GiB; network keys {:.2} GiB ({} rotations) against {:.2} GiB ({}) with \
         per-layer steps; pre-encoded diagonals {:.1} GiB",
        gib(m.total()),
        gib(m.network_keys),
        shared.rotations().len(),
        gib(Memory::of(&params, &bt, &per_layer)?.network_keys),
        per_layer.rotations().len(),
        gib(per_layer.stored_plaintext_bytes()),
    );
    assert!(gib(m.total()) < 20.0, "{}", m.to_json());
    assert!(m.network_keys < Memory::of(&params, &bt, &per_layer)?.network_keys);
    assert_eq!(shared.bootstraps(), per_layer.bootstraps());
    Ok(())
}

/// ResNet-20's trained weights: the shipped file loads into ResNet-20's shape, and the twin
/// with the full-size composite ReLU (degrees 15, 15, 27) classifies the first test images
/// as the exact network does. (The whole split: `cargo run --release -p basalt-workloads
/// --example resnet_plaintext`.)
#[test]
fn trained_resnet20_classifies_digits() -> Result<()> {
    use basalt_workloads::resnet::{score_split, trained};
    use basalt_workloads::resnet_run::relu_sign;
    let net = trained(Arch { slots: 1 << 15, ..Arch::RESNET20 }).unwrap();
    let test = basalt_workloads::digits::load().unwrap().test;
    let s = score_split(&net, &relu_sign(false)?, &test[..16])?;
    eprintln!("ResNet-20, first 16 test images: {s:?}");
    assert!(s.exact >= 0.8 && s.approx >= 0.8, "{s:?}");
    assert!(s.agreement >= 0.9, "{s:?}");
    assert!(s.max_relu_input <= 1.0);
    Ok(())
}

/// Trained weights exist only for ResNet-20 and the toy; any other shape is named.
#[test]
fn an_untrained_resnet_shape_is_refused() {
    let e = basalt_workloads::resnet::trained(TINY).unwrap_err().to_string();
    assert!(e.contains("no trained ResNet") && e.contains("base_channels: 2"), "{e}");
}
