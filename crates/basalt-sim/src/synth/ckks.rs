//! CKKS kernel streams in closed form (see the module note in `synth`).
//!
//! Counting conventions are those of CraterLake Table 1: an NTT/INTT kernel of `limbs` limbs is
//! `limbs` residue-polynomial transforms; a `BConv { from, to }` is `from · to` residue-polynomial
//! multiply-adds; element-wise kernels are one operation per limb.

use basalt_trace::{ElemOp, Kernel, Trace};

use crate::synth::Builder;

/// Shape of one key switch of a single polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KsShape {
    /// Ring degree N.
    pub n: u32,
    /// Q limbs of the input (ℓ + 1; CraterLake's L).
    pub limbs: u32,
    /// Digits of the decomposition (CraterLake's t; FAB/Osiris dnum).
    pub dnum: u32,
    /// Special (P) limbs. Boosted 1-digit keyswitching uses `special = limbs`.
    pub special: u32,
    /// Whether the uniform half of the key is regenerated from a seed (KSHGen).
    pub seeded: bool,
}

impl KsShape {
    /// Limbs of digit `j` (the last digit may be short).
    fn digit(&self, j: u32) -> u32 {
        let alpha = self.limbs.div_ceil(self.dnum);
        alpha.min(self.limbs - (j * alpha).min(self.limbs))
    }
}

/// Hybrid ("boosted", Han–Ki) key switching of one polynomial, producing two.
///
/// # Algorithm (CraterLake Listing 1, generalised to the t digits of its §3.1)
/// 1. ModUp: INTT the ℓ+1 limbs; per digit j, BConv α_j → (L + k − α_j) limbs and NTT them.
/// 2. Inner product with the key (`KeyLoad`, plus `KeyGen` of the uniform half when seeded):
///    digit 0 multiplies, later digits multiply-accumulate, over 2·(L + k) limbs.
/// 3. ModDown of each of the two products: INTT k limbs, BConv k → L, NTT L, add to the Q part.
///
/// # Cost (t = dnum, α = ⌈L/t⌉; CraterLake Table 1 at t = 1, k = L)
/// NTT+INTT: L + Σ_j (L + k − α_j) + 2(k + L); BConv MACs/N: Σ_j α_j (L + k − α_j) + 2kL;
/// mults 2t(L + k); adds 2(t − 1)(L + k) + 2L.
pub fn hybrid_keyswitch(s: KsShape) -> Trace {
    let KsShape { n, limbs: l, dnum, special: k, seeded } = s;
    let mut b = Builder::new();
    b.region("KeySwitch", |b| {
        b.region("ModUp", |b| {
            b.k(Kernel::Intt { n, limbs: l });
            for j in 0..dnum {
                let a = s.digit(j);
                if a == 0 {
                    continue;
                }
                b.k(Kernel::BConv { n, from: a, to: l + k - a });
                b.k(Kernel::Ntt { n, limbs: l + k - a });
            }
        });
        b.region("InnerProduct", |b| {
            b.k(Kernel::KeyLoad { n, limbs: l + k, digits: dnum, seeded });
            if seeded {
                b.k(Kernel::KeyGen { n, limbs: dnum * (l + k) });
            }
            for j in 0..dnum {
                let op = if j == 0 { ElemOp::Mul } else { ElemOp::MulAcc };
                b.k(Kernel::Elem { n, limbs: 2 * (l + k), op });
            }
        });
        for _ in 0..2 {
            b.region("ModDown", |b| {
                b.k(Kernel::Intt { n, limbs: k });
                b.k(Kernel::BConv { n, from: k, to: l });
                b.k(Kernel::Ntt { n, limbs: l });
                b.k(Kernel::Elem { n, limbs: l, op: ElemOp::Add });
            });
        }
    });
    b.build()
}

/// Standard (F1-style, one digit per limb, no special modulus) key switching of one polynomial.
///
/// # Algorithm (CraterLake §3 / Table 1 "Standard keyswitching")
/// For each limb i: INTT limb i, NTT it into the other L − 1 moduli, multiply-accumulate the
/// L-limb result with both key polynomials of digit i.
///
/// # Cost
/// NTT+INTT: L²; mults 2L²; adds 2L² (CraterLake Table 1); key 2L² residues.
pub fn standard_keyswitch(n: u32, l: u32) -> Trace {
    let mut b = Builder::new();
    b.region("KeySwitch", |b| {
        b.k(Kernel::KeyLoad { n, limbs: l, digits: l, seeded: false });
        for _ in 0..l {
            b.k(Kernel::Intt { n, limbs: 1 });
            b.k(Kernel::Ntt { n, limbs: l - 1 });
            b.k(Kernel::Elem { n, limbs: 2 * l, op: ElemOp::MulAcc });
        }
    });
    b.build()
}

