//! The LSTM recurrence end to end on a small ring (N = 2^10, insecure, a 16-wide state):
//! encrypted steps and bootstraps against the cleartext twin, trace mode against the real run,
//! and the intervals the CraterLake chains allow.

use basalt_circuits::Result;
use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::lintrans::Hoisting;
use basalt_circuits::testing::{precision_bits_real, random_matrix, toy_bootstrap_params};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Ciphertext, Encoder, Evaluator, KeyGenerator, Parameters, SecretDistribution, SecretKey,
};
use basalt_trace::{Event, Kernel, Trace};
use basalt_workloads::lstm::{self, Lstm, LstmModel};
use basalt_workloads::network::StrategyRule;
use basalt_workloads::trace::{record_lstm, record_lstm_with};
use num_complex::Complex64;

const RULE: StrategyRule =
    StrategyRule { hoisting: Hoisting::Single, gsc: false, max_partials: 4, of_limb: true };
const WIDTH: usize = 16;

/// Lattigo's chain shape on N = 2^10: six 40-bit levels after the bootstrap (two steps),
/// SlotToCoeff 1, EvalMod 8, CoeffToSlot 2; a 16-slot sparse bootstrap.
fn toy() -> (Parameters, BootstrapConfig) {
    let params = toy_bootstrap_params(10, 6, 1, 2, SecretDistribution::Hamming { h: 64 });
    let cfg = BootstrapConfig {
        cts_levels: 2,
        stc_levels: 1,
        ..BootstrapConfig::lattigo_default(WIDTH.trailing_zeros())
    };
    (params, cfg)
}

struct Run {
    params: Parameters,
    sk: SecretKey,
    model: LstmModel,
    bt: Bootstrapper,
    encaps: Option<Encapsulation>,
    eval: Evaluator,
}

impl Run {
    fn new(lstm: &Lstm) -> Result<Run> {
        let (params, cfg) = toy();
        let bt = Bootstrapper::new(&params, cfg)?;
        let model = LstmModel::prepare(&params, lstm, &bt, RULE, false)?;
        let sk = KeyGenerator::new(&params).gen_secret_key();
        let mut rots = bt.rotations();
        rots.extend(model.rotations());
        let keys = KeyGenerator::new(&params).gen_evaluation_keys(&sk, &rots, true, false);
        let encaps = match bt.config().ephemeral_h {
            Some(h) => Some(Encapsulation::generate(&params, &sk, h)?),
            None => None,
        };
        let eval = Evaluator::new(&params, keys)?;
        Ok(Run { params, sk, model, bt, encaps, eval })
    }

    fn encrypt(&self, v: &[f64], level: usize) -> Result<Ciphertext> {
        let v: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let enc = Encoder::new(&self.params);
        let pt = enc.encode(&v, self.model.slots(), level, self.model.scale())?;
        Ok(encrypt_sk(&self.params, &pt, &self.sk)?)
    }

    fn decrypt(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        let enc = Encoder::new(&self.params);
        Ok(enc.decode(&decrypt(&self.params, ct, &self.sk)?)?.iter().map(|c| c.re).collect())
    }
}

/// Bootstraps in a trace.
fn bootstraps(t: &Trace) -> usize {
    t.events.iter().filter(|e| matches!(e, Event::Enter { name } if name == "Bootstrap")).count()
}

#[test]
fn encrypted_steps_and_bootstraps_match_the_cleartext_twin_and_the_trace() -> Result<()> {
    let lstm = Lstm::new(WIDTH, 3);
    let run = Run::new(&lstm)?;
    assert_eq!(run.model.steps_per_bootstrap(), 2, "6 levels hold two 3-level steps");
    // Five steps: bootstraps after the 2nd and 4th, the 5th ends unrefreshed.
    let h0 = random_matrix(1, WIDTH, 0.5, 11).remove(0);
    let xs = random_matrix(5, WIDTH, 1.0, 12);
    let h0_ct = run.encrypt(&h0, run.model.level(0))?;
    let x_cts = xs
        .iter()
        .enumerate()
        .map(|(i, x)| run.encrypt(x, run.model.level(i)))
        .collect::<Result<Vec<_>>>()?;
    let (out, real) = basalt_trace::record(|| {
        run.model.evaluate(&run.eval, &run.bt, run.encaps.as_ref(), &h0_ct, &x_cts)
    });
    let out = out?;
    assert_eq!(out.level(), run.model.level(0) - 3 * run.params.primes_per_rescale());
    assert_eq!(bootstraps(&real), 2);

    let want = lstm.evaluate_plain(&h0, &xs);
    let spread = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 0.1, "a vanishing state would pass anything: {want:?}");
    let have = run.decrypt(&out)?;
    let bits = precision_bits_real(&want, &have[..WIDTH]);
    eprintln!("5 steps, 2 bootstraps at N = 2^10: {bits:.1} bits against the twin");
    assert!(bits > 10.0, "{bits:.1} bits");

    // Trace mode (shape-only weights, bootstrapper, keys and ciphertexts) records the real run.
    let (params, cfg) = toy();
    let sym = record_lstm_with(&params, cfg, WIDTH, 5, RULE, false)?;
    assert!(real.kernels().eq(sym.kernels()), "the kernel stream must not depend on the data");
    Ok(())
}

#[test]
fn the_twin_keeps_a_live_state_over_the_papers_sequence() {
    // 150 steps (50 bootstraps x 3 steps on CRATERLAKE_80_BOOT) of the 128-wide benchmark:
    // the degree-3 tanh keeps the state bounded and alive, so the timed program is a
    // meaningful recurrence, not one that decays to zero or overflows σ's interval.
    let lstm = Lstm::new(lstm::HIDDEN, 0);
    let xs = random_matrix(lstm::BOOTSTRAPS * 3, lstm::HIDDEN, 1.0, 5);
    let h = lstm.evaluate_plain(&vec![0.0; lstm::HIDDEN], &xs);
    let max = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(max > 0.1 && max < 1.0, "{max}");
}

#[test]
fn craterlake_chains_fix_the_interval_and_the_bootstraps() -> Result<()> {
    // 80-bit (and 200-bit, N = 2^17): 10 two-residue levels after the bootstrap hold 3 steps;
    // 128-bit: 7 hold 2.
    for (preset, per_boot) in
        [("CRATERLAKE_80_BOOT", 3), ("CRATERLAKE_128_BOOT", 2), ("CRATERLAKE_200_BOOT", 3)]
    {
        let params = Parameters::preset_insecure(preset).expect("preset"); // CraterLake's sets
        let t = record_lstm(&params, preset, 2 * per_boot, RULE, true)?;
        assert_eq!(bootstraps(&t), 2, "{preset}");
        // One input per step, read at its step's level, and the state: the program's inputs.
        let loads: Vec<u32> = t
            .input_loads()
            .into_iter()
            .filter_map(|k| match *k {
                Kernel::CtLoad { limbs, .. } => Some(limbs),
                _ => None,
            })
            .collect();
        assert_eq!(loads.len(), 1 + 2 * per_boot, "{preset}");
        assert_eq!(loads[0], loads[1], "{preset}: h_0 and x_0 at the bootstrap's output");
        assert_eq!(loads[1] - loads[2], 6, "{preset}: a step is 3 two-residue levels");
    }
    Ok(())
}
