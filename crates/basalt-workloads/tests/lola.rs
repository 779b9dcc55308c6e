//! CraterLake's other two LoLa rows on a small ring (N = 2^11, insecure): MNIST with encrypted
//! weights (the paper's layer shapes) and a scaled-down LoLa-CIFAR, each against its
//! cleartext twin, and trace mode against the real run.

use basalt_circuits::Result;
use basalt_circuits::lintrans::Hoisting;
use basalt_circuits::testing::{Ctx, precision_bits_real, symbolic_like, toy_params};
use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::{Ciphertext, Complex64, Parameters};
use basalt_workloads::cifar::{self, Cifar, CifarModel, Shape};
use basalt_workloads::encrypted_weights::EncryptedModel;
use basalt_workloads::mnist::{self, Net};
use basalt_workloads::network::StrategyRule;

/// The CraterLake rows' split: single hoisting, Lattigo's order, at most four giant steps.
const SH: StrategyRule =
    StrategyRule { hoisting: Hoisting::Single, gsc: false, max_partials: 4, of_limb: true };

/// Five 40-bit levels over a 60-bit `q_0`: the networks' depth.
fn small_ring() -> Parameters {
    toy_params(11, 5, 40, 2)
}

/// LoLa-CIFAR's layer kinds at toy sizes: a 2×10×10 image, 6 maps of 4×4 stride 2 (4×4
/// outputs), 4 maps per 64-slot block (so two blocks, the second partial), 5 maps of 2×2
/// stride 2 (2×2 outputs, 20 values), 10 classes.
const TOY_CIFAR: Shape = Shape {
    side: 10,
    channels: 2,
    k1: 4,
    s1: 2,
    maps1: 6,
    k2: 2,
    s2: 2,
    maps2: 5,
    classes: 10,
    slots: 64,
};

/// Encrypt `xs` at the model's input level and slots.
fn encrypt_all(ctx: &Ctx, xs: &[Vec<f64>], slots: usize, level: usize) -> Result<Vec<Ciphertext>> {
    xs.iter().map(|x| ctx.encrypt_real(x, slots, level)).collect()
}

/// The first `n` decrypted slots against `want`: the precision in bits.
fn bits(ctx: &Ctx, out: &Ciphertext, want: &[f64]) -> Result<f64> {
    let spread = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 1e-3, "a degenerate network would pass anything: {want:?}");
    let have: Vec<f64> = ctx.decrypt(out)?.iter().take(want.len()).map(|c| c.re).collect();
    Ok(precision_bits_real(want, &have))
}

/// The symbolic twins of `cts`.
fn symbolic(params: &Parameters, cts: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
    cts.iter().map(|c| symbolic_like(params, c)).collect()
}

#[test]
fn mnist_with_encrypted_weights_matches_its_twin_and_its_trace() -> Result<()> {
    let params = small_ring();
    let net = mnist::lola(7);
    let shapes = EncryptedModel::prepare(&params, &net, SH, None)?;
    let ctx = Ctx::new(&params, &shapes.rotations())?;
    let owner = |v: &[f64], slots: usize, level: usize, scale: f64| -> Result<Ciphertext> {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let pt = ctx.enc.encode(&z, slots, level, scale)?;
        Ok(encrypt_sk(&params, &pt, &ctx.sk)?)
    };
    let model = EncryptedModel::prepare(&params, &net, SH, Some(&owner))?;
    // 25 + 1 (convolution), 128 + 1 (845 -> 100), 16 + 1 (100 -> 10).
    assert_eq!(model.weights(), 172);
    let xs = Net::Lola.inputs(&mnist::test_image(3));
    let cts = encrypt_all(&ctx, &xs, model.input_slots(), model.input_level())?;
    let (out, t_real) = basalt_trace::record(|| model.evaluate(&ctx.eval, &cts));
    let out = out?;
    assert_eq!(out.level(), model.input_level() - net.depth(), "one level per layer");
    let b = bits(&ctx, &out, &net.evaluate_plain(&xs))?;
    eprintln!("MNIST, encrypted weights: {b:.1} bits");
    assert!(b > 12.0, "{b:.1} bits");
    let (sym, t_sym) =
        basalt_trace::record(|| shapes.evaluate(&ctx.eval, &symbolic(&params, &cts)?));
    assert!(sym?.is_symbolic());
    assert_eq!(t_real, t_sym, "the kernel stream must not depend on the data or the weights");
    // Lazy relinearisation: one key switch for the convolution, one per giant step (4 + 4,
    // n1 = 32 and 4), one per square; the rotations as the unencrypted row's.
    let relins = t_real
        .events
        .iter()
        .filter(|e| matches!(e, basalt_trace::Event::Enter { name } if name == "Relinearize"))
        .count();
    assert_eq!(relins, 1 + 4 + 4 + 2);
    Ok(())
}

