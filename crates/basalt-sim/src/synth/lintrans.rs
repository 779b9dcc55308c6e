//! Double-hoisted BSGS matrix–vector product in closed form (Osiris §III, §IV-E; Bossuat et al.
//! double hoisting as implemented in Lattigo).

use basalt_trace::{ElemOp, Kernel, Trace};

use crate::synth::Builder;

/// Shape of one BSGS product at one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsgsShape {
    /// Ring degree N.
    pub n: u32,
    /// Q limbs (ℓ + 1).
    pub q_limbs: u32,
    /// P limbs (Osiris: α).
    pub p_limbs: u32,
    /// Baby steps n1 and giant steps n2; the matrix has n1·n2 non-zero diagonals.
    pub n1: u32,
    pub n2: u32,
}

/// Double-hoisted BSGS with keys regenerated from seeds and plaintext diagonals extended on the
/// fly from their q0 limb (OF-Limb).
///
/// # Algorithm
/// 1. Hoisted decomposition once: INTT the Q limbs, BConv the (single, α ≥ ℓ+1) digit to the P
///    limbs, NTT them.
/// 2. Baby step i ≥ 1: load the rotation key (seeded half) and regenerate the other half,
///    automorphism of the hoisted digit and c0, key multiplication in QP (no ModDown).
/// 3. Diagonal (i, j): load its q0 limb, NTT it into all QP limbs (OF-Limb), multiply-accumulate
///    into giant-step partial j.
/// 4. Giant step j ≥ 1: ModDown c1 of partial j, key switch it (ModUp, key, KeyMult), rotate,
///    accumulate. 5. Final ModDown of both polynomials.
///
/// With `gsc` (Osiris's giant-step-centric order) each baby step is one region holding its key
/// load, its rotation and its n2 diagonals, so the next key streams in while the diagonals are
/// generated. Without it, all baby-step rotations come first (one region each) and the
/// diagonals follow, one region per giant step.
pub fn bsgs_double_hoisted(s: BsgsShape, gsc: bool) -> Trace {
    let BsgsShape { n, q_limbs: lq, p_limbs: lp, n1, n2 } = s;
    let qp = lq + lp;
    let mut b = Builder::new();
    let key = |b: &mut Builder| {
        b.k(Kernel::KeyLoad { n, limbs: qp, digits: 1, seeded: true });
        b.k(Kernel::KeyGen { n, limbs: qp });
    };
    let rotation = |b: &mut Builder| {
        key(b);
        b.k(Kernel::Automorph { n, limbs: qp + lq, galois: 5 });
        b.k(Kernel::Elem { n, limbs: 2 * qp, op: ElemOp::MulAcc });
    };
    let diagonal = |b: &mut Builder| {
        b.k(Kernel::PlainLoad { n, limbs: 1 });
        b.k(Kernel::Ntt { n, limbs: qp });
        b.k(Kernel::Elem { n, limbs: 2 * qp, op: ElemOp::MulAcc });
    };
    let mod_down = |b: &mut Builder| {
        b.k(Kernel::Intt { n, limbs: lp });
        b.k(Kernel::BConv { n, from: lp, to: lq });
        b.k(Kernel::Ntt { n, limbs: lq });
        b.k(Kernel::Elem { n, limbs: lq, op: ElemOp::MulScalar });
    };
    b.region("MatVec", |b| {
        b.region("Decompose", |b| {
            b.k(Kernel::Intt { n, limbs: lq });
            b.k(Kernel::BConv { n, from: lq, to: lp });
            b.k(Kernel::Ntt { n, limbs: lp });
        });
        if gsc {
            for i in 0..n1 {
                b.region("BabyStep", |b| {
                    if i > 0 {
                        rotation(b);
                    }
                    for _ in 0..n2 {
                        diagonal(b);
                    }
                });
            }
        } else {
            for _ in 1..n1 {
                b.region("BabyStep", rotation);
            }
            for _ in 0..n2 {
                b.region("Diagonals", |b| {
                    for _ in 0..n1 {
                        diagonal(b);
                    }
                });
            }
        }
        for _ in 1..n2 {
            b.region("GiantStep", |b| {
                mod_down(b);
                b.k(Kernel::Intt { n, limbs: lq });
                b.k(Kernel::BConv { n, from: lq, to: lp });
                b.k(Kernel::Ntt { n, limbs: lp });
                rotation(b);
                b.k(Kernel::Elem { n, limbs: 2 * qp, op: ElemOp::Add });
            });
        }
        b.region("ModDown", |b| {
            mod_down(b);
            mod_down(b);
        });
    });
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::KernelKind;

    #[test]
    fn counts_and_orders_agree() {
        let s = BsgsShape { n: 16, q_limbs: 3, p_limbs: 4, n1: 4, n2: 2 };
        let a = bsgs_double_hoisted(s, true);
        let b = bsgs_double_hoisted(s, false);
        // Same kernels, different order: (n1 − 1) + (n2 − 1) keys, n1·n2 diagonals.
        assert_eq!(a.counts(), b.counts());
        assert_eq!(a.count(KernelKind::KeyLoad), 4 * 2 * 7);
        assert_eq!(a.count(KernelKind::PlainLoad), 8);
        // OF-Limb NTTs: 8 diagonals × 7 QP limbs, plus decomposition 4, giant step 3 + 4,
        // final ModDown 2 × 3.
        assert_eq!(a.count(KernelKind::Ntt), 56 + 4 + 7 + 6);
    }
}
