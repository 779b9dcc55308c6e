//! Orion's LeNet (Osiris Set II) end to end: a small instance on a small ring (N = 2^11,
//! insecure) against its cleartext twin, trace mode against the real run, and the benchmark's
//! shape at OSIRIS_SET_II.

use basalt_circuits::Result;
use basalt_circuits::lintrans::Hoisting;
use basalt_circuits::testing::{Ctx, precision_bits_real, symbolic_like, toy_params};
use basalt_ckks::{Ciphertext, Parameters};
use basalt_workloads::lenet::{self, Shape};
use basalt_workloads::mnist::Net;
use basalt_workloads::network::{Layer, Model, Network, StrategyRule};

/// 8×8 images, 8 and 16 channels, 3×3 kernels: every layer of the benchmark's kind (stride-2
/// convolutions into two multiplexed blocks and into one, rotate-and-sum folds, squares).
const TOY: Shape = Shape { side: 8, channels: [8, 16], kernel: 3, hidden: 16, classes: 10 };

fn rule(hoisting: Hoisting) -> StrategyRule {
    StrategyRule { hoisting, gsc: true, max_partials: 4, of_limb: true }
}

/// Seven 40-bit levels over a 60-bit `q_0`: LeNet's depth, as Set II.
fn small_ring() -> Parameters {
    toy_params(11, 7, 40, 2)
}

/// Encrypt the toy image, run the toy LeNet, return (precision in bits, the input, the model,
/// the keys).
fn run(params: &Parameters, rule: StrategyRule) -> Result<(f64, Ciphertext, Model, Ctx)> {
    let image = lenet::test_image(TOY.side, 3);
    let net = lenet::lenet(TOY, 7, &image);
    let model = Model::prepare(params, &net, rule, false)?;
    let ctx = Ctx::new(params, &model.rotations())?;
    let ct = ctx.encrypt_real(&image, model.input_slots(), model.input_level())?;
    let out = model.evaluate(&ctx.eval, std::slice::from_ref(&ct))?;
    assert_eq!(out.level(), model.input_level() - 7, "one level per layer");
    assert_eq!(diagonals(&net).len(), 4, "every layer a hybrid-diagonal product");
    let want = net.evaluate_plain(&[image]);
    assert_eq!(want.len(), TOY.classes);
    let have: Vec<f64> = ctx.decrypt(&out)?.iter().take(TOY.classes).map(|c| c.re).collect();
    let spread = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 0.5, "the folded batch norms keep the scores near 1: {want:?}");
    Ok((precision_bits_real(&want, &have), ct, model, ctx))
}

#[test]
fn toy_lenet_matches_its_cleartext_twin() -> Result<()> {
    for h in [Hoisting::None, Hoisting::Double] {
        let (bits, ..) = run(&small_ring(), rule(h))?;
        eprintln!("toy LeNet, {h:?}: {bits:.1} bits");
        assert!(bits > 14.0, "{h:?}: {bits:.1} bits");
    }
    Ok(())
}

#[test]
fn trace_mode_records_what_the_real_inference_runs() -> Result<()> {
    let params = small_ring();
    let (_, ct, real_model, ctx) = run(&params, rule(Hoisting::Single))?;
    let (_, t_real) =
        basalt_trace::record(|| real_model.evaluate(&ctx.eval, std::slice::from_ref(&ct)));
    let other = lenet::lenet(TOY, 0, &lenet::test_image(TOY.side, 0));
    let shapes = Model::prepare(&params, &other, rule(Hoisting::Single), true)?;
    let sym = symbolic_like(&params, &ct)?;
    let (out, t_sym) = basalt_trace::record(|| shapes.evaluate(&ctx.eval, &[sym]));
    assert!(out?.is_symbolic());
    assert_eq!(t_real, t_sym, "the kernel stream must not depend on the data or the weights");
    Ok(())
}