#[test]
fn toy_cifar_matches_its_twin_and_its_trace() -> Result<()> {
    let params = small_ring();
    assert_eq!((TOY_CIFAR.blocks(), TOY_CIFAR.out1(), TOY_CIFAR.out2()), (2, 4, 2));
    let net = Cifar::new(TOY_CIFAR, 5);
    let model = CifarModel::prepare(&params, &net, SH, false)?;
    let ctx = Ctx::new(&params, &model.rotations())?;
    let image: Vec<f64> = basalt_circuits::testing::random_values(200, 9, true)
        .iter()
        .map(|z| 0.5 + 0.5 * z.re)
        .collect();
    let xs = net.inputs(&image);
    assert_eq!(xs.len(), model.inputs());
    let cts = encrypt_all(&ctx, &xs, model.input_slots(), model.input_level())?;
    let (out, t_real) = basalt_trace::record(|| model.evaluate(&ctx.eval, &cts));
    let out = out?;
    assert_eq!(out.level(), model.input_level() - 5, "five levels");
    let b = bits(&ctx, &out, &net.evaluate_plain(&image))?;
    eprintln!("toy LoLa-CIFAR: {b:.1} bits");
    assert!(b > 14.0, "{b:.1} bits");
    let shapes = CifarModel::prepare(&params, &Cifar::new(TOY_CIFAR, 0), SH, true)?;
    let (sym, t_sym) =
        basalt_trace::record(|| shapes.evaluate(&ctx.eval, &symbolic(&params, &cts)?));
    assert!(sym?.is_symbolic());
    assert_eq!(t_real, t_sym, "the kernel stream must not depend on the data or the weights");
    Ok(())
}

#[test]
fn lola_cifar_packs_into_two_blocks_of_f1s_ring() -> Result<()> {
    let s = cifar::LOLA_CIFAR;
    assert_eq!((s.out1(), s.out2(), s.hidden()), (13, 4, 2608));
    assert_eq!((s.maps_per_block(), s.blocks(), s.offsets()), (48, 2, 192));
    let params = Parameters::preset("CRATERLAKE_MNIST").expect("preset");
    let model = CifarModel::prepare(&params, &Cifar::new(s, 0), SH, true)?;
    assert_eq!(model.inputs(), 384);
    Ok(())
}

#[test]
fn a_chain_shorter_than_five_levels_is_an_error() {
    let params = toy_params(11, 4, 40, 2);
    let e = CifarModel::prepare(&params, &Cifar::new(TOY_CIFAR, 0), SH, true).unwrap_err();
    assert!(e.to_string().contains("level"), "{e}");
    let e = EncryptedModel::prepare(&params, &mnist::lola(0), SH, None).unwrap_err();
    assert!(e.to_string().contains("level"), "{e}");
}

/// Key switches of a trace (one key load each).
fn key_loads(t: &basalt_trace::Trace) -> usize {
    t.kernels().filter(|k| matches!(k, basalt_trace::Kernel::KeyLoad { .. })).count()
}

#[test]
fn lola_cifar_at_f1s_ring_switches_keys_as_the_packing_says() -> Result<()> {
    // Second convolution: all 4096 hybrid diagonals in both blocks, n1 = 1024: 1023 baby
    // rotations per block + 3 giant + 1 fold (8192 -> 4096 slots); dense 2608 -> 10: 16
    // diagonals, n1 = 4: 3 + 3, and 8 folds (4096 -> 16); squares: 2 blocks + 1.
    let params = Parameters::preset("CRATERLAKE_MNIST").expect("preset");
    let t = cifar::record(&params, SH, true)?;
    assert_eq!(key_loads(&t), 2 * 1023 + 3 + 1 + (3 + 3 + 8) + 3);
    // Encrypted-weights MNIST: the unencrypted row's 46 rotations and 2 squares, plus one
    // relinearisation for the convolution and one per giant step (4 + 4).
    let t = basalt_workloads::encrypted_weights::record_mnist(&params, SH, true)?;
    assert_eq!(key_loads(&t), 46 + 2 + 1 + 8);
    Ok(())
}
