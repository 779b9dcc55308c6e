//! HELR training end to end on a small ring (N = 2^10, insecure, 4 samples of 4 features per
//! ciphertext): encrypted iterations and a real bootstrap of both NAG vectors against the
//! cleartext twin, trace mode against the real run, and the schedules of the CraterLake chains.

use basalt_circuits::Result;
use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::helr::Helr;
use basalt_circuits::testing::{precision_bits_real, toy_bootstrap_params};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Ciphertext, Encoder, Evaluator, KeyGenerator, Parameters, SecretDistribution, SecretKey,
};
use basalt_trace::{Event, Kernel, Trace, record};
use basalt_workloads::logreg::{Iteration, LogReg, record_logreg};
use num_complex::Complex64;

/// 2 data ciphertexts of 4 samples x 4 features per batch (16 slots).
const LR: LogReg =
    LogReg { helr: Helr { log_features: 2, log_samples: 2, gamma: 0.5, eta: 0.3 }, cts: 2 };
const ITERATIONS: usize = 3;

/// Lattigo's chain shape on N = 2^10 with ten 40-bit levels after the bootstrap (two
/// iterations), a 16-slot sparse bootstrap.
fn toy() -> (Parameters, BootstrapConfig) {
    let params = toy_bootstrap_params(10, 10, 1, 2, SecretDistribution::Hamming { h: 64 });
    let cfg =
        BootstrapConfig { cts_levels: 2, stc_levels: 1, ..BootstrapConfig::lattigo_default(4) };
    (params, cfg)
}

/// Bootstraps (inline) or bootstrap markers in a trace.
fn regions(t: &Trace, name: &str) -> usize {
    t.events.iter().filter(|e| matches!(e, Event::Enter { name: n } if n == name)).count()
}

/// Pseudo-random label-folded samples `z = y·x` in `[−0.5, 0.5]`: `batches[i][k]`.
fn samples() -> Vec<Vec<Vec<f64>>> {
    let per_batch = LR.cts << LR.helr.log_samples;
    let features = 1 << LR.helr.log_features;
    let wave = |i: usize| (i * 7919 % 101) as f64 / 100.0 - 0.5;
    (0..ITERATIONS)
        .map(|b| {
            (0..per_batch)
                .map(|k| (0..features).map(|f| wave(1 + b * 97 + k * 13 + f * 5)).collect())
                .collect()
        })
        .collect()
}

/// A run on ciphertexts (real keys and bootstrapper) or shapes (symbolic ones).
struct Run {
    bt: Bootstrapper,
    encaps: Option<Encapsulation>,
    eval: Evaluator,
    schedule: Vec<Iteration>,
    boot_scale: f64,
}

impl Run {
    fn new(sk: Option<&SecretKey>) -> Result<Run> {
        let (params, cfg) = toy();
        let kg = KeyGenerator::new(&params);
        let (bt, keys, encaps) = match sk {
            Some(sk) => {
                let bt = Bootstrapper::new(&params, cfg)?;
                let mut rots = bt.rotations();
                rots.extend(LR.rotations());
                let keys = kg.gen_evaluation_keys(sk, &rots, true, false);
                let encaps =
                    bt.config().ephemeral_h.map(|h| Encapsulation::generate(&params, sk, h));
                (bt, keys, encaps.transpose()?)
            }
            None => {
                let bt = Bootstrapper::symbolic(&params, cfg)?;
                let mut rots = bt.rotations();
                rots.extend(LR.rotations());
                let keys = kg.gen_symbolic_evaluation_keys(&rots, true, false);
                let encaps = bt.config().ephemeral_h.map(|h| Encapsulation::symbolic(&params, h));
                (bt, keys, encaps.transpose()?)
            }
        };
        let top = bt.budget().output_level;
        let schedule = LR.schedule(&params, top, top, ITERATIONS)?;
        let boot_scale = params.default_scale().min(bt.max_input_scale());
        let eval = Evaluator::new(&params, keys)?;
        Ok(Run { bt, encaps, eval, schedule, boot_scale })
    }

