//! Key switching: every variant against a naive reference and against each other.

mod common;
use basalt_ckks::keyswitch::{self, hybrid, reordered};
use basalt_ckks::*;
use basalt_math::{Domain, RnsPoly};
use common::*;

/// The first `q` Q limbs of `a` (drops P).
fn q_part(a: &RnsPoly, q: usize) -> RnsPoly {
    let n = a.n();
    RnsPoly::from_parts(n, q, 0, a.domain(), a.data()[..q * n].to_vec()).unwrap()
}

/// Max |coefficient| (centred) of u0 + u1·s − d·s' over Q_l.
fn ks_error(
    params: &Parameters,
    d: &RnsPoly,
    u: &(RnsPoly, RnsPoly),
    s: &SecretKey,
    s2: &SecretKey,
) -> f64 {
    let ring = params.ring();
    let l1 = d.q_limbs();
    let mut t = u.1.clone();
    ring.mul_assign(&mut t, &q_part(s.poly(), l1));
    ring.add_assign(&mut t, &u.0);
    let mut ds = d.clone();
    ring.mul_assign(&mut ds, &q_part(s2.poly(), l1));
    ring.sub_assign(&mut t, &ds);
    ring.intt_assign(&mut t);
    ring.to_f64_centered(&t).iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn keyswitch_matches_the_key_relation_and_all_variants_agree() {
    for (dnum, k) in [(5usize, 1usize), (3, 2), (2, 3), (1, 5)] {
        let params = toy(10, 4, k, dnum);
        let kg = KeyGenerator::new(&params);
        let s = kg.gen_secret_key();
        let s2 = kg.gen_secret_key();
        let ksk = kg.gen_key_switch_key(&s2, &s);
        let full = KeyMaterial::Full(ksk.clone());
        let seeded = KeyMaterial::Seeded(ksk.to_seeded());
        // Expanding the seeded key gives the full key bit for bit, with half the storage.
        assert_eq!(ksk.to_seeded().expand(&params).unwrap(), ksk);
        assert_eq!(2 * seeded.size_bytes(), full.size_bytes());
        let c = setup(params.clone(), &[], false);
        for level in [4usize, 2, 0] {
            let ct = c.encrypt(&random_values(8, level as u64), level);
            let d = &ct.polys()[1];
            let std = hybrid::keyswitch(&params, d, &full);
            // Naive reference: u0 + u1·s = d·s' + small.
            let err = ks_error(&params, d, &std, &s, &s2);
            println!("dnum={dnum} k={k} level={level}: key-switch error {err}");
            assert!(err < 2f64.powi(24), "dnum={dnum} level={level}: error {err}");
            assert!(err > 0.0, "a key switch adds noise");
            // Reordered (several block sizes) and seeded: bit-identical.
            for block in [1usize, 3, 64] {
                assert_eq!(reordered::keyswitch_reordered(&params, d, &full, block), std);
            }
            assert_eq!(hybrid::keyswitch(&params, d, &seeded), std);
            assert_eq!(reordered::keyswitch_reordered(&params, d, &seeded, 2), std);
            // Lazy + ModDown = plain.
            let lazy = keyswitch::keyswitch_lazy(&params, d, &full);
            let ring = params.ring();
            let down = (
                basalt_math::rns::mod_down(ring, &lazy.0),
                basalt_math::rns::mod_down(ring, &lazy.1),
            );
            assert_eq!(down, std);
        }
    }
}

#[test]
fn evaluator_variants_and_seeded_keys_are_bit_identical() {
    let params = toy(10, 3, 2, 2);
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let keys = kg.gen_evaluation_keys(&sk, &[1, 3], true, false);
    let seeded_keys = EvaluationKeys {
        relin: keys.relin.as_ref().map(|r| RelinKey {
            key: match &r.key {
                KeyMaterial::Full(k) => KeyMaterial::Seeded(k.to_seeded()),
                s => s.clone(),
            },
        }),
        galois: keys
            .galois
            .iter()
            .map(|(&g, gk)| {
                let key = match &gk.key {
                    KeyMaterial::Full(k) => KeyMaterial::Seeded(k.to_seeded()),
                    s => s.clone(),
                };
                (g, GaloisKey { galois: g, key })
            })
            .collect(),
    };
    let plain = Evaluator::new(&params, keys).unwrap();
    let reord = plain.clone().with_variant(KsVariant::Reordered, 2);
    let seeded = Evaluator::new(&params, seeded_keys).unwrap();
    let enc = Encoder::new(&params);
    let v = random_values(params.max_slots(), 9);
    let pt = enc.encode(&v, params.max_slots(), 3, params.default_scale()).unwrap();
    let ct = basalt_ckks::encryptor::encrypt_sk(&params, &pt, &sk).unwrap();
    let a = plain.mul_relin(&ct, &ct).unwrap();
    assert_eq!(reord.mul_relin(&ct, &ct).unwrap(), a);
    assert_eq!(seeded.mul_relin(&ct, &ct).unwrap(), a);
    let r = plain.rotate(&ct, 3).unwrap();
    assert_eq!(reord.rotate(&ct, 3).unwrap(), r);
    assert_eq!(seeded.rotate(&ct, 3).unwrap(), r);
    assert_eq!(seeded.conjugate(&ct).unwrap(), plain.conjugate(&ct).unwrap());
    // Hoisted rotations: the full key's fused passes (ModDown with the permutation, the lazy
    // inner product with `+ P·c_0` and the permutation) against the seeded key's separate ones.
    let h = plain.rotate_hoisted(&ct, &[1, 3]).unwrap();
    assert_eq!(seeded.rotate_hoisted(&ct, &[1, 3]).unwrap(), h);
    assert_eq!(h[1], r);
    let decomp = plain.decompose(&ct).unwrap();
    let lazy = plain.rotate_hoisted_lazy(&ct, &decomp, &[1, 3]).unwrap();
    assert_eq!(seeded.rotate_hoisted_lazy(&ct, &decomp, &[1, 3]).unwrap(), lazy);
}

#[test]
fn hoisted_and_double_hoisted_rotations_decrypt_like_plain_rotations() {
    let rots = [1i64, 2, 3, 5, 8, -1, -4];
    let c = setup(toy(10, 4, 2, 3), &rots, false);
    let v = random_values(c.params.max_slots(), 4);
    let ct = c.encrypt(&v, 3);
    let hoisted = c.eval.rotate_hoisted(&ct, &rots).unwrap();
    for (r, h) in rots.iter().zip(&hoisted) {
        let plain = c.eval.rotate(&ct, *r).unwrap();
        // The automorphism comes after the key switch, so both decompose the same c_1.
        assert_eq!(h, &plain, "rotation {r}: hoisted and plain are bit-identical");
        let (a, b) = (c.decrypt(&plain), c.decrypt(h));
        let s = PrecisionStats::new(&a, &b);
        assert!(s.min.l2 > 25.0, "rotation {r}: hoisted vs plain {s}");
        assert!(c.precision(&rot(&v, *r), h).min.l2 > 20.0);
    }
    // k = 0 is the identity and needs no key.
    assert_eq!(c.eval.rotate_hoisted(&ct, &[0]).unwrap()[0], ct);
    // Double hoisting: Σ_r rot_r(ct) with one ModDown.
    let decomp = c.eval.decompose(&ct).unwrap();
    let lazy = c.eval.rotate_hoisted_lazy(&ct, &decomp, &rots).unwrap();
    let mut acc = lazy[0].clone();
    for x in &lazy[1..] {
        acc.try_add_assign(&c.params, x).unwrap();
    }
    let low = c.eval.drop_level(&ct, 1).unwrap();
    let dl = c.eval.decompose(&low).unwrap();
    let other = c.eval.rotate_hoisted_lazy(&low, &dl, &[1]).unwrap();
    assert!(matches!(
        acc.clone().try_add_assign(&c.params, &other[0]),
        Err(CkksError::LevelMismatch { .. })
    ));
    let sum = c.eval.mod_down(&acc).unwrap();
    let mut want = vec![Complex64::new(0.0, 0.0); v.len()];
    for r in rots {
        for (w, x) in want.iter_mut().zip(rot(&v, r)) {
            *w += x;
        }
    }
    let s = c.precision(&want, &sum);
    println!("double-hoisted sum of {} rotations: {s}", rots.len());
    assert!(s.min.l2 > 20.0);
    // k = 0 in the lazy path is P·ct: ModDown gives ct back exactly.
    let id = c.eval.rotate_hoisted_lazy(&ct, &decomp, &[0]).unwrap();
    assert_eq!(c.eval.mod_down(&id[0]).unwrap(), ct);
    // The lazy path equals the non-lazy hoisted sum up to ModDown rounding.
    let mut plain_sum = hoisted[0].clone();
    for h in &hoisted[1..] {
        plain_sum = c.eval.add(&plain_sum, h).unwrap();
    }
    assert!(PrecisionStats::new(&c.decrypt(&plain_sum), &c.decrypt(&sum)).min.l2 > 22.0);
    let _ = Domain::Ntt;
}

#[test]
/// ModDown must round exactly: a biased BConv overshoot would cost several bits of worst-slot
/// precision after every key switch (measured 7 bits at N = 2^16 before basalt-math fixed it).
fn mod_down_rounds_x_over_p_exactly() {
    use num_bigint::BigInt;
    let params = toy(10, 3, 3, 2);
    let ring = params.ring();
    let n = params.n();
    // Random x over Q ∪ P from the XOF, in the coefficient domain.
    let mut xof = basalt_math::sampler::Xof::new([3u8; 32], b"test");
    let mut x = basalt_math::sampler::uniform_ntt(ring, &mut xof, 4, 3);
    x.set_domain(Domain::Coeff);
    let mut xn = x.clone();
    ring.ntt_assign(&mut xn);
    let exact = basalt_math::rns::mod_down(ring, &xn);
    // Exactness: P·out − x ≡ r with |r| ≤ P/2, checked limb-wise through big integers on Q.
    let mut e = exact.clone();
    ring.intt_assign(&mut e);
    let out = ring.to_bigint_centered(&e);
    let p: BigInt = params.p().iter().map(|&v| BigInt::from(v)).product();
    let q: BigInt = params.q().iter().map(|&v| BigInt::from(v)).product();
    // x as an integer in [0, QP): CRT over all limbs via a ring that has them all as Q.
    let all: Vec<u64> = params.q().iter().chain(params.p()).copied().collect();
    let big = basalt_math::RingContext::new(10, &all, &[]).unwrap();
    let xx = RnsPoly::from_parts(n, 7, 0, Domain::Coeff, x.data().to_vec()).unwrap();
    let xv = big.to_bigint_centered(&xx);
    for t in 0..n {
        // round(x/P) mod Q, centred, must equal out[t] mod Q.
        // Shift by Q·P so the numerator is positive and `/` is a floor.
        let xt = &xv[t] + &q * &p;
        let r: BigInt = (xt * 2 + &p) / (&p * 2);
        let want = ((r % &q) + &q) % &q;
        let got = ((&out[t] % &q) + &q) % &q;
        assert_eq!(want, got, "coefficient {t}");
    }
}
