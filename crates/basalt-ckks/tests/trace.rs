//! Trace mode: the same evaluator code on symbolic ciphertexts records the same kernels as a
//! real run, and the counts equal the closed forms of `keyswitch::cost`.

mod common;
use basalt_ckks::keyswitch;
use basalt_ckks::*;
use basalt_trace::{ElemOp, Kernel, KernelKind, Trace, record};
use common::*;

#[test]
fn real_and_symbolic_traces_are_equal_and_match_closed_forms() {
    for (dnum, k, seeded) in [(5usize, 1usize, false), (2, 3, true), (1, 5, false), (3, 2, true)] {
        let c = setup(toy(10, 4, k, dnum), &[1], seeded);
        for variant in [KsVariant::Hybrid, KsVariant::Reordered] {
            let e = c.eval.clone().with_variant(variant, 3);
            for level in [4usize, 2] {
                let ct = c.encrypt(&random_values(4, 1), level);
                let sym = Ciphertext::symbolic(&c.params, level).unwrap();
                let what = format!("dnum={dnum} k={k} seeded={seeded} {variant:?} level={level}");
                // HMult + relinearization.
                let (r, real) = record(|| e.mul_relin(&ct, &ct).unwrap());
                let (s, symb) = record(|| e.mul_relin(&sym, &sym).unwrap());
                assert!(s.is_symbolic() && !r.is_symbolic());
                if variant == KsVariant::Hybrid {
                    assert_eq!(real, symb, "{what}: HMult traces differ");
                } else {
                    assert_eq!(
                        real.kernels().collect::<Vec<_>>(),
                        symb.kernels().collect::<Vec<_>>()
                    );
                }
                let cost = keyswitch::cost(&c.params, level);
                // The tensor adds one MulAcc of l+1 limbs.
                check_ks_counts(&real, &cost, (level + 1) as u64, &what);
                let keygen = if seeded { cost.key_limbs / 2 } else { 0 };
                assert_eq!(real.count(KernelKind::KeyGen), keygen, "{what}: KeyGen");
                // Rotation.
                let (_, real) = record(|| e.rotate(&ct, 1).unwrap());
                let (_, symb) = record(|| e.rotate(&sym, 1).unwrap());
                assert_eq!(real, symb, "{what}: rotation traces differ");
                check_ks_counts(&real, &cost, 0, &what);
                assert_eq!(real.count(KernelKind::Automorph), 2 * (level + 1) as u64);
                // Rescale: count INTT, (l) NTT per polynomial.
                let m = e.mul_relin(&ct, &ct).unwrap();
                let (_, real) = record(|| e.rescale(&m).unwrap());
                let (_, symb) =
                    record(|| e.rescale(&Ciphertext::symbolic(&c.params, level).unwrap()).unwrap());
                assert_eq!(real, symb);
                assert_eq!(real.count(KernelKind::Intt), 2);
                assert_eq!(real.count(KernelKind::Ntt), 2 * level as u64);
            }
        }
    }
}

#[test]
fn regions_are_named() {
    let c = setup(toy(10, 3, 2, 2), &[1], false);
    let sym = Ciphertext::symbolic(&c.params, 3).unwrap();
    let (_, t) = record(|| c.eval.rescale(&c.eval.mul_relin(&sym, &sym).unwrap()).unwrap());
    let names: Vec<String> = t
        .events
        .iter()
        .filter_map(|e| match e {
            basalt_trace::Event::Enter { name } => Some(name.clone()),
            _ => None,
        })
        .collect();
    for want in [
        "HMult",
        "Tensor",
        "Relinearize",
        "KeySwitch",
        "Decompose",
        "ModUp",
        "InnerProduct",
        "ModDown",
        "Rescale",
    ] {
        assert!(names.iter().any(|n| n == want), "missing region {want}: {names:?}");
    }
    let (_, t) = record(|| c.eval.rotate(&sym, 1).unwrap());
    assert!(
        t.events
            .iter()
            .any(|e| matches!(e, basalt_trace::Event::Enter { name } if name == "Rotate"))
    );
    assert!(t.kernels().any(|k| matches!(k, Kernel::KeyLoad { seeded: false, .. })));
}

/// Every key load names its key (relin, or the rotation's Galois element) for the simulator's
/// on-chip store: `Event::Key` immediately precedes each `KeyLoad`.
#[test]
fn key_loads_name_their_keys() {
    use basalt_trace::{Event, KeyId};
    let rots: Vec<i64> = (1..=3).collect();
    let c = setup(toy(10, 3, 2, 2), &rots, false);
    let sym = Ciphertext::symbolic(&c.params, 3).unwrap();
    let keys_before_loads = |t: &Trace| -> Vec<KeyId> {
        t.events
            .windows(2)
            .filter_map(|w| match w {
                [Event::Key { key }, Event::Kernel(Kernel::KeyLoad { .. })] => Some(*key),
                _ => None,
            })
            .collect()
    };
    let (_, t) = record(|| c.eval.mul_relin(&sym, &sym).unwrap());
    assert_eq!(keys_before_loads(&t), [KeyId::Relin]);
    let ring = c.params.ring();
    let g = |k: i64| KeyId::Galois { element: ring.galois_element_for_rotation(k) };
    let (_, t) = record(|| c.eval.rotate(&c.eval.rotate(&sym, 1).unwrap(), 1).unwrap());
    assert_eq!(keys_before_loads(&t), [g(1), g(1)]);
    let (_, t) = record(|| c.eval.rotate_hoisted(&sym, &rots).unwrap());
    assert_eq!(keys_before_loads(&t), [g(1), g(2), g(3)]);
    // No load goes unnamed, and no name dangles.
    let loads = t.kernels().filter(|k| matches!(k, Kernel::KeyLoad { .. })).count();
    let names = t.events.iter().filter(|e| matches!(e, Event::Key { .. })).count();
    assert_eq!((loads, names), (3, 3));
    // Double hoisting's giant step (a rotation of a `Q ∪ P` sum) names its key too.
    let d = c.eval.decompose(&sym).unwrap();
    let lazy = c.eval.rotate_hoisted_lazy(&sym, &d, &[1]).unwrap();
    let (_, t) = record(|| c.eval.rotate_lazy_qp(&lazy[0], 2).unwrap());
    assert_eq!(keys_before_loads(&t), [g(2)]);
    // So does a single-hoisted rotation from a shared decomposition (it did not: a key read
    // twice by single-hoisted products never hit on chip).
    let (_, t) = record(|| c.eval.rotate_hoisted_with(&sym, &d, 3).unwrap());
    assert_eq!(keys_before_loads(&t), [g(3)]);
}