    /// Train on `batches` from `(v, w)` at the schedule's start, bootstrapping inline.
    fn train(
        &self,
        batches: &[Vec<Ciphertext>],
        v: &Ciphertext,
        w: &Ciphertext,
    ) -> (Result<Ciphertext>, Trace) {
        let mut boot = |ct: &Ciphertext| self.bt.bootstrap(&self.eval, self.encaps.as_ref(), ct);
        record(|| {
            LR.evaluate(&self.eval, &self.schedule, batches, (v, w), self.boot_scale, &mut boot)
        })
    }
}

#[test]
fn training_with_a_bootstrap_matches_the_twin_and_the_trace() -> Result<()> {
    let (params, _) = toy();
    let sk = KeyGenerator::new(&params).gen_secret_key();
    let run = Run::new(Some(&sk))?;
    assert_eq!(
        run.schedule.iter().map(|it| it.refresh).collect::<Vec<_>>(),
        [false, true, false],
        "ten levels hold two 5-level iterations"
    );
    let slots = LR.slots();
    let enc = Encoder::new(&params);
    let encrypt = |v: &[f64], level: usize| -> Result<Ciphertext> {
        let v: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let pt = enc.encode(&v, slots, level, params.default_scale())?;
        Ok(encrypt_sk(&params, &pt, &sk)?)
    };
    let data = samples();
    let per_ct = 1 << LR.helr.log_samples;
    let batches = data
        .iter()
        .zip(&run.schedule)
        .map(|(b, it)| b.chunks(per_ct).map(|c| encrypt(&c.concat(), it.level)).collect())
        .collect::<Result<Vec<Vec<_>>>>()?;
    let (v0, w0) = ([0.2, -0.1, 0.3, 0.05], [0.1, 0.0, 0.2, -0.1]);
    let start = run.schedule[0].level;
    let v = encrypt(&v0.repeat(per_ct), start)?;
    let w = encrypt(&w0.repeat(per_ct), start)?;
    let (out, real) = run.train(&batches, &v, &w);
    let out = out?;
    assert_eq!(regions(&real, "Bootstrap"), 1);

    let want = LR.train_plain(&data, &v0, &w0);
    let moved = want.iter().zip(&w0).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(moved > 0.05, "training that does not move the weights would pass anything: {want:?}");
    let have = enc.decode(&decrypt(&params, &out, &sk)?)?;
    let have: Vec<f64> = have.iter().map(|c| c.re).collect();
    let bits = precision_bits_real(&want.repeat(per_ct), &have);
    eprintln!("3 iterations, 1 bootstrap at N = 2^10: {bits:.1} bits against the twin");
    assert!(bits > 10.0, "{bits:.1} bits: {want:?} vs {have:?}");

    // Trace mode: shape-only keys, bootstrapper and ciphertexts record the real run.
    let sym = Run::new(None)?;
    let shape = |level: usize| -> Result<Ciphertext> {
        let mut ct = Ciphertext::symbolic(&params, level)?;
        ct.set_slots(slots);
        Ok(ct)
    };
    let batches = sym
        .schedule
        .iter()
        .map(|it| (0..LR.cts).map(|_| shape(it.level)).collect())
        .collect::<Result<Vec<Vec<_>>>>()?;
    let (r, traced) = sym.train(&batches, &shape(start)?, &shape(start)?);
    r?;
    assert!(real.kernels().eq(traced.kernels()), "the kernel stream must not depend on the data");

    // The reproduction's recorder: the same run with each bootstrap a marker.
    let refreshed = sym.bt.budget().output_level;
    let (marked, n) =
        record_logreg(&params, &LR, (start, ITERATIONS), (refreshed, sym.boot_scale), false)?;
    assert_eq!((n, marked.markers(basalt_trace::Marker::Bootstrap)), (1, 1));
    assert_eq!(regions(&marked, "HelrIteration"), ITERATIONS);
    Ok(())
}

