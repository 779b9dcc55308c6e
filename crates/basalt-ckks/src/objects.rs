//! Ciphertext loads and stores for the trace (see `basalt_trace::operation`).
//!
//! Every public evaluator operation opens a [`basalt_trace::Operation`], reports a `CtLoad`
//! for each ciphertext-like operand and a `CtStore` for its result, and gives the result a
//! fresh identity (a copy-and-modify result must not share its source's). Nested operations
//! report nothing, so the trace shows what a program reads and writes, not how an operation
//! is built. A simulator's on-chip store then decides which of these accesses reach HBM.
//!
//! A circuit whose target machine pipelines several operations — Osiris consumes each
//! baby-step rotation in the same pass that forms its n2 diagonal products (§IV-E, the GSC
//! dataflow) — groups them in one [`FusedOperation`]: it states what the group reads and
//! writes, and the operations inside report nothing, so their intermediates never appear.

use basalt_trace::{ObjectId, ObjectShape, Operation};

use crate::ciphertext::Ciphertext;
use crate::keyswitch::{CiphertextQP, HoistedDecomp};

mod sealed {
    pub trait Sealed {}
}

/// A value that lives in memory between operations and is named in the trace: a
/// [`Ciphertext`], a lazy [`CiphertextQP`] or a [`HoistedDecomp`].
pub trait Stored: sealed::Sealed {
    /// Its identity and shape as a `CtLoad`/`CtStore` reports them.
    fn object(&self) -> (ObjectId, ObjectShape);
    /// Give it a fresh identity (it now holds a new value).
    fn renew(&mut self);
}

fn shape(n: usize, limbs: usize, polys: usize) -> ObjectShape {
    ObjectShape { n: n as u32, limbs: limbs as u32, polys: polys as u32 }
}

impl sealed::Sealed for Ciphertext {}
impl Stored for Ciphertext {
    fn object(&self) -> (ObjectId, ObjectShape) {
        let p = &self.polys[0];
        (self.object, shape(p.n(), p.q_limbs() + p.p_limbs(), self.polys.len()))
    }
    fn renew(&mut self) {
        self.object = ObjectId::fresh();
    }
}

impl sealed::Sealed for CiphertextQP {}
impl Stored for CiphertextQP {
    fn object(&self) -> (ObjectId, ObjectShape) {
        (self.object, shape(self.c0.n(), self.c0.q_limbs() + self.c0.p_limbs(), 2))
    }
    fn renew(&mut self) {
        self.object = ObjectId::fresh();
    }
}

impl sealed::Sealed for HoistedDecomp {}
impl Stored for HoistedDecomp {
    fn object(&self) -> (ObjectId, ObjectShape) {
        let d = &self.digits[0];
        (self.object, shape(d.n(), d.q_limbs() + d.p_limbs(), self.digits.len()))
    }
    fn renew(&mut self) {
        self.object = ObjectId::fresh();
    }
}

/// Report that `op` reads `x`.
pub(crate) fn load(op: &Operation, x: &impl Stored) {
    if op.is_outer() {
        let (id, s) = x.object();
        op.load(id, s);
    }
}

/// Give `x` (the result of `op`) a fresh identity and report its store.
pub(crate) fn store<T: Stored>(op: &Operation, mut x: T) -> T {
    store_in_place(op, &mut x);
    x
}

/// [`store`] for a result computed in place.
pub(crate) fn store_in_place(op: &Operation, x: &mut impl Stored) {
    x.renew();
    if op.is_outer() {
        let (id, s) = x.object();
        op.store(id, s);
    }
}

/// Several evaluator operations traced as one: the caller names what the group reads
/// ([`FusedOperation::reads`], before running it) and writes ([`FusedOperation::writes`],
/// after); the operations run in between are nested and report nothing. The arithmetic is
/// unchanged. Outside a recording, or inside another operation, it reports nothing either.
#[must_use = "the group ends when the guard is dropped"]
pub struct FusedOperation {
    op: Operation,
}

impl FusedOperation {
    /// Begin a group.
    pub fn begin() -> FusedOperation {
        FusedOperation { op: basalt_trace::operation() }
    }

    /// The group reads `x`.
    pub fn reads(&self, x: &impl Stored) {
        load(&self.op, x);
    }

    /// The group wrote `x` (it gets a fresh identity).
    pub fn writes(&self, x: &mut impl Stored) {
        store_in_place(&self.op, x);
    }
}
