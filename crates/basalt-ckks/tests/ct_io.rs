//! Ciphertext loads and stores in the trace: every public evaluator operation reads its
//! ciphertext operands (`CtLoad`) and writes its result (`CtStore`) under dense ids, nested
//! operations report nothing, and a real run records what a symbolic one does.

mod common;
use basalt_ckks::*;
use basalt_trace::{Kernel, KernelKind, Trace, record};
use common::*;

/// `('L' | 'S', id, limbs, polys)` of every ciphertext access, in order.
fn io(t: &Trace) -> Vec<(char, u64, u32, u32)> {
    t.kernels()
        .filter_map(|k| match *k {
            Kernel::CtLoad { id, limbs, polys, .. } => Some(('L', id, limbs, polys)),
            Kernel::CtStore { id, limbs, polys, .. } => Some(('S', id, limbs, polys)),
            _ => None,
        })
        .collect()
}

#[test]
fn operations_load_operands_and_store_results_under_dense_ids() {
    let c = setup(toy(10, 4, 2, 3), &[1], false);
    let level = 4usize;
    let a = c.encrypt(&random_values(4, 1), level);
    let b = c.encrypt(&random_values(4, 2), level);
    let (sa, sb) = (
        Ciphertext::symbolic(&c.params, level).unwrap(),
        Ciphertext::symbolic(&c.params, level).unwrap(),
    );
    let program = |x: &Ciphertext, y: &Ciphertext| {
        let m = c.eval.mul_relin(x, y).unwrap(); // mul and relinearize inside: not reported
        let r = c.eval.rescale(&m).unwrap();
        c.eval.add(&r, &r).unwrap()
    };
    let (out, real) = record(|| program(&a, &b));
    let (_, symb) = record(|| program(&sa, &sb));
    assert_eq!(real, symb, "ids are renumbered per recording, so the traces are equal");
    let (l, r) = (level as u32 + 1, level as u32);
    assert_eq!(
        io(&real),
        [
            ('L', 0, l, 2),
            ('L', 1, l, 2),
            ('S', 2, l, 2),
            ('L', 2, l, 2),
            ('S', 3, r, 2),
            ('L', 3, r, 2),
            ('L', 3, r, 2),
            ('S', 4, r, 2),
        ]
    );
    // Loads come before the operation's kernels and the store after them.
    let first_ntt = real.kernels().position(|k| matches!(k, Kernel::Ntt { .. })).unwrap();
    let first_store = real.kernels().position(|k| matches!(k, Kernel::CtStore { .. })).unwrap();
    assert!(first_store > first_ntt, "HMult's key switch runs before its result is stored");
    assert_eq!(real.count(KernelKind::CtLoad), 3 * (2 * l as u64) + 2 * (2 * r as u64));
    // The result computes the same thing it did before the trace named it.
    let want: Vec<_> = {
        let (x, y) = (random_values(4, 1), random_values(4, 2));
        x.iter().zip(&y).map(|(p, q)| 2.0 * p * q).collect()
    };
    assert!(c.precision(&want, &out).min.l2 > 15.0);
}

#[test]
fn copies_that_change_get_their_own_identity() {
    let c = setup(toy(10, 3, 2, 2), &[1], false);
    let x = Ciphertext::symbolic(&c.params, 3).unwrap();
    // −x is a modified copy of x: reading both must name two objects.
    let (_, t) = record(|| {
        let n = c.eval.neg(&x).unwrap();
        c.eval.add(&x, &n).unwrap()
    });
    let ids: Vec<_> = io(&t).iter().map(|&(k, id, ..)| (k, id)).collect();
    assert_eq!(ids, [('L', 0), ('S', 1), ('L', 0), ('L', 1), ('S', 2)]);
    // In place: the accumulator is read, then written as a new object.
    let (_, t) = record(|| {
        let mut acc = x.clone();
        c.eval.add_assign(&mut acc, &x).unwrap();
        c.eval.add_assign(&mut acc, &x).unwrap();
    });
    let ids: Vec<_> = io(&t).iter().map(|&(k, id, ..)| (k, id)).collect();
    assert_eq!(ids, [('L', 0), ('L', 0), ('S', 1), ('L', 1), ('L', 0), ('S', 2)]);
    // A plain clone is the same value: reading it is reading the same object.
    let y = x.clone();
    let (_, t) = record(|| c.eval.add(&x, &y).unwrap());
    assert_eq!(io(&t)[..2].iter().map(|e| e.1).collect::<Vec<_>>(), [0, 0]);
}

#[test]
fn hoisted_decompositions_and_lazy_results_are_objects_too() {
    let rots = [1i64, 2];
    let c = setup(toy(10, 4, 2, 3), &rots, false);
    let level = 4usize;
    let x = Ciphertext::symbolic(&c.params, level).unwrap();
    let (l1, k, beta) = (level as u32 + 1, c.params.k_at(level) as u32, c.params.dnum_at(level));
    let (_, t) = record(|| {
        let d = c.eval.decompose(&x).unwrap();
        let a = c.eval.rotate_hoisted_with(&x, &d, 1).unwrap();
        let lazy = c.eval.rotate_hoisted_lazy(&x, &d, &rots).unwrap();
        let mut acc = lazy[0].clone();
        acc.try_add_assign(&c.params, &lazy[1]).unwrap();
        (a, c.eval.mod_down(&acc).unwrap())
    });
    let qp = l1 + k;
    assert_eq!(
        io(&t),
        [
            ('L', 0, l1, 2),
            ('S', 1, qp, beta as u32), // the decomposition: β digits over Q_l ∪ P
            ('L', 0, l1, 2),
            ('L', 1, qp, beta as u32),
            ('S', 2, l1, 2),
            ('L', 0, l1, 2),
            ('L', 1, qp, beta as u32),
            ('S', 3, qp, 2), // lazy results live over Q_l ∪ P
            ('S', 4, qp, 2),
            ('L', 3, qp, 2),
            ('L', 4, qp, 2),
            ('S', 5, qp, 2),
            ('L', 5, qp, 2),
            ('S', 6, l1, 2),
        ]
    );
    // Outside a recording nothing is emitted and nothing is left open.
    let _ = c.eval.mul_relin(&x, &x).unwrap();
    let ((), t) = record(|| ());
    assert!(t.events.is_empty());
}

#[test]
fn a_fused_operation_reports_only_what_it_declares() {
    let c = setup(toy(10, 3, 2, 2), &[1], false);
    let x = Ciphertext::symbolic(&c.params, 3).unwrap();
    let (_, t) = record(|| {
        let step = FusedOperation::begin();
        step.reads(&x);
        let mut y = c.eval.rotate(&x, 1).unwrap(); // nested: neither loaded nor stored
        c.eval.add_assign(&mut y, &x).unwrap();
        step.writes(&mut y);
        drop(step);
        c.eval.neg(&y).unwrap() // an operation again after the group
    });
    let ids: Vec<_> = io(&t).iter().map(|&(k, id, ..)| (k, id)).collect();
    assert_eq!(ids, [('L', 0), ('S', 1), ('L', 1), ('S', 2)]);
    assert!(t.count(KernelKind::KeyLoad) > 0, "the work inside is still recorded");
}
