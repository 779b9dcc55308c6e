//! End-to-end PBS correctness on toy (insecure, fast) sets: exhaustive message spaces,
//! several LUTs, both torus widths, both atomic patterns.

use basalt_tfhe::params::toy;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{BatchConfig, ClientKey, Gate, Lut};

#[test]
fn lut_exhaustive_u64_ks_pbs() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(11);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let p = params.plaintext_modulus();
    type NamedFn = (&'static str, Box<dyn Fn(u64) -> u64>);
    let fns: Vec<NamedFn> = vec![
        ("id", Box::new(|x| x)),
        ("square", Box::new(|x| x * x)),
        ("plus3", Box::new(|x| x + 3)),
        ("const5", Box::new(|_| 5)),
        ("reverse", Box::new(move |x| p - 1 - x)),
    ];
    for (name, f) in &fns {
        let lut = Lut::from_fn(&params, f);
        for m in 0..p {
            for _ in 0..2 {
                let ct = ck.encrypt_with(m, &mut rng).unwrap();
                let out = sk.apply_lut(&ct, &lut).unwrap();
                assert_eq!(ck.decrypt(&out).unwrap(), f(m) % p, "lut {name} m {m}");
                // A second bootstrap on the output (the noise left by PBS must be bootstrappable).
                let out2 = sk.apply_lut(&out, &lut).unwrap();
                assert_eq!(ck.decrypt(&out2).unwrap(), f(f(m) % p) % p, "lut {name}∘{name} m {m}");
            }
        }
    }
}

#[test]
fn gates_exhaustive_u32_pbs_ks() {
    let params = basalt_tfhe::params::toy::u32_small();
    let mut rng = Csprng::from_seed(12);
    let ck = ClientKey::<u32>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    for gate in [Gate::Nand, Gate::And, Gate::Or, Gate::Xor] {
        for a in [false, true] {
            for b in [false, true] {
                let ca = ck.encrypt_bool(a);
                let cb = ck.encrypt_bool(b);
                let c = sk.gate(gate, &ca, &cb).unwrap();
                assert_eq!(ck.decrypt_bool(&c).unwrap(), gate.eval(a, b), "{gate:?}({a},{b})");
                // Chain: the output feeds another gate.
                let d = sk.gate(Gate::Nand, &c, &ca).unwrap();
                assert_eq!(ck.decrypt_bool(&d).unwrap(), !(gate.eval(a, b) && a));
            }
        }
    }
    // 1-bit LUTs on the same set (message modulus 2).
    for f in [|x: u64| x, |x: u64| 1 - x] {
        let lut = Lut::from_fn(&params, f);
        for m in 0..2 {
            let ct = ck.encrypt_with(m, &mut rng).unwrap();
            assert_eq!(ck.decrypt(&sk.apply_lut(&ct, &lut).unwrap()).unwrap(), f(m));
        }
    }
}

#[test]
fn batched_pbs_is_bit_identical_to_sequential() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(13);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let p = params.plaintext_modulus();
    let lut = Lut::from_fn(&params, |x| (3 * x + 1) % p);
    let cts: Vec<_> = (0..23).map(|i| ck.encrypt_with(i % p, &mut rng).unwrap()).collect();
    let seq: Vec<_> = cts.iter().map(|c| sk.apply_lut(c, &lut).unwrap()).collect();
    for cfg in [
        BatchConfig::default(),
        BatchConfig::unbatched(),
        BatchConfig { core_batch: Some(5), ..BatchConfig::default() },
        BatchConfig { core_batch: Some(64), ks_tile: 3, ..BatchConfig::default() },
    ] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let bat = pool.install(|| sk.apply_lut_batch(&cts, &lut, &cfg).unwrap());
        assert_eq!(bat, seq, "{cfg:?}");
    }
    for (c, i) in seq.iter().zip(0..) {
        assert_eq!(ck.decrypt(c).unwrap(), (3 * (i % p) + 1) % p);
    }
}