/// Rescale of a ciphertext at `limbs` limbs (HE-MxV Algorithm 1): per polynomial, INTT the top
/// limb, NTT it into the other ℓ limbs, subtract and scale by q_ℓ⁻¹.
pub fn rescale(n: u32, limbs: u32) -> Trace {
    let mut b = Builder::new();
    b.region("Rescale", |b| {
        for _ in 0..2 {
            b.k(Kernel::Intt { n, limbs: 1 });
            b.k(Kernel::Ntt { n, limbs: limbs - 1 });
            b.k(Kernel::Elem { n, limbs: limbs - 1, op: ElemOp::Sub });
            b.k(Kernel::Elem { n, limbs: limbs - 1, op: ElemOp::MulScalar });
        }
    });
    b.build()
}

/// Ciphertext addition at `limbs` limbs.
pub fn add(n: u32, limbs: u32) -> Trace {
    let mut b = Builder::new();
    b.region("Add", |b| {
        b.k(Kernel::Elem { n, limbs: 2 * limbs, op: ElemOp::Add });
    });
    b.build()
}

/// Ciphertext multiplication with relinearisation (no rescale): tensor, key-switch d2, add.
pub fn mult(s: KsShape) -> Trace {
    let (n, l) = (s.n, s.limbs);
    let mut b = Builder::new();
    b.region("Mult", |b| {
        b.region("Tensor", |b| {
            b.k(Kernel::Elem { n, limbs: 3 * l, op: ElemOp::Mul });
            b.k(Kernel::Elem { n, limbs: l, op: ElemOp::MulAcc });
        });
        b.extend(hybrid_keyswitch(s));
        b.k(Kernel::Elem { n, limbs: 2 * l, op: ElemOp::Add });
    });
    b.build()
}

/// Ciphertext rotation: automorphism of both polynomials, key-switch the second, add.
pub fn rotate(s: KsShape, galois: u64) -> Trace {
    let (n, l) = (s.n, s.limbs);
    let mut b = Builder::new();
    b.region("Rotate", |b| {
        b.k(Kernel::Automorph { n, limbs: 2 * l, galois });
        b.extend(hybrid_keyswitch(s));
        b.k(Kernel::Elem { n, limbs: l, op: ElemOp::Add });
    });
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_trace::KernelKind;

    #[test]
    fn boosted_counts_follow_table1_closed_form() {
        // Small L so the test is a hand-checkable case: L = 3, 1 digit, k = L.
        let t = hybrid_keyswitch(KsShape { n: 16, limbs: 3, dnum: 1, special: 3, seeded: false });
        let ntt = t.count(KernelKind::Ntt) + t.count(KernelKind::Intt);
        assert_eq!(ntt, 6 * 3);
        assert_eq!(t.count(KernelKind::BConv) / 16, 3 * 9);
        assert_eq!(t.count(KernelKind::Elem(ElemOp::Mul)), 4 * 3);
        assert_eq!(t.count(KernelKind::Elem(ElemOp::Add)), 2 * 3);
        assert_eq!(t.count(KernelKind::KeyLoad), 2 * 6);
    }

    #[test]
    fn t_digit_counts_match_digest_formulas() {
        // L = 6, t = 2 (α = 3), k = α: CRB MACs L² + 2L²/t = 36 + 36 = 72 (per N);
        // NTT L + tL + 2L/t + 2L = 6 + 12 + 6 + 12 = 36; mults 2(t+1)L = 36.
        let t = hybrid_keyswitch(KsShape { n: 8, limbs: 6, dnum: 2, special: 3, seeded: true });
        assert_eq!(t.count(KernelKind::BConv) / 8, 72);
        assert_eq!(t.count(KernelKind::Ntt) + t.count(KernelKind::Intt), 36);
        let mults =
            t.count(KernelKind::Elem(ElemOp::Mul)) + t.count(KernelKind::Elem(ElemOp::MulAcc));
        assert_eq!(mults, 36);
        assert_eq!(t.count(KernelKind::KeyGen), 18);
    }

    #[test]
    fn standard_counts() {
        let t = standard_keyswitch(8, 5);
        assert_eq!(t.count(KernelKind::Ntt) + t.count(KernelKind::Intt), 25);
        assert_eq!(t.count(KernelKind::Elem(ElemOp::MulAcc)), 50);
    }
}
