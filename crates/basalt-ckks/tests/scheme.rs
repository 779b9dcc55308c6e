//! Functional tests of the scheme operations on small insecure rings (N = 2^10 – 2^11).

mod common;
use basalt_ckks::encryptor::{decrypt, encrypt_pk};
use basalt_ckks::*;
use common::*;

const MIN_BITS: f64 = 20.0;

fn all_dnums() -> Vec<(usize, usize)> {
    // (dnum, k) for a chain of 5 Q primes: per-limb (SEAL/F1), FAB-like, CraterLake 1-digit.
    vec![(5, 1), (3, 2), (2, 3), (1, 5)]
}

#[test]
fn encrypt_decrypt_secret_and_public_key() {
    let c = setup(toy(11, 3, 2, 2), &[], false);
    let v = random_values(c.params.max_slots(), 1);
    let ct = c.encrypt(&v, 3);
    let s = c.precision(&v, &ct);
    println!("N=2^11 sk encrypt: {s}");
    assert!(s.min.l2 > 25.0);
    let pt = c.enc.encode(&v, c.params.max_slots(), 2, c.params.default_scale()).unwrap();
    let ct = encrypt_pk(&c.params, &pt, &c.pk).unwrap();
    let s = c.precision(&v, &ct);
    println!("N=2^11 pk encrypt: {s}");
    assert!(s.min.l2 > 20.0);
}

#[test]
fn sparse_packing_and_real_slots() {
    let c = setup(toy(10, 2, 1, 3), &[1, -3], false);
    for slots in [1usize, 2, 8, 64, 256] {
        let v = random_values(slots, slots as u64);
        let pt = c.enc.encode(&v, slots, 2, c.params.default_scale()).unwrap();
        let ct = basalt_ckks::encryptor::encrypt_sk(&c.params, &pt, &c.sk).unwrap();
        let s = c.precision(&v, &ct);
        assert!(s.min.l2 > 25.0, "slots={slots}: {s}");
        // Rotations act cyclically on the n sparse slots.
        if slots >= 8 {
            let r = c.eval.rotate(&ct, 1).unwrap();
            assert!(c.precision(&rot(&v, 1), &r).min.l2 > MIN_BITS);
            let r = c.eval.rotate(&ct, -3).unwrap();
            assert!(c.precision(&rot(&v, -3), &r).min.l2 > MIN_BITS);
        }
    }
    let reals: Vec<f64> = (0..100).map(|i| (i as f64 / 37.0).sin()).collect();
    let pt = c.enc.encode_real(&reals, 128, 1, c.params.default_scale()).unwrap();
    let out = c.enc.decode_real(&pt).unwrap();
    assert!(PrecisionStats::new_real(&reals, &out[..100]).min.real > 30.0);
}

#[test]
fn additive_and_constant_operations() {
    let c = setup(toy(10, 3, 2, 2), &[], false);
    let e = &c.eval;
    let a = random_values(c.params.max_slots(), 2);
    let b = random_values(c.params.max_slots(), 3);
    let (ca, cb) = (c.encrypt(&a, 3), c.encrypt(&b, 3));
    let sum: Vec<_> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let dif: Vec<_> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
    let neg: Vec<_> = a.iter().map(|x| -x).collect();
    assert!(c.precision(&sum, &e.add(&ca, &cb).unwrap()).min.l2 > 25.0);
    assert!(c.precision(&dif, &e.sub(&ca, &cb).unwrap()).min.l2 > 25.0);
    assert!(c.precision(&neg, &e.neg(&ca).unwrap()).min.l2 > 25.0);
    let pb = c.enc.encode(&b, c.params.max_slots(), 3, c.params.default_scale()).unwrap();
    assert!(c.precision(&sum, &e.add_plain(&ca, &pb).unwrap()).min.l2 > 25.0);
    assert!(c.precision(&dif, &e.sub_plain(&ca, &pb).unwrap()).min.l2 > 25.0);
    // ct × pt, rescale.
    let prod: Vec<_> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
    let m = e.rescale(&e.mul_plain(&ca, &pb).unwrap()).unwrap();
    assert_eq!(m.level(), 2);
    assert!(c.precision(&prod, &m).min.l2 > MIN_BITS);
    // Constants.
    let k = Complex64::new(0.25, -0.5);
    let addk: Vec<_> = a.iter().map(|x| x + k).collect();
    assert!(c.precision(&addk, &e.add_const(&ca, k).unwrap()).min.l2 > 25.0);
    let addr: Vec<_> = a.iter().map(|x| x + 0.75).collect();
    assert!(
        c.precision(&addr, &e.add_const(&ca, Complex64::new(0.75, 0.0)).unwrap()).min.l2 > 25.0
    );
    let subk: Vec<_> = a.iter().map(|x| x - k).collect();
    assert!(c.precision(&subk, &e.sub_const(&ca, k).unwrap()).min.l2 > 25.0);
    let mulk: Vec<_> = a.iter().map(|x| x * k).collect();
    let m = e.rescale(&e.mul_const_complex(&ca, k).unwrap()).unwrap();
    assert!((m.scale() / ca.scale() - 1.0).abs() < 1e-12, "rescale restores the scale exactly");
    assert!(c.precision(&mulk, &m).min.l2 > MIN_BITS);
    let mulr: Vec<_> = a.iter().map(|x| x * -3.5).collect();
    let m = e.rescale(&e.mul_const(&ca, -3.5).unwrap()).unwrap();
    assert!(c.precision(&mulr, &m).min.l2 > MIN_BITS);
    let mul3: Vec<_> = a.iter().map(|x| x * 3.0).collect();
    assert!(c.precision(&mul3, &e.mul_integer(&ca, 3).unwrap()).min.l2 > 24.0);
    // Level drop keeps the message.
    let d = e.drop_level(&ca, 2).unwrap();
    assert_eq!(d.level(), 1);
    assert!(c.precision(&a, &d).min.l2 > 25.0);
}

