//! Double-hoisting API: plaintext products and rotations on `Q∪P` ciphertexts, `Q∪P`
//! encoding, polynomial constructors (validated), checked hoisted rotations, in-place add.

mod common;

use basalt_ckks::*;
use basalt_math::{Domain, RnsPoly};
use common::{random_values, rot, setup, toy};

fn mul(a: &[Complex64], b: &[Complex64]) -> Vec<Complex64> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

#[test]
fn plaintext_times_qp_ciphertext_then_mod_down_decrypts_to_the_product() {
    for (dnum, k) in [(1, 3), (2, 2), (3, 2)] {
        let c = setup(toy(10, 3, k, dnum), &[1, 2], false);
        let (level, slots) = (3, c.params.max_slots());
        let x = random_values(slots, 11);
        let (d0, d1) = (random_values(slots, 12), random_values(slots, 13));
        let ct = c.encrypt(&x, level);
        let pt_scale = c.params.q()[level] as f64;
        let p0 = c.enc.encode_qp(&d0, slots, level, pt_scale).unwrap();
        let p1 = c.enc.encode_qp(&d1, slots, level, pt_scale).unwrap();
        // The Q limbs of a Q∪P encoding are exactly the plain encoding.
        let q_only = c.enc.encode(&d0, slots, level, pt_scale).unwrap();
        assert_eq!(&p0.poly().data()[..q_only.poly().data().len()], q_only.poly().data());
        assert_eq!(p0.poly().p_limbs(), c.params.k());

        // Baby steps 0 and 1 lazy, products in Q∪P, one ModDown: d0⊙x + d1⊙rot1(x).
        let decomp = c.eval.decompose(&ct).unwrap();
        let lazy = c.eval.rotate_hoisted_lazy(&ct, &decomp, &[0, 1]).unwrap();
        let mut acc = c.eval.mul_plain_qp(&lazy[0], &p0).unwrap();
        acc.try_add_assign(&c.params, &c.eval.mul_plain_qp(&lazy[1], &p1).unwrap()).unwrap();
        assert_eq!(acc.scale(), ct.scale() * pt_scale);
        let want: Vec<Complex64> =
            mul(&d0, &x).iter().zip(mul(&d1, &rot(&x, 1))).map(|(a, b)| a + b).collect();
        let y = c.eval.rescale(&c.eval.mod_down(&acc).unwrap()).unwrap();
        let bits = c.precision(&want, &y).min.l2;
        println!("dnum {dnum}: Σ pt ⊙ lazy rot, one ModDown: {bits:.1} bits");
        assert!(bits > 22.0, "dnum {dnum}: {bits:.1} bits");

        // Giant step kept in Q∪P: rot2 of the lazy sum, then one ModDown.
        let g = c.eval.rotate_lazy_qp(&acc, 2).unwrap();
        assert_eq!(g.level(), level);
        let y2 = c.eval.rescale(&c.eval.mod_down(&g).unwrap()).unwrap();
        let bits2 = c.precision(&rot(&want, 2), &y2).min.l2;
        println!("dnum {dnum}: giant rotation in Q∪P: {bits2:.1} bits");
        assert!(bits2 > 22.0, "dnum {dnum}: {bits2:.1} bits");
        // k = 0 is the identity; a missing key is named.
        assert_eq!(c.eval.rotate_lazy_qp(&acc, 0).unwrap(), acc);
        assert!(matches!(
            c.eval.rotate_lazy_qp(&acc, 3),
            Err(CkksError::MissingRotationKey { rotation: 3, .. })
        ));
        // A plaintext below the ciphertext's level is refused.
        let low = c.enc.encode_qp(&d0, slots, level - 1, pt_scale).unwrap();
        assert!(matches!(c.eval.mul_plain_qp(&acc, &low), Err(CkksError::LevelMismatch { .. })));
    }
}

