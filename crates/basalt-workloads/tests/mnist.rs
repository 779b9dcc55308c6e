//! The MNIST networks end to end on a small ring (N = 2^11, insecure, the papers' layer
//! shapes) against their cleartext twins, and trace mode against the real run.

use basalt_circuits::Result;
use basalt_circuits::lintrans::Hoisting;
use basalt_circuits::testing::{Ctx, precision_bits_real, symbolic_like, toy_params};
use basalt_ckks::{Ciphertext, Parameters};
use basalt_workloads::mnist::{self, Net};
use basalt_workloads::network::{Model, StrategyRule};

const GSC_DH: StrategyRule =
    StrategyRule { hoisting: Hoisting::Double, gsc: true, max_partials: 4, of_limb: true };

/// Five 40-bit levels over a 60-bit `q_0`: the networks' depth.
fn small_ring() -> Parameters {
    toy_params(11, 5, 40, 2)
}

/// Encrypt `net`'s inputs for `image`, run the model, return (decrypted outputs, the real
/// run's inputs, the model, the keys).
fn run(
    params: &Parameters,
    net: Net,
    rule: StrategyRule,
) -> Result<(f64, Vec<Ciphertext>, Model, Ctx)> {
    let network = net.build(7);
    let model = Model::prepare(params, &network, rule, false)?;
    let ctx = Ctx::new(params, &model.rotations())?;
    let image = mnist::test_image(3);
    let xs = net.inputs(&image);
    let cts = xs
        .iter()
        .map(|x| ctx.encrypt_real(x, model.input_slots(), model.input_level()))
        .collect::<Result<Vec<_>>>()?;
    let out = model.evaluate(&ctx.eval, &cts)?;
    assert_eq!(out.level(), model.input_level() - network.depth(), "one level per layer");
    let want = network.evaluate_plain(&xs);
    assert_eq!(want.len(), 10);
    let have: Vec<f64> = ctx.decrypt(&out)?.iter().take(10).map(|c| c.re).collect();
    let spread = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 1e-3, "a degenerate network would pass anything: {want:?}");
    Ok((precision_bits_real(&want, &have), cts, model, ctx))
}

#[test]
fn lola_matches_its_cleartext_twin() -> Result<()> {
    let (bits, ..) = run(&small_ring(), Net::Lola, GSC_DH)?;
    assert!(bits > 14.0, "LoLa: {bits:.1} bits");
    Ok(())
}

#[test]
fn mlp_matches_its_cleartext_twin() -> Result<()> {
    let rule =
        StrategyRule { hoisting: Hoisting::Single, gsc: false, max_partials: 4, of_limb: true };
    let (bits, ..) = run(&small_ring(), Net::Mlp, rule)?;
    assert!(bits > 14.0, "MLP: {bits:.1} bits");
    Ok(())
}

#[test]
fn lola_convolution_representation_is_the_strided_convolution() {
    let net = mnist::lola(1);
    let image = mnist::test_image(2);
    let xs = Net::Lola.inputs(&image);
    assert_eq!((xs.len(), xs[0].len()), (25, 845));
    let direct = mnist::lola_conv_direct(&net, &image);
    let first = basalt_workloads::network::Network { layers: net.layers[..1].to_vec(), ..net };
    let packed = first.evaluate_plain(&xs);
    assert_eq!(direct, packed);
}

#[test]
fn trace_mode_records_what_the_real_inference_runs() -> Result<()> {
    let params = small_ring();
    let (_, cts, real_model, ctx) = run(&params, Net::Lola, GSC_DH)?;
    let (_, t_real) = basalt_trace::record(|| real_model.evaluate(&ctx.eval, &cts));
    let shapes = Model::prepare(&params, &Net::Lola.build(0), GSC_DH, true)?;
    let sym = cts.iter().map(|c| symbolic_like(&params, c)).collect::<Result<Vec<_>>>()?;
    let (out, t_sym) = basalt_trace::record(|| shapes.evaluate(&ctx.eval, &sym));
    assert!(out?.is_symbolic());
    assert_eq!(t_real, t_sym, "the kernel stream must not depend on the data or the weights");
    Ok(())
}

#[test]
fn a_chain_shorter_than_the_network_is_an_error() {
    let params = toy_params(11, 4, 40, 2);
    let e = Model::prepare(&params, &mnist::mlp(0), GSC_DH, true).unwrap_err();
    assert!(e.to_string().contains("level"), "{e}");
}

/// Key switches of a trace (one key load each).
fn key_loads(t: &basalt_trace::Trace) -> usize {
    use basalt_trace::{Event, Kernel};
    t.events.iter().filter(|e| matches!(e, Event::Kernel(Kernel::KeyLoad { .. }))).count()
}

#[test]
fn lola_at_osiris_set_i_switches_keys_as_the_packing_says() -> Result<()> {
    use basalt_trace::Kernel;
    // Two squares; 845->100: 128 diagonals, n1 = 32 (31 baby + 3 giant rotations) and 3
    // rotate-and-sum steps (1024 -> 128 slots); 100->10: 16 diagonals, n1 = 4 (3 + 3) and 3
    // steps (128 -> 16). Hoisting shares decompositions, never key loads.
    let params = Parameters::preset("OSIRIS_SET_I").expect("preset");
    for hoisting in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
        let rule = StrategyRule { hoisting, gsc: true, max_partials: 4, of_limb: true };
        let t = basalt_workloads::trace::record_inference(&params, Net::Lola, rule, true)?;
        assert_eq!(key_loads(&t), 2 + (31 + 3 + 3) + (3 + 3 + 3), "{hoisting:?}");
        // The client's 25 ciphertexts are the inputs, read at the top level (6 limbs); the
        // result is the last object written, at the bottom (1 limb).
        let inputs: Vec<_> = t
            .input_loads()
            .into_iter()
            .map(|k| match *k {
                Kernel::CtLoad { limbs, .. } => limbs,
                _ => unreachable!("input_loads returns loads"),
            })
            .collect();
        assert_eq!(inputs, [6; 25]);
        let last = t.kernels().filter(|k| matches!(k, Kernel::CtStore { .. })).last();
        assert!(matches!(last, Some(Kernel::CtStore { limbs: 1, .. })), "{last:?}");
    }
    Ok(())
}
