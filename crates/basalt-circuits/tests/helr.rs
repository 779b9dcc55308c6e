//! HELR iteration: the encrypted gradient and NAG step against a cleartext twin (toy ring), and
//! the levels and key switches of one iteration at FAB's parameters (shape-only).

use basalt_circuits::Result;
use basalt_circuits::helr::{Helr, SIGMOID3, gradient, update};
use basalt_circuits::testing::{Ctx, precision_bits_real, toy_params};
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::{Event, Kernel, Trace, record};

/// Key switches of a trace (one key load each).
fn key_loads(t: &Trace) -> usize {
    t.events.iter().filter(|e| matches!(e, Event::Kernel(Kernel::KeyLoad { .. }))).count()
}

/// Cleartext twin: per block, `γ·z_k·σ3(⟨z_k, v⟩)` summed over the blocks, then the NAG step.
fn plain(z: &[f64], v: &[f64], w: &[f64], h: &Helr) -> (Vec<f64>, Vec<f64>) {
    let [c0, c1, c3] = SIGMOID3;
    let block = 1usize << h.log_features;
    let mut g = vec![0.0; block];
    for k in 0..z.len() / block {
        let zk = &z[k * block..(k + 1) * block];
        let ip: f64 = zk.iter().zip(&v[..block]).map(|(a, b)| a * b).sum();
        let s = c0 + c1 * ip + c3 * ip * ip * ip;
        g.iter_mut().zip(zk).for_each(|(gi, zi)| *gi += h.gamma * zi * s);
    }
    let w_next: Vec<f64> = (0..z.len()).map(|i| v[i] + g[i % block]).collect();
    let v_next = w_next.iter().zip(w).map(|(a, b)| (1.0 - h.eta) * a + h.eta * b).collect();
    (w_next, v_next)
}

#[test]
fn gradient_and_nag_step_match_the_cleartext_twin() -> Result<()> {
    // 2^10 slots: 64 samples of 16 features.
    let h = Helr { log_features: 4, log_samples: 6, gamma: 0.1, eta: 0.3 };
    let slots = 1usize << (h.log_features + h.log_samples);
    let params = toy_params(11, 7, 40, 3);
    let ctx = Ctx::new(&params, &h.rotations())?;
    let wave = |i: usize, a: f64| a * ((i * 7 % 13) as f64 / 6.0 - 1.0);
    let z: Vec<f64> = (0..slots).map(|i| wave(i, 0.5)).collect();
    let v: Vec<f64> = (0..slots).map(|i| wave(i % 16 + 3, 0.4)).collect();
    let w: Vec<f64> = (0..slots).map(|i| wave(i % 16 + 5, 0.3)).collect();
    let (zc, vc) = (ctx.encrypt_real(&z, slots, 6)?, ctx.encrypt_real(&v, slots, 6)?);
    let g = gradient(&ctx.eval, &zc, &vc, &h)?;
    assert_eq!(g.level(), 2, "the gradient takes 4 levels");
    // `w` as the previous iteration left it: at the gradient's level and scale.
    let w3 = ctx.encrypt_real(&w, slots, 3)?;
    let to_g = g.scale() * params.q()[3] as f64 / w3.scale();
    let wc = ctx.eval.rescale(&ctx.eval.mul_const_scaled(&w3, 1.0, to_g)?)?;
    let (w_next, v_next) = update(&ctx.eval, &g, &vc, &wc, &h)?;
    assert_eq!(v_next.level(), 1, "5 levels per iteration (FAB §5.5)");
    let (want_w, want_v) = plain(&z, &v, &w, &h);
    let re = |ct: &Ciphertext| -> Result<Vec<f64>> {
        Ok(ctx.decrypt(ct)?.iter().map(|c| c.re).collect())
    };
    assert!(precision_bits_real(&want_w, &re(&w_next)?) > 12.0);
    assert!(precision_bits_real(&want_v, &re(&v_next)?) > 12.0);
    Ok(())
}

#[test]
fn one_iteration_at_fab_parameters_costs_the_stated_key_switches() -> Result<()> {
    let params = Parameters::preset("FAB").expect("FAB preset");
    let h = Helr::fab();
    let keys =
        KeyGenerator::new(&params).gen_symbolic_evaluation_keys(&h.rotations(), false, false);
    let eval = Evaluator::new(&params, keys)?;
    let ct = |level| Ciphertext::symbolic(&params, level);
    let (z, v) = (ct(6)?, ct(6)?);
    let (g, t) = record(|| gradient(&eval, &z, &v, &h));
    let g = g?;
    // 4 relinearisations + 2·8 rotations, each one key load.
    assert_eq!(key_loads(&t), 4 + 16);
    let mut w = ct(g.level())?;
    w.set_scale(g.scale());
    let (r, t) = record(|| update(&eval, &g, &v, &w, &h));
    let (_, v_next) = r?;
    assert_eq!(key_loads(&t), 7, "rotate-and-sum over 128 samples");
    assert_eq!(v_next.level(), 1, "6 levels after FAB's bootstrap, 5 used");
    Ok(())
}
