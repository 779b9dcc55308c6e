//! Key identity and integrity: every path that could combine objects of two key sets refuses
//! with an error naming both ids, and a bit flipped anywhere in a serialized ciphertext or key
//! is detected.

mod common;
use basalt_ckks::encryptor::{decrypt, encrypt_pk};
use basalt_ckks::*;
use common::*;

/// Two clients of the same parameter set: `a` (the server holds its keys) and `b`.
struct Two {
    a: Ctx,
    b: Ctx,
}

fn two() -> Two {
    let p = toy(10, 3, 2, 2);
    Two { a: setup(p.clone(), &[1], false), b: setup(p, &[1], false) }
}

/// The error must be a key mismatch naming both ids.
fn refused<T: std::fmt::Debug>(r: Result<T>, x: KeyId, y: KeyId) {
    match r {
        Err(e @ CkksError::KeyMismatch { .. }) => {
            let m = e.to_string();
            assert!(m.contains(&x.to_hex()) && m.contains(&y.to_hex()), "{m}");
        }
        other => panic!("expected a key mismatch, got {other:?}"),
    }
}

#[test]
fn every_key_set_has_a_distinct_identity_carried_by_its_objects() {
    let t = two();
    let (ia, ib) = (t.a.sk.key_id(), t.b.sk.key_id());
    assert!(ia.is_bound() && ia != ib);
    assert_eq!(t.a.pk.key_id(), ia);
    assert_eq!(t.a.eval.key_id(), ia);
    assert_eq!(t.a.eval.keys().key_id().unwrap(), Some(ia));
    let ct = t.a.encrypt(&random_values(4, 1), 2);
    assert_eq!(ct.key_id(), ia);
    let pt = t.a.enc.encode(&random_values(4, 1), 4, 2, t.a.params.default_scale()).unwrap();
    assert_eq!(encrypt_pk(&t.a.params, &pt, &t.a.pk).unwrap().key_id(), ia);
    // Results keep it; a trivial (zero) ciphertext is unbound and takes its partner's.
    let sq = t.a.eval.mul_relin(&ct, &ct).unwrap();
    assert_eq!(t.a.eval.rescale(&sq).unwrap().key_id(), ia);
    let z = Ciphertext::zero(&t.a.params, 1, 2, ct.scale()).unwrap();
    assert!(!z.key_id().is_bound());
    assert_eq!(t.a.eval.add(&z, &ct).unwrap().key_id(), ia);
    // Bytes keep it.
    let back = Ciphertext::from_bytes(&t.a.params, &ct.to_bytes().unwrap()).unwrap();
    assert_eq!(back.key_id(), ia);
}

#[test]
fn ciphertext_operations_refuse_a_ciphertext_of_another_key_set() {
    let t = two();
    let (ia, ib) = (t.a.sk.key_id(), t.b.sk.key_id());
    let (ev, p) = (&t.a.eval, &t.a.params);
    let x = t.a.encrypt(&random_values(4, 1), 2);
    let y = t.b.encrypt(&random_values(4, 2), 2);
    // Two operands of different key sets.
    refused(ev.add(&x, &y), ia, ib);
    refused(ev.sub(&x, &y), ia, ib);
    refused(ev.mul(&x, &y), ia, ib);
    refused(ev.mul_relin(&x, &y), ia, ib);
    let mut acc = x.clone();
    refused(ev.add_assign(&mut acc, &y), ia, ib);
    // One operand of another key set than the evaluator's keys.
    refused(ev.rotate(&y, 1), ia, ib);
    refused(ev.conjugate(&y), ia, ib);
    refused(ev.rotate_hoisted(&y, &[1]), ia, ib);
    refused(ev.rescale(&y), ia, ib);
    refused(ev.neg(&y), ia, ib);
    refused(ev.mul_const(&y, 0.5), ia, ib);
    let pt = t.a.enc.encode(&random_values(4, 3), 4, 2, p.default_scale()).unwrap();
    refused(ev.add_plain(&y, &pt), ia, ib);
    refused(ev.mul_plain(&y, &pt), ia, ib);
    let yy = t.b.eval.mul(&y, &y).unwrap();
    refused(ev.relinearize(&yy), ia, ib);
    // A key-switching key of another key set.
    let kg = KeyGenerator::new(p);
    let other = KeyMaterial::Full(kg.gen_key_switch_key(&t.b.sk, &t.b.sk));
    refused(Evaluator::new(p, EvaluationKeys::default()).unwrap().switch_key(&x, &other), ia, ib);
}