/// The sparse layer's hybrid diagonals are the matrix: a layer given as dense rows and the
/// same matrix given by its entries compute the same product.
#[test]
fn a_sparse_layer_is_its_dense_matrix() -> Result<()> {
    let params = small_ring();
    let Layer::Dense { w, b } = Net::Mlp.build(5).layers[2].clone() else { panic!("dense") };
    let a = w
        .iter()
        .enumerate()
        .flat_map(|(r, row)| row.iter().enumerate().map(move |(c, &v)| (r, c, v)))
        .filter(|e| (e.0 + e.1) % 3 != 0)
        .collect::<Vec<_>>();
    let mut holes = w.clone();
    holes.iter_mut().enumerate().for_each(|(r, row)| {
        row.iter_mut().enumerate().filter(|(c, _)| (r + c) % 3 == 0).for_each(|(_, v)| *v = 0.0)
    });
    let net = |l: Layer| Network { name: "one layer", input_slots: 256, layers: vec![l] };
    let x: Vec<f64> = (0..128).map(|t| ((t * 37 % 101) as f64 / 101.0) - 0.5).collect();
    let mut outs = Vec::new();
    for n in [net(Layer::Dense { w: holes, b: b.clone() }), net(Layer::Sparse { a, b })] {
        let model = Model::prepare(&params, &n, rule(Hoisting::Double), false)?;
        let ctx = Ctx::new(&params, &model.rotations())?;
        let ct = ctx.encrypt_real(&x, 256, model.input_level())?;
        let y = ctx.decrypt(&model.evaluate(&ctx.eval, &[ct])?)?;
        let want = n.evaluate_plain(std::slice::from_ref(&x));
        let have: Vec<f64> = y.iter().take(want.len()).map(|c| c.re).collect();
        assert!(precision_bits_real(&want, &have) > 20.0);
        outs.push(want);
    }
    assert_eq!(outs[0].len(), 128);
    let gap = outs[0].iter().zip(&outs[1]).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(gap < 1e-12, "{gap}");
    Ok(())
}

/// Non-zero hybrid diagonals of each layer of `net`.
fn diagonals(net: &Network) -> Vec<usize> {
    net.layers
        .iter()
        .filter_map(|l| match l {
            Layer::Sparse { a, b } => {
                let mp = b.len().next_power_of_two();
                let mut d: Vec<usize> = a.iter().map(|&(r, c, _)| (c + mp - r) % mp).collect();
                d.sort_unstable();
                d.dedup();
                Some(d.len())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn orion_lenet_at_set_ii() -> Result<()> {
    use basalt_trace::{Event, Kernel};
    let net = Net::Lenet.build(1);
    assert_eq!(net.depth(), 7, "Set II's L_eff");
    assert_eq!(net.input_slots, 8192);
    let rows: Vec<usize> = net
        .layers
        .iter()
        .filter_map(|l| if let Layer::Sparse { b, .. } = l { Some(b.len()) } else { None })
        .collect();
    assert_eq!(rows, vec![6272, 3136, 512, 10], "32 x 14^2 and 64 x 7^2 multiplexed");
    // conv1: 8 blocks x 6 x 6 kernel offsets; conv2: 11 x 13 x 13 offsets, fewer mod 4096;
    // the dense layers all 512 and 16 padded rows.
    assert_eq!(diagonals(&net), vec![288, 1649, 512, 16]);
    let params = Parameters::preset_insecure("OSIRIS_SET_II").expect("preset");
    let mut rotations = Vec::new();
    for h in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
        let rule = StrategyRule { hoisting: h, gsc: true, max_partials: 72, of_limb: true };
        let t = basalt_workloads::trace::record_inference(&params, Net::Lenet, rule, true)?;
        let count = |f: &dyn Fn(&Kernel) -> bool| t.kernels().filter(|k| f(k)).count();
        // OF-Limb: one stored limb per diagonal, loaded once.
        let plain = count(&|k| matches!(k, Kernel::PlainLoad { .. }));
        assert_eq!(plain, 288 + 1649 + 512 + 16, "{h:?}");
        assert_eq!(count(&|k| matches!(k, Kernel::PlainLoad { limbs: 1, .. })), plain);
        let rot =
            t.events.iter().filter(|e| matches!(e, Event::Enter { name } if name == "Rotate"));
        let rot = rot.count();
        // One key per rotation and per square's relinearisation; hoisting shares
        // decompositions, never keys.
        assert_eq!(count(&|k| matches!(k, Kernel::KeyLoad { .. })), rot + 3, "{h:?}");
        rotations.push(rot);
    }
    assert!(rotations.iter().all(|&r| r == rotations[0]), "{rotations:?}");
    // BSGS: far fewer rotations than the 2,465 diagonals (plus 0 + 1 + 3 + 5 folds).
    assert!(rotations[0] < 300, "{rotations:?}");
    Ok(())
}