#[test]
fn mul_relin_rescale_rotate_conjugate_for_every_dnum() {
    for (dnum, k) in all_dnums() {
        let c = setup(toy(10, 4, k, dnum), &[1, 2, -1, 7], false);
        let e = &c.eval;
        let a = random_values(c.params.max_slots(), 10 + dnum as u64);
        let b = random_values(c.params.max_slots(), 20 + dnum as u64);
        let (ca, cb) = (c.encrypt(&a, 4), c.encrypt(&b, 4));
        let prod: Vec<_> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let m = e.rescale(&e.mul_relin(&ca, &cb).unwrap()).unwrap();
        let s = c.precision(&prod, &m);
        println!("dnum={dnum} k={k}: HMult+relin+rescale at scale 2^40: {s}");
        assert!(s.min.l2 >= MIN_BITS, "dnum={dnum}: {s}");
        // Degree-2 product decrypts too (before relinearization).
        let t = e.rescale(&e.mul(&ca, &cb).unwrap()).unwrap();
        assert_eq!(t.degree(), 2);
        assert!(c.precision(&prod, &t).min.l2 >= MIN_BITS);
        // A second product at a lower level.
        let m2 = e.rescale(&e.mul_relin(&m, &m).unwrap()).unwrap();
        let want: Vec<_> = prod.iter().map(|x| x * x).collect();
        assert!(c.precision(&want, &m2).min.l2 >= MIN_BITS - 2.0);
        for r in [1i64, 2, -1, 7] {
            let out = e.rotate(&ca, r).unwrap();
            let s = c.precision(&rot(&a, r), &out);
            assert!(s.min.l2 >= MIN_BITS, "dnum={dnum} rot {r}: {s}");
        }
        let conj: Vec<_> = a.iter().map(|x| x.conj()).collect();
        let s = c.precision(&conj, &e.conjugate(&ca).unwrap());
        println!("dnum={dnum}: conjugate {s}");
        assert!(s.min.l2 >= MIN_BITS);
        // Rotations at a lower level use the same keys.
        let low = e.drop_level(&ca, 3).unwrap();
        assert!(c.precision(&rot(&a, 2), &e.rotate(&low, 2).unwrap()).min.l2 >= MIN_BITS);
    }
}

#[test]
fn double_prime_rescale() {
    let mut lit = ParametersLiteral::toy(10, 60, 30, 4, 61, 2, 2);
    lit.double_prime = true;
    lit.log_default_scale = 60.0;
    let params = Parameters::new(lit).unwrap();
    assert_eq!(params.primes_per_rescale(), 2);
    assert_eq!(params.logical_levels(), 2);
    let c = setup(params, &[1], false);
    let a = random_values(c.params.max_slots(), 5);
    let ca = c.encrypt(&a, 4);
    let sq: Vec<_> = a.iter().map(|x| x * x).collect();
    let m = c.eval.rescale(&c.eval.mul_relin(&ca, &ca).unwrap()).unwrap();
    assert_eq!(m.level(), 2);
    let s = c.precision(&sq, &m);
    println!("double-prime (2x30-bit levels, scale 2^60): {s}");
    assert!(s.min.l2 > 30.0);
    let m = c.eval.rescale(&m).unwrap();
    assert_eq!(m.level(), 0);
    assert!(matches!(c.eval.rescale(&m), Err(CkksError::LevelBelowZero { .. })));
}

#[test]
fn evaluator_and_keys_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Evaluator>();
    check::<Parameters>();
    check::<Ciphertext>();
    check::<EvaluationKeys>();
    check::<Encoder>();
    check::<SecretKey>();
}

