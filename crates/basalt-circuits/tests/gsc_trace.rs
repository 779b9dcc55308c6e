//! The giant-step-centric order traces each baby step and its products as one operation
//! (Osiris §IV-E): the rotated ciphertext is consumed as it is produced, so it is never stored
//! and re-read; the baby-step-centric order stores every rotation and reads it once per giant
//! step.

use std::collections::BTreeMap;

use basalt_circuits::Result;
use basalt_circuits::lintrans::{Diagonals, GscOrder, Hoisting, LinearTransform, Strategy};
use basalt_circuits::testing::{Ctx, random_values, symbolic_like, toy_params};
use basalt_trace::{Kernel, Trace, record};

const SLOTS: usize = 64;

/// For every object the trace stores (but the first, the shared decomposition): how many
/// loads read it.
fn reads_of_stored(t: &Trace) -> Vec<usize> {
    let mut reads: BTreeMap<u64, usize> = BTreeMap::new();
    let mut first = None;
    for k in t.kernels() {
        match *k {
            Kernel::CtStore { id, .. } => {
                first.get_or_insert(id);
                reads.insert(id, 0);
            }
            Kernel::CtLoad { id, .. } => {
                if let Some(r) = reads.get_mut(&id) {
                    *r += 1;
                }
            }
            _ => {}
        }
    }
    reads.into_iter().filter(|(id, _)| Some(*id) != first).map(|(_, r)| r).collect()
}

#[test]
fn gsc_never_stores_a_baby_step() -> Result<()> {
    let params = toy_params(10, 2, 40, 2);
    let mut map = BTreeMap::new();
    // Every giant step (n1 = 4) uses baby steps 0..3, so each rotation serves several.
    for (t, k) in [0i64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].into_iter().enumerate() {
        map.insert(k, random_values(SLOTS, 200 + t as u64, false));
    }
    let diags = Diagonals::from_map(SLOTS, map)?;
    let strategy = |h, order| Strategy::Bsgs { n1: 4, hoisting: h, order };
    let gsc = GscOrder::GiantStepCentric { max_partials: 3, of_limb: true };
    let lt = LinearTransform::new(&params, diags.clone(), strategy(Hoisting::Single, gsc), 2)?;
    let ctx = Ctx::new(&params, &lt.rotations())?;
    let ct = ctx.encrypt(&random_values(SLOTS, 5, false), SLOTS, 2)?;
    let sym = symbolic_like(&params, &ct)?;
    for h in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
        let run = |order| -> Result<Trace> {
            let lt = LinearTransform::new(&params, diags.clone(), strategy(h, order), 2)?;
            let (r, t) = record(|| lt.evaluate(&ctx.eval, &sym));
            r?;
            Ok(t)
        };
        let g = reads_of_stored(&run(gsc)?);
        assert!(g.iter().all(|&r| r <= 1), "{h:?}: GSC re-reads a stored object: {g:?}");
        // The loop order alone, diagonals stored at every limb (no OF-Limb): the same.
        let stored = GscOrder::GiantStepCentric { max_partials: 3, of_limb: false };
        let s = reads_of_stored(&run(stored)?);
        assert!(s.iter().all(|&r| r <= 1), "{h:?}: GSC (stored) re-reads: {s:?}");
        let b = reads_of_stored(&run(GscOrder::BabyStepCentric)?);
        assert!(b.iter().any(|&r| r >= 3), "{h:?}: baby-step-centric re-reads its rotations");
    }
    Ok(())
}
