//! Identities of off-chip objects and the operation scope that reports their loads and stores.
//!
//! An accelerator keeps a program's ciphertexts in its on-chip memory while it can and spills
//! the rest to HBM (CraterLake §6 and Fig. 10a; Osiris keeps giant-step partial sums resident).
//! For a simulator to decide which accesses hit, the trace must say which object each operation
//! reads (`CtLoad`) and writes (`CtStore`). Each ciphertext-like value carries an [`ObjectId`]
//! drawn from a process-wide counter; the recorder renumbers ids densely in order of first
//! appearance, so one program records one trace whatever ran before it in the process, and a
//! real and a symbolic run record identical traces.
//!
//! Only the outermost operation reports: a product with relinearization reads two ciphertexts
//! and writes one; the tensor and key switch inside it are that operation's working set, as on
//! a machine that computes one homomorphic operation at a time from on-chip operands.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::kernel::Kernel;
use crate::recorder::{emit, is_recording};

static NEXT: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The identity of a ciphertext value in the trace. It is not part of the value: two objects
/// with equal contents compare equal whatever their ids (so `PartialEq` on the objects that
/// carry one stays about their contents). For the same reason it is not `Hash`: key maps by
/// [`ObjectId::raw`].
#[derive(Clone, Copy, Debug, Eq)]
pub struct ObjectId(u64);

impl PartialEq for ObjectId {
    fn eq(&self, _: &ObjectId) -> bool {
        true
    }
}

impl ObjectId {
    /// A new identity, distinct from every other one handed out by this process.
    pub fn fresh() -> ObjectId {
        ObjectId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The raw number (unique per process; traces hold renumbered ids).
    pub fn raw(self) -> u64 {
        self.0
    }
}

impl Default for ObjectId {
    fn default() -> ObjectId {
        ObjectId::fresh()
    }
}

/// The shape of an object as the trace counts it: `polys` polynomials of `limbs` residues of
/// degree `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectShape {
    pub n: u32,
    pub limbs: u32,
    pub polys: u32,
}

/// One homomorphic operation in progress (see [`operation`]); reports loads and stores only
/// when it is the outermost operation of a recording thread.
#[must_use = "the operation ends when the guard is dropped"]
pub struct Operation {
    outer: bool,
}

impl Drop for Operation {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Begin an operation until the guard drops. Operations nest; only the outermost one emits
/// its loads and stores, and only while a recorder is open.
pub fn operation() -> Operation {
    let depth = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v
    });
    Operation { outer: depth == 0 && is_recording() }
}

impl Operation {
    /// True when this operation reports (outermost, recording).
    pub fn is_outer(&self) -> bool {
        self.outer
    }

    /// Report that the operation reads object `id`.
    pub fn load(&self, id: ObjectId, s: ObjectShape) {
        if self.outer {
            emit(Kernel::CtLoad { n: s.n, limbs: s.limbs, polys: s.polys, id: id.0 });
        }
    }

    /// Report that the operation writes its result `id` (a fresh identity: the caller renews
    /// the result's id, since a copy-and-modify result must not share its source's).
    pub fn store(&self, id: ObjectId, s: ObjectShape) {
        if self.outer {
            emit(Kernel::CtStore { n: s.n, limbs: s.limbs, polys: s.polys, id: id.0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KernelKind, record};

    const S: ObjectShape = ObjectShape { n: 8, limbs: 2, polys: 2 };

    fn op(a: ObjectId, b: ObjectId, out: ObjectId, inner: bool) {
        let o = operation();
        o.load(a, S);
        o.load(b, S);
        if inner {
            op(a, b, ObjectId::fresh(), false);
        }
        o.store(out, S);
    }

    #[test]
    fn only_the_outermost_operation_reports_and_ids_are_dense() {
        let (a, b, c) = (ObjectId::fresh(), ObjectId::fresh(), ObjectId::fresh());
        let ((), t) = record(|| op(a, b, c, true));
        let ids: Vec<_> = t
            .kernels()
            .map(|k| match *k {
                Kernel::CtLoad { id, .. } => ('L', id),
                Kernel::CtStore { id, .. } => ('S', id),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(ids, vec![('L', 0), ('L', 1), ('S', 2)]);
        // The same program on other objects records the same trace.
        let (x, y, z) = (ObjectId::fresh(), ObjectId::fresh(), ObjectId::fresh());
        assert_eq!(record(|| op(x, y, z, true)).1, t);
        // Reading one object twice names it once.
        let ((), t) = record(|| op(a, a, b, false));
        assert_eq!(t.count(KernelKind::CtLoad), 8);
        assert!(t.kernels().all(|k| !matches!(k, Kernel::CtLoad { id, .. } if *id != 0)));
        // Outside a recording nothing is emitted and the depth is restored.
        op(a, b, c, true);
        assert!(record(|| operation().is_outer()).0);
    }

    #[test]
    fn a_panicking_operation_restores_the_depth() {
        let r = std::panic::catch_unwind(|| {
            let _o = operation();
            panic!("boom");
        });
        assert!(r.is_err());
        assert!(record(|| operation().is_outer()).0);
        assert_ne!(ObjectId::fresh().raw(), ObjectId::fresh().raw());
        assert_eq!(ObjectId::fresh(), ObjectId::fresh(), "ids are not part of values");
    }
}
