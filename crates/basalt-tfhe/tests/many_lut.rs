//! Many-LUT bootstrapping against its functions evaluated in the clear: every input value
//! `0..=d` for every degree bound `d` and every allowed number of functions `k`, on an insecure
//! 2+2-bit toy set and on TFHE-rs's 2+2 set. The outputs chain: each goes through another
//! bootstrap, and sums of five outputs (the integer layer's largest noise level) bootstrap
//! correctly. Bad tables are named errors.

use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{BatchConfig, ClientKey, Lut, ManyLut, ServerKey, TfheError};

/// Insecure 2+2-bit set: n = 256, N = 1024.
fn toy_2_2() -> TfheParams {
    let lit = toy::literal(64, 256, 1024, (23, 1), (4, 4), 4, 4, AtomicPattern::KsPbs);
    TfheParams::from_literal(lit, true).unwrap()
}

/// Function `i` of a packing: distinct values on neighbouring inputs.
fn f(i: usize, p: u64) -> impl Fn(u64) -> u64 {
    move |x| (x * (2 * i as u64 + 1) + i as u64 + 1) % p
}

fn keys(params: &TfheParams, seed: u64) -> (ClientKey<u64>, ServerKey<u64>, Csprng) {
    let mut rng = Csprng::from_seed(seed);
    let ck = ClientKey::<u64>::with_rng(params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    (ck, sk, rng)
}

fn exhaustive(params: &TfheParams, seed: u64) {
    let (ck, sk, mut rng) = keys(params, seed);
    let p = params.plaintext_modulus();
    let cfg = BatchConfig::default();
    let next = Lut::from_fn(params, |y| (5 * y + 3) % p);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        for d in 0..p {
            let cts: Vec<_> = (0..=d).map(|x| ck.encrypt_with(x, &mut rng).unwrap()).collect();
            for k in 1..=ManyLut::<u64>::capacity(p, d) {
                let fns: Vec<Box<dyn Fn(u64) -> u64>> =
                    (0..k).map(|i| Box::new(f(i, p)) as Box<dyn Fn(u64) -> u64>).collect();
                let refs: Vec<&dyn Fn(u64) -> u64> = fns.iter().map(|g| g.as_ref()).collect();
                let lut = ManyLut::from_fns(params, d, &refs).unwrap();
                let outs = sk.apply_many_lut_batch(&cts, &lut, &cfg).unwrap();
                assert_eq!(outs.len(), cts.len());
                let flat: Vec<_> = outs.iter().flatten().cloned().collect();
                let chained = sk.apply_lut_batch(&flat, &next, &cfg).unwrap();
                for (x, o) in outs.iter().enumerate() {
                    assert_eq!(o.len(), k);
                    for (i, c) in o.iter().enumerate() {
                        let want = f(i, p)(x as u64);
                        assert_eq!(ck.decrypt(c).unwrap(), want, "d={d} k={k} x={x} f_{i}");
                        let got = ck.decrypt(&chained[x * k + i]).unwrap();
                        assert_eq!(got, (5 * want + 3) % p, "chained d={d} k={k} x={x} f_{i}");
                    }
                }
            }
        }
    });
}

#[test]
fn toy_2_2_every_input_every_k() {
    exhaustive(&toy_2_2(), 71);
}

#[test]
fn tfhers_2_2_every_input_every_k() {
    exhaustive(&TfheParams::preset("TFHERS_2_2_KS_PBS", false).unwrap(), 72);
}

/// Five outputs summed (the integer layer's largest noise level, `m + 1 = 5`), four of them
/// from the same blind rotation, bootstrap to their sum on the real set: the outputs are
/// ordinary bootstrap outputs for later operations.
#[test]
fn tfhers_2_2_sums_of_five_outputs_bootstrap() {
    let params = TfheParams::preset("TFHERS_2_2_KS_PBS", false).unwrap();
    let (ck, sk, mut rng) = keys(&params, 73);
    let p = params.plaintext_modulus();
    let digit = |i: usize| move |x: u64| (x + i as u64) % 4;
    let lut = ManyLut::from_fns(&params, 3, &[&digit(0), &digit(1), &digit(2), &digit(3)]).unwrap();
    let cts: Vec<_> = (0..4).map(|x| ck.encrypt_with(x, &mut rng).unwrap()).collect();
    let outs = sk.apply_many_lut_batch(&cts, &lut, &BatchConfig::default()).unwrap();
    let ident = Lut::from_fn(&params, |y| y);
    for x in 0..4usize {
        for y in 0..4usize {
            let mut terms: Vec<_> = outs[x].iter().collect();
            terms.push(&outs[y][0]);
            let sum = sk.dot_plain(&terms, &[1; 5], 0).unwrap();
            let want: u64 = (0..4).map(|i| digit(i)(x as u64)).sum::<u64>() + y as u64;
            assert!(want < p);
            let got = ck.decrypt(&sk.apply_lut(&sum, &ident).unwrap()).unwrap();
            assert_eq!(got, want, "x={x} y={y}");
        }
    }
}

#[test]
fn bad_tables_are_named_errors() {
    let params = toy_2_2();
    let p = params.plaintext_modulus();
    let id = |x: u64| x;
    // (d + 1)·k > p: 3 functions of inputs up to 5 need 18 > 16 values.
    let e = ManyLut::<u64>::from_fns(&params, 5, &[&id, &id, &id]).unwrap_err();
    assert_eq!(e, TfheError::ManyLutCapacity { functions: 3, max_value: 5, plaintext_modulus: p });
    assert!(e.to_string().contains("(max_value + 1) x functions <= 16"), "{e}");
    // No function, or a bound outside the message space.
    assert!(matches!(
        ManyLut::<u64>::from_fns(&params, 3, &[]),
        Err(TfheError::ManyLutCapacity { functions: 0, .. })
    ));
    assert!(matches!(
        ManyLut::<u64>::from_fns(&params, p, &[&id]),
        Err(TfheError::ManyLutCapacity { max_value: 16, .. })
    ));
    // An output that does not fit the message space.
    let big = |x: u64| x + 14;
    assert_eq!(
        ManyLut::<u64>::from_fns(&params, 3, &[&id, &big]).unwrap_err(),
        TfheError::ManyLutValueOutOfRange { function: 1, input: 2, value: 16, modulus: p }
    );
    // A table of the wrong length.
    assert_eq!(
        ManyLut::<u64>::from_tables(&params, 3, &[vec![0, 1, 2, 3], vec![0, 1]]).unwrap_err(),
        TfheError::ManyLutTableLength { function: 1, max_value: 3, found: 2 }
    );
    // A packing for another message space is refused by the key.
    let (ck, sk, _) = keys(&toy::u64_small(), 74);
    let lut = ManyLut::<u64>::from_fns(&params, 1, &[&id, &id]).unwrap();
    let ct = ck.encrypt(1).unwrap();
    assert!(sk.apply_many_lut(&ct, &lut).is_err());
    // Exactly at capacity is fine: 4 functions of inputs up to 3 fill 16 values.
    let lut = ManyLut::<u64>::from_fns(&params, 3, &[&id, &id, &id, &id]).unwrap();
    assert_eq!(lut.functions(), 4);
    assert_eq!((0..4).map(|i| lut.offset(i)).collect::<Vec<_>>(), vec![0, 256, 512, 768]);
}