#[test]
fn craterlake_chains_fix_the_schedule() -> Result<()> {
    // L = 38 residues = base 2 + 18 two-residue levels: 3 iterations first; then the 80-bit
    // bootstrap's 10 levels hold 2, the 128-bit one's 7 hold 1.
    let lr = LogReg::craterlake(1 << 15);
    assert_eq!((lr.cts, lr.helr.log_samples), (2, 7), "256 samples = 2 x 128 per ciphertext");
    for (preset, refreshed, boots) in
        [("CRATERLAKE_80_BOOT", 21, 14), ("CRATERLAKE_128_BOOT", 15, 27)]
    {
        let params = Parameters::preset_insecure(preset).expect("preset"); // CraterLake's sets
        let s = lr.schedule(&params, 37, refreshed, 30)?;
        assert_eq!(s.iter().filter(|it| it.refresh).count(), boots, "{preset}");
        assert!(s[..2].iter().all(|it| !it.refresh) && s[2].refresh, "{preset}");
    }
    // A short run at full size: one bootstrap marker, every batch read at its level.
    let params = Parameters::preset_insecure("CRATERLAKE_80_BOOT").expect("preset");
    let scale = params.default_scale();
    let (t, n) = record_logreg(&params, &lr, (37, 4), (21, scale), true)?;
    assert_eq!(n, 1);
    let mut loads: Vec<u32> = t
        .input_loads()
        .into_iter()
        .filter_map(|k| match *k {
            Kernel::CtLoad { limbs, .. } => Some(limbs),
            _ => None,
        })
        .collect();
    loads.sort_unstable();
    // v and w, then 2 per batch (38, 28, 18 and, after the bootstrap, 22 residues), and the
    // marker's output (22), which no operation of the trace stored.
    assert_eq!(loads, [18, 18, 22, 22, 22, 28, 28, 38, 38, 38, 38]);
    Ok(())
}

/// FAB-2's data-parallel iteration (partial gradients per share, summed in share order, the
/// update on one node) gives the bytes of the one-share iteration, bootstrap included, for
/// every share count; the shares cover the batch in order.
#[test]
fn sharded_iterations_are_bit_identical_to_the_single_share_one() -> Result<()> {
    use basalt_workloads::logreg::shares;
    assert_eq!(shares(5, 2)?, [0..3, 3..5]);
    assert_eq!(shares(2, 4)?, [0..1, 1..2]);
    assert!(shares(3, 0).is_err() && shares(0, 2).is_err());

    let (params, _) = toy();
    let sk = KeyGenerator::new(&params).gen_secret_key();
    let run = Run::new(Some(&sk))?;
    let lr = LogReg { cts: 3, ..LR };
    let enc = Encoder::new(&params);
    let encrypt = |v: &[f64], level: usize| -> Result<Ciphertext> {
        let v: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let pt = enc.encode(&v, lr.slots(), level, params.default_scale())?;
        Ok(encrypt_sk(&params, &pt, &sk)?)
    };
    let per_ct = 1 << lr.helr.log_samples;
    // The second iteration of the schedule bootstraps: run it from fresh weights at its level.
    let it = run.schedule[1];
    assert!(it.refresh);
    let data = samples().concat();
    let batch = (0..lr.cts)
        .map(|c| encrypt(&data[c * per_ct..(c + 1) * per_ct].concat(), it.level))
        .collect::<Result<Vec<_>>>()?;
    let v = encrypt(&[0.2, -0.1, 0.3, 0.05].repeat(per_ct), it.level)?;
    let w = encrypt(&[0.1, 0.0, 0.2, -0.1].repeat(per_ct), it.level)?;
    let working = v.scale();
    let mut boot = |ct: &Ciphertext| run.bt.bootstrap(&run.eval, run.encaps.as_ref(), ct);
    let bytes = |(v, w): (Ciphertext, Ciphertext)| (v.to_bytes().unwrap(), w.to_bytes().unwrap());
    let one =
        bytes(lr.step(&run.eval, it, &batch, (&v, &w), (run.boot_scale, working), &mut boot)?);
    for k in [2, 3] {
        let out = lr.step_in_shares(
            &run.eval,
            it,
            &batch,
            k,
            (&v, &w),
            (run.boot_scale, working),
            &mut boot,
        )?;
        assert!(bytes(out) == one, "{k} shares differ from one");
    }
    Ok(())
}