#[test]
fn from_poly_accepts_encodings_and_rejects_bad_shapes_and_residues() {
    let params = toy(10, 3, 2, 2);
    let enc = Encoder::new(&params);
    let slots = params.max_slots();
    let v = random_values(slots, 3);
    let pt = enc.encode(&v, slots, 2, 2f64.powi(40)).unwrap();
    let back = Plaintext::from_poly(&params, pt.poly().clone(), pt.scale(), slots).unwrap();
    assert_eq!(back, pt);

    let bad = |r: Result<Plaintext>| matches!(r, Err(CkksError::InvalidPolynomial { .. }));
    // Unreduced residue (q itself, in limb 1).
    let mut p = pt.poly().clone();
    p.limb_mut(1)[5] = params.q()[1];
    assert!(bad(Plaintext::from_poly(&params, p, pt.scale(), slots)));
    // Coefficient domain.
    let mut p = pt.poly().clone();
    p.set_domain(Domain::Coeff);
    assert!(bad(Plaintext::from_poly(&params, p, pt.scale(), slots)));
    // P limbs on a Q plaintext, wrong degree, too many Q limbs.
    let qp = RnsPoly::zero(params.n(), 3, params.k(), Domain::Ntt);
    assert!(bad(Plaintext::from_poly(&params, qp.clone(), 1.0, slots)));
    let small = RnsPoly::zero(params.n() / 2, 3, 0, Domain::Ntt);
    assert!(bad(Plaintext::from_poly(&params, small, 1.0, slots)));
    let tall = RnsPoly::zero(params.n(), params.max_level() + 2, 0, Domain::Ntt);
    assert!(bad(Plaintext::from_poly(&params, tall, 1.0, slots)));
    // Scale and slots as for encoding.
    let z = RnsPoly::zero(params.n(), 3, 0, Domain::Ntt);
    assert!(matches!(
        Plaintext::from_poly(&params, z.clone(), f64::NAN, slots),
        Err(CkksError::BadScale(_))
    ));
    assert!(matches!(Plaintext::from_poly(&params, z, 1.0, 3), Err(CkksError::BadSlots { .. })));

    // Q∪P plaintexts need all k special limbs.
    let qpt = enc.encode_qp(&v, slots, 2, 2f64.powi(40)).unwrap();
    assert_eq!(
        PlaintextQP::from_poly(&params, qpt.poly().clone(), qpt.scale(), slots).unwrap(),
        qpt
    );
    assert!(matches!(
        PlaintextQP::from_poly(&params, pt.poly().clone(), 1.0, slots),
        Err(CkksError::InvalidPolynomial { .. })
    ));
    // Q∪P ciphertexts: matching levels, reduced residues.
    let a = RnsPoly::zero(params.n(), 3, params.k(), Domain::Ntt);
    let b = RnsPoly::zero(params.n(), 2, params.k(), Domain::Ntt);
    assert!(CiphertextQP::from_polys(&params, a.clone(), a.clone(), 1.0, slots).is_ok());
    assert!(matches!(
        CiphertextQP::from_polys(&params, a.clone(), b, 1.0, slots),
        Err(CkksError::LevelMismatch { .. })
    ));
    let mut u = a.clone();
    u.limb_mut(3)[0] = params.p()[0];
    assert!(matches!(
        CiphertextQP::from_polys(&params, a, u, 1.0, slots),
        Err(CkksError::InvalidPolynomial { .. })
    ));
}

#[test]
fn checked_hoisted_rotation_and_in_place_add() {
    let c = setup(toy(10, 2, 2, 2), &[1, 3], false);
    let slots = c.params.max_slots();
    let x = random_values(slots, 21);
    let ct = c.encrypt(&x, 2);
    let decomp = c.eval.decompose(&ct).unwrap();
    let batch = c.eval.rotate_hoisted(&ct, &[0, 1, 3]).unwrap();
    for (r, want) in [0i64, 1, 3].iter().zip(&batch) {
        assert_eq!(&c.eval.rotate_hoisted_with(&ct, &decomp, *r).unwrap(), want, "k = {r}");
    }
    assert!(matches!(
        c.eval.rotate_hoisted_with(&ct, &decomp, 2),
        Err(CkksError::MissingRotationKey { rotation: 2, .. })
    ));
    let low = c.eval.drop_level(&ct, 1).unwrap();
    assert!(matches!(
        c.eval.rotate_hoisted_with(&low, &decomp, 1),
        Err(CkksError::LevelMismatch { .. })
    ));
    let mut a = ct.clone();
    c.eval.add_assign(&mut a, &batch[1]).unwrap();
    assert_eq!(a, c.eval.add(&ct, &batch[1]).unwrap());
    assert!(matches!(c.eval.add_assign(&mut a, &low), Err(CkksError::LevelMismatch { .. })));
    assert_eq!(c.eval.p_mod_q(0).len(), c.params.q().len());
    assert_eq!(c.eval.encoder().params().id(), c.params.id());
}
