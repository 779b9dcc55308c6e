//! Small functions shared by the key and evaluator modules: views of a polynomial on fewer limbs,
//! lifting a Q polynomial to `Q ∪ P`, and the CSPRNG.

use basalt_math::{RingContext, RnsPoly};
use basalt_trace::{ElemOp, Kernel, emit};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// The first `q_limbs` Q limbs and first `p_limbs` P limbs of `a` (a copy; symbolic stays
/// symbolic). Not a kernel: a hardware model would address the limbs in place.
pub(crate) fn restrict(a: &RnsPoly, q_limbs: usize, p_limbs: usize) -> RnsPoly {
    assert!(q_limbs <= a.q_limbs() && p_limbs <= a.p_limbs(), "restrict: cannot add limbs");
    if a.is_symbolic() {
        return RnsPoly::symbolic(a.n(), q_limbs, p_limbs, a.domain());
    }
    if q_limbs == a.q_limbs() && p_limbs == a.p_limbs() {
        return a.clone();
    }
    let n = a.n();
    let mut data = Vec::with_capacity(n * (q_limbs + p_limbs));
    data.extend_from_slice(&a.data()[..n * q_limbs]);
    let p0 = a.q_limbs() * n;
    data.extend_from_slice(&a.data()[p0..p0 + n * p_limbs]);
    RnsPoly::from_parts(n, q_limbs, p_limbs, a.domain(), data).expect("shape matches")
}

/// `P · a` on `Q_l ∪ P` for a `Q_l` polynomial `a`: the Q limbs are `a · (P mod q_i)`, the P
/// limbs are 0. Used to bring `c_0` into the extended basis for lazy (double-hoisted)
/// rotations, where ModDown divides everything by `P` at the end.
pub(crate) fn lift_times_p(ring: &RingContext, a: &RnsPoly, k: usize, p_mod_q: &[u64]) -> RnsPoly {
    let l1 = a.q_limbs();
    let n = a.n();
    emit(Kernel::Elem { n: n as u32, limbs: l1 as u32, op: ElemOp::MulScalar });
    if a.is_symbolic() {
        return RnsPoly::symbolic(n, l1, k, a.domain());
    }
    let mut out = RnsPoly::zero(n, l1, k, a.domain());
    for (i, &pq) in p_mod_q.iter().enumerate().take(l1) {
        let m = ring.q()[i];
        let (w, ws) = (pq, m.shoup(pq));
        let src = a.limb(i);
        out.limb_mut(i).iter_mut().zip(src).for_each(|(o, &x)| *o = m.mul_shoup(x, w, ws));
    }
    out
}

/// A ChaCha20 CSPRNG seeded from the operating system.
pub(crate) fn csprng() -> ChaCha20Rng {
    ChaCha20Rng::from_seed(basalt_math::sampler::fresh_seed())
}