#[test]
fn named_errors() {
    let c = setup(toy(10, 3, 2, 2), &[1], false);
    let e = &c.eval;
    let a = random_values(8, 1);
    let ca = c.encrypt(&a, 3);
    let low = c.encrypt(&a, 2);
    assert!(matches!(e.add(&ca, &low), Err(CkksError::LevelMismatch { left: 3, right: 2 })));
    assert!(matches!(e.mul_relin(&ca, &low), Err(CkksError::LevelMismatch { .. })));
    let mut scaled = ca.clone();
    scaled.set_scale(ca.scale() * 2.0);
    assert!(matches!(e.add(&ca, &scaled), Err(CkksError::ScaleMismatch { .. })));
    match e.rotate(&ca, 5) {
        Err(CkksError::MissingRotationKey { rotation: 5, .. }) => {}
        other => panic!("expected a missing key error, got {other:?}"),
    }
    let msg = e.rotate(&ca, 5).unwrap_err().to_string();
    assert!(msg.contains("rotation by 5"), "{msg}");
    let mut m = e.rescale(&e.mul_relin(&ca, &ca).unwrap()).unwrap();
    for _ in 0..2 {
        m = e.rescale(&m).unwrap();
    }
    assert!(matches!(e.rescale(&m), Err(CkksError::LevelBelowZero { level: 0, .. })));
    let e2 = Evaluator::new(&c.params, EvaluationKeys::default()).unwrap();
    assert!(matches!(e2.mul_relin(&ca, &ca), Err(CkksError::MissingRelinKey)));
    assert!(matches!(e2.conjugate(&ca), Err(CkksError::MissingConjugationKey { .. })));
    // Objects of another parameter set.
    let other = setup(toy(10, 3, 2, 4), &[1], false);
    let cb = other.encrypt(&a, 3);
    assert!(matches!(e.add(&ca, &cb), Err(CkksError::WrongParams { .. })));
    assert!(matches!(decrypt(&c.params, &cb, &c.sk), Err(CkksError::WrongParams { .. })));
    let kg = KeyGenerator::new(&other.params);
    let keys = kg.gen_evaluation_keys(&other.sk, &[1], false, false);
    assert!(matches!(Evaluator::new(&c.params, keys), Err(CkksError::WrongParams { .. })));
    // A key for another Galois element under the wrong slot.
    let kg = KeyGenerator::new(&c.params);
    let mut gk = kg.gen_rotation_key(&c.sk, 2, false);
    gk.galois = c.params.ring().galois_element_for_rotation(3);
    let ev = Evaluator::new(&c.params, EvaluationKeys::default().with_galois(gk)).unwrap();
    assert!(matches!(ev.rotate(&ca, 3), Err(CkksError::WrongKey { .. })));
    // Symbolic and real operands do not mix.
    let sym = Ciphertext::symbolic(&c.params, 3).unwrap();
    assert!(matches!(e.add(&ca, &sym), Err(CkksError::SymbolicMix)));
    assert!(matches!(decrypt(&c.params, &sym, &c.sk), Err(CkksError::Symbolic)));
}

#[test]
fn parameter_validation_names_errors() {
    let ok = ParametersLiteral::toy(10, 60, 40, 3, 61, 2, 2);
    let mut l = ok.clone();
    l.dnum = Some(9);
    assert!(matches!(Parameters::new(l), Err(ParamError::DnumOutOfRange { dnum: 9, max: 4 })));
    let mut l = ok.clone();
    l.log_q = vec![];
    l.q = vec![97, 97];
    assert!(matches!(Parameters::new(l), Err(ParamError::PrimeNotNttFriendly { .. })));
    let q = basalt_math::primes::ntt_primes(40, 10, 2, &[]).unwrap();
    let mut l = ok.clone();
    l.log_q = vec![];
    l.q = vec![q[0], q[1], q[0]];
    assert!(matches!(Parameters::new(l), Err(ParamError::DuplicateModulus { .. })));
    let mut l = ok.clone();
    l.log_q = vec![];
    l.q = vec![q[0] + 2 * 1024];
    assert!(matches!(
        Parameters::new(l),
        Err(ParamError::NotPrime { .. }) | Err(ParamError::PrimeNotNttFriendly { .. })
    ));
    let mut l = ok.clone();
    l.allow_insecure = false;
    match Parameters::new(l.clone()) {
        Err(ParamError::Insecure { log_n: 10, bits, .. }) if bits < 128.0 => {}
        other => panic!("{other:?}"),
    }
    assert!(Parameters::new_insecure(l).is_ok());
    let mut l = ok.clone();
    l.log_p = vec![25];
    assert!(matches!(Parameters::new(l), Err(ParamError::SpecialModulusTooSmall { .. })));
    let mut l = ok.clone();
    l.secret = SecretDistribution::Hamming { h: 5000 };
    assert!(matches!(Parameters::new(l), Err(ParamError::HammingWeightOutOfRange { .. })));
    let mut l = ok.clone();
    l.double_prime = true; // 3 primes above the base: odd
    assert!(matches!(Parameters::new(l), Err(ParamError::BadLevelLayout { .. })));
    let mut l = ok;
    l.log_n = 20;
    assert!(matches!(Parameters::new(l), Err(ParamError::LogNOutOfRange(20))));
    // A secure set at N=2^13 passes without opting in.
    let mut l = ParametersLiteral::toy(13, 60, 40, 2, 60, 1, 3);
    l.allow_insecure = false;
    let p = Parameters::new(l).unwrap();
    assert_eq!(p.security().meets, Some(128));
}