#[test]
fn loads_decryption_and_key_sets_refuse_another_identity() {
    let t = two();
    let (ia, ib) = (t.a.sk.key_id(), t.b.sk.key_id());
    let p = &t.a.params;
    let y = t.b.encrypt(&random_values(4, 2), 2);
    // Decryption with another secret.
    refused(decrypt(p, &y, &t.a.sk), ia, ib);
    // Load for a holder of the keys of `a`.
    refused(Ciphertext::from_bytes_for(p, ia, &y.to_bytes().unwrap()), ia, ib);
    // An evaluator from keys of two key sets.
    let kg = KeyGenerator::new(p);
    let mixed = EvaluationKeys::default()
        .with_relin(kg.gen_relin_key(&t.a.sk, false))
        .with_galois(kg.gen_rotation_key(&t.b.sk, 1, false));
    assert!(matches!(Evaluator::new(p, mixed.clone()), Err(CkksError::KeyMismatch { .. })));
    assert!(matches!(mixed.to_bytes(), Err(CkksError::KeyMismatch { .. })));
}

#[test]
fn selected_rotation_keys_load_alone_and_seeded_keys_are_half_the_bytes() {
    let t = two();
    let p = &t.a.params;
    let kg = KeyGenerator::new(p);
    let full = kg.gen_evaluation_keys(&t.a.sk, &[1, 2, 4], true, false);
    let bytes = full.to_bytes().unwrap();
    let some = EvaluationKeys::from_bytes_selected(p, &bytes, Some(&[2]), Some(false)).unwrap();
    assert_eq!(some.rotations(p), vec![2]);
    assert!(some.relin.is_some() && !some.has_conjugation(p));
    assert_eq!(some, full.select(p, &[2], false).unwrap());
    assert!(matches!(
        EvaluationKeys::from_bytes_selected(p, &bytes, Some(&[3]), Some(false)),
        Err(CkksError::MissingRotationKey { rotation: 3, .. })
    ));
    // The conjugation key: kept when present unless left out, required only when asked for.
    let conj = p.ring().galois_element_conjugate();
    let keep = EvaluationKeys::from_bytes_selected(p, &bytes, Some(&[2]), None).unwrap();
    assert!(keep.has_conjugation(p) && keep.rotations(p) == vec![2]);
    let all = EvaluationKeys::from_bytes_selected(p, &bytes, None, Some(false)).unwrap();
    assert!(!all.has_conjugation(p) && all.rotations(p) == vec![1, 2, 4]);
    let none = kg.gen_evaluation_keys(&t.a.sk, &[2], false, false).to_bytes().unwrap();
    let kept = EvaluationKeys::from_bytes_selected(p, &none, Some(&[2]), None).unwrap();
    assert!(!kept.has_conjugation(p) && kept.rotations(p) == vec![2]);
    for steps in [Some(&[2][..]), None] {
        assert!(matches!(
            EvaluationKeys::from_bytes_selected(p, &none, steps, Some(true)),
            Err(CkksError::MissingConjugationKey { galois }) if galois == conj
        ));
    }
    let seeded = kg.gen_evaluation_keys(&t.a.sk, &[1, 2, 4], true, true);
    let sb = seeded.to_bytes().unwrap();
    assert!(sb.len() * 2 < bytes.len() + 4096, "seeded {} vs full {}", sb.len(), bytes.len());
    // Expanded on load, a seeded set computes like the full one.
    let ev = Evaluator::new(p, EvaluationKeys::from_bytes(p, &sb).unwrap().expanded(p).unwrap())
        .unwrap();
    let v = random_values(p.max_slots(), 5);
    let r = ev.rotate(&t.a.encrypt(&v, 2), 2).unwrap();
    assert!(t.a.precision(&rot(&v, 2), &r).min.l2 > 20.0);
}

/// Flip every bit of `bytes` in turn: `load` must reject every one.
fn sweep<T>(bytes: &[u8], load: impl Fn(&[u8]) -> Result<T>) {
    let mut b = bytes.to_vec();
    for i in 0..b.len() * 8 {
        b[i / 8] ^= 1 << (i % 8);
        assert!(load(&b).is_err(), "flip of bit {i} of {} accepted", b.len() * 8);
        b[i / 8] ^= 1 << (i % 8);
    }
    assert!(load(&b).is_ok());
}

#[test]
fn a_bit_flip_anywhere_in_a_ciphertext_or_key_is_detected() {
    // N = 32, two Q primes, one special prime: objects of a few kilobytes.
    let p = Parameters::new(ParametersLiteral::toy(5, 50, 40, 1, 55, 1, 2)).unwrap();
    let c = setup(p.clone(), &[1], false);
    let ct = c.encrypt(&random_values(4, 1), 1);
    sweep(&ct.to_bytes().unwrap(), |b| Ciphertext::from_bytes(&p, b));
    let kg = KeyGenerator::new(&p);
    sweep(&kg.gen_relin_key(&c.sk, true).to_bytes().unwrap(), |b| RelinKey::from_bytes(&p, b));
    sweep(&kg.gen_rotation_key(&c.sk, 1, false).to_bytes().unwrap(), |b| {
        GaloisKey::from_bytes(&p, b)
    });
    sweep(&c.pk.to_bytes().unwrap(), |b| PublicKey::from_bytes(&p, b));
}