#[test]
fn hoisted_rotations_trace_matches_closed_form() {
    let rots: Vec<i64> = (1..=8).collect();
    let c = setup(toy(10, 4, 2, 3), &rots, false);
    let level = 4usize;
    let ct = c.encrypt(&random_values(4, 1), level);
    let sym = Ciphertext::symbolic(&c.params, level).unwrap();
    let (_, real) = record(|| c.eval.rotate_hoisted(&ct, &rots).unwrap());
    let (_, symb) = record(|| c.eval.rotate_hoisted(&sym, &rots).unwrap());
    assert_eq!(real, symb);
    let (l1, k, beta) = ((level + 1) as u64, c.params.k() as u64, c.params.dnum_at(level) as u64);
    let r = rots.len() as u64;
    // Decompose once: INTT l+1, ModUp NTT β(l+1+k) − (l+1); per rotation ModDown.
    assert_eq!(real.count(KernelKind::Intt), l1 + r * 2 * k);
    assert_eq!(real.count(KernelKind::Ntt), beta * (l1 + k) - l1 + r * 2 * l1);
    // The automorphism permutes each rotation's output pair after its ModDown (Lattigo's
    // order), not the β extended digits and c_0 before the key switch (r·(β(l+1+k) + l+1)).
    assert_eq!(real.count(KernelKind::Automorph), r * 2 * l1);
    assert_eq!(real.count(KernelKind::Elem(ElemOp::MulAcc)), r * 2 * beta * (l1 + k));
}

#[test]
fn double_hoisted_sum_pays_one_mod_down() {
    let rots: Vec<i64> = (1..=8).collect();
    let c = setup(toy(10, 4, 2, 3), &rots, true);
    let level = 3usize;
    let ct = c.encrypt(&random_values(4, 1), level);
    let sym = Ciphertext::symbolic(&c.params, level).unwrap();
    let run = |x: &Ciphertext| {
        let d = c.eval.decompose(x).unwrap();
        let lazy = c.eval.rotate_hoisted_lazy(x, &d, &rots).unwrap();
        let mut acc = lazy[0].clone();
        for l in &lazy[1..] {
            acc.try_add_assign(&c.params, l).unwrap();
        }
        c.eval.mod_down(&acc).unwrap()
    };
    let (_, real) = record(|| run(&ct));
    let (_, symb) = record(|| run(&sym));
    assert_eq!(real, symb);
    let (l1, k, beta) = ((level + 1) as u64, c.params.k() as u64, c.params.dnum_at(level) as u64);
    let r = rots.len() as u64;
    assert_eq!(real.count(KernelKind::Intt), l1 + 2 * k);
    assert_eq!(real.count(KernelKind::Ntt), beta * (l1 + k) - l1 + 2 * l1);
    assert_eq!(real.count(KernelKind::KeyGen), r * beta * (l1 + k), "seeded keys regenerate a_j");
    assert_eq!(real.count(KernelKind::KeyLoad), r * 2 * beta * (l1 + k));
}

#[test]
fn symbolic_keys_trace_like_real_keys_and_refuse_real_ciphertexts() {
    for seeded in [false, true] {
        let c = setup(toy(10, 4, 2, 3), &[1, 3], seeded);
        let kg = KeyGenerator::new(&c.params);
        let sym_keys = kg.gen_symbolic_evaluation_keys(&[1, 3], false, seeded);
        let e = Evaluator::new(&c.params, sym_keys).unwrap();
        let sym = Ciphertext::symbolic(&c.params, 4).unwrap();
        let (_, with_real_keys) = record(|| {
            let m = c.eval.mul_relin(&sym, &sym).unwrap();
            c.eval.rescale(&m).unwrap();
            c.eval.rotate(&sym, 3).unwrap();
            c.eval.rotate_hoisted(&sym, &[1, 3]).unwrap();
        });
        let (_, with_sym_keys) = record(|| {
            let m = e.mul_relin(&sym, &sym).unwrap();
            e.rescale(&m).unwrap();
            e.rotate(&sym, 3).unwrap();
            e.rotate_hoisted(&sym, &[1, 3]).unwrap();
        });
        assert_eq!(with_real_keys, with_sym_keys, "seeded={seeded}");
        let real = c.encrypt(&random_values(4, 1), 4);
        assert!(matches!(e.rotate(&real, 1), Err(CkksError::SymbolicMix)));
        assert!(matches!(e.mul_relin(&real, &real), Err(CkksError::SymbolicMix)));
    }
}
