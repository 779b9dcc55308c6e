//! ModUp, ModDown and Rescale: the ModChange family (INTT → BConv → NTT).
//!
//! # Source
//! Hybrid key switching: Han & Ki, "Better bootstrapping for approximate homomorphic encryption",
//! CT-RSA 2020 (ModUp/ModDown); Osiris §II-B describes all three as one ModChange primitive.

use std::ops::Range;

use basalt_trace::{ElemOp, Kernel, emit};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rayon::prelude::*;

use super::BConvMode;
use crate::poly::{Domain, RnsPoly};
use crate::ring::RingContext;

/// ModUp of one digit of the hybrid decomposition.
///
/// `a_coeff` and `a_ntt` are the same `Q_l` polynomial (`q_limbs = l + 1`, no P limbs) in both
/// domains; `digit` is a range of its Q limbs. Returns the digit, as an integer in
/// `[0, Q_digit)` up to a small multiple of `Q_digit`, extended to `Q_l ∪ {p_0..p_{p_limbs-1}}`
/// in the NTT domain. The digit's own limbs are copied from `a_ntt`; the others are
/// BConv(digit) followed by an NTT.
///
/// # Cost
/// BConv `n · alpha · (l + 1 + k − alpha)` multiply-adds and `l + 1 + k − alpha` NTTs, where
/// `alpha = digit.len()`.
pub fn mod_up(
    ctx: &RingContext,
    a_coeff: &RnsPoly,
    a_ntt: &RnsPoly,
    digit: Range<usize>,
    p_limbs: usize,
) -> RnsPoly {
    mod_up_with(ctx, a_coeff, a_ntt, digit, p_limbs, BConvMode::Fast)
}

/// [`mod_up`] with the conversion `mode` ([`BConvMode::Centered`] extends the digit's centred
/// representative: no overshoot, and half its size).
pub fn mod_up_with(
    ctx: &RingContext,
    a_coeff: &RnsPoly,
    a_ntt: &RnsPoly,
    digit: Range<usize>,
    p_limbs: usize,
    mode: BConvMode,
) -> RnsPoly {
    assert_eq!(
        a_coeff.domain(),
        Domain::Coeff,
        "mod_up: a_coeff must be in the coefficient domain"
    );
    assert_eq!(a_ntt.domain(), Domain::Ntt, "mod_up: a_ntt must be in the NTT domain");
    assert!(
        a_coeff.p_limbs() == 0 && a_ntt.p_limbs() == 0 && a_coeff.q_limbs() == a_ntt.q_limbs(),
        "mod_up: the two forms must have the same Q-only shape"
    );
    assert!(digit.end <= a_coeff.q_limbs() && !digit.is_empty(), "mod_up: digit out of range");
    let _region = basalt_trace::region("ModUp");
    let q_limbs = a_coeff.q_limbs();
    let mut out = a_ntt.with_shape(q_limbs, p_limbs, Domain::Ntt);
    // Limbs of `out` that BConv produces: every Q limb outside the digit, then every P limb.
    let targets: Vec<usize> = (0..q_limbs + p_limbs).filter(|i| !digit.contains(i)).collect();
    let to_global: Vec<usize> = targets.iter().map(|&i| ctx.global_index(&out, i)).collect();
    let from_global: Vec<usize> = digit.clone().collect();
    let conv = ctx.bconv(&from_global, &to_global);
    if out.is_symbolic() {
        emit(Kernel::BConv {
            n: ctx.n() as u32,
            from: digit.len() as u32,
            to: targets.len() as u32,
        });
        emit(Kernel::Ntt { n: ctx.n() as u32, limbs: targets.len() as u32 });
        return out;
    }
    let n = ctx.n();
    {
        let input: Vec<&[u64]> = digit.clone().map(|i| a_coeff.limb(i)).collect();
        let mut limbs: Vec<&mut [u64]> = out.data_mut().chunks_mut(n).collect();
        // Split the output limbs into digit limbs (copied) and BConv targets.
        let mut conv_out = Vec::with_capacity(targets.len());
        for (i, limb) in limbs.drain(..).enumerate() {
            if digit.contains(&i) {
                limb.copy_from_slice(a_ntt.limb(i));
            } else {
                conv_out.push(limb);
            }
        }
        // Each converted limb is transformed right away, while it is in cache.
        conv.apply_mode_then(&input, &mut conv_out, mode, &|j, limb| {
            ctx.ntt_table(to_global[j]).forward(limb)
        });
        emit(Kernel::Ntt { n: n as u32, limbs: targets.len() as u32 });
    }
    out
}

/// ModDown: `Q_l ∪ P → Q_l`, computing `round(x / P)` exactly (exact BConv).
/// Domain in = domain out.
///
/// # Cost
/// In the NTT domain: `k` INTTs, BConv `n · k · (l + 1)` multiply-adds, `l + 1` NTTs.
pub fn mod_down(ctx: &RingContext, x: &RnsPoly) -> RnsPoly {
    assert!(x.p_limbs() > 0, "mod_down: input has no P limbs");
    let _region = basalt_trace::region("ModDown");
    divide_round(ctx, x, x.q_limbs(), None, None)
}

/// `c + ModDown(x)` (`c` on `Q_l`, in `x`'s domain), the addition done in ModDown's last pass
/// instead of a pass (and a copy of `c`) of its own: key switching adds its result to the
/// ciphertext this way.
///
/// Reports the kernels of [`mod_down`] only: the caller reports the `Elem Add` where its
/// unfused form would.
pub fn mod_down_add(ctx: &RingContext, x: &RnsPoly, c: &RnsPoly) -> RnsPoly {
    assert!(x.p_limbs() > 0, "mod_down_add: input has no P limbs");
    assert!(
        c.q_limbs() == x.q_limbs() && c.p_limbs() == 0 && c.domain() == x.domain(),
        "mod_down_add: the addend must be on Q_l in the input's domain"
    );
    assert_eq!(c.is_symbolic(), x.is_symbolic(), "mod_down_add: symbolic and real mixed");
    let _region = basalt_trace::region("ModDown");
    divide_round(ctx, x, x.q_limbs(), Some(c), None)
}

/// `φ_g(ModDown(x) + c)` (`c` optional, on `Q_l` in the NTT domain, as `x`): the automorphism
/// `X → X^galois` applied to each output limb in ModDown's last pass, while the limb is in
/// cache, instead of a pass over a fresh polynomial of its own. A rotation's key switch ends
/// this way (the key switches to `φ_g^{-1}(s)`, then the pair is permuted).
///
/// Same result as [`RingContext::automorphism`] of [`mod_down_add`] (or [`mod_down`]); reports
/// the kernels of [`mod_down`] only: the caller reports the `Elem Add` and the `Automorph`
/// where its unfused form would.
///
/// # Panics
/// As [`mod_down_add`]; if `x` is not in the NTT domain or `galois` is even.
pub fn mod_down_automorphism(
    ctx: &RingContext,
    x: &RnsPoly,
    c: Option<&RnsPoly>,
    galois: u64,
) -> RnsPoly {
    assert!(x.p_limbs() > 0, "mod_down_automorphism: input has no P limbs");
    assert_eq!(x.domain(), Domain::Ntt, "mod_down_automorphism: input must be in the NTT domain");
    assert!(galois % 2 == 1, "mod_down_automorphism: Galois element {galois} must be odd");
    if let Some(c) = c {
        assert!(
            c.q_limbs() == x.q_limbs() && c.p_limbs() == 0 && c.domain() == x.domain(),
            "mod_down_automorphism: the addend must be on Q_l in the input's domain"
        );
        assert_eq!(
            c.is_symbolic(),
            x.is_symbolic(),
            "mod_down_automorphism: symbolic and real mixed"
        );
    }
    let _region = basalt_trace::region("ModDown");
    let perm = (!x.is_symbolic()).then(|| ctx.galois_permutation(galois % (2 * ctx.n() as u64)));
    divide_round(ctx, x, x.q_limbs(), c, perm.as_deref().map(Vec::as_slice))
}

/// ModDown and Rescale in one pass: `Q_l ∪ P → Q_{l−count}`, `round(x / (P·q_{l−count+1}⋯q_l))`
/// with one exact BConv from every dropped limb (the top `count` Q limbs and the P limbs).
/// This is de Castro et al.'s "ModDown merge" (FAB's reference \[15\]; `rescale_fusion` in their
/// SimFHE cost model): a key switch followed by a rescale pays one INTT/BConv/NTT chain, not
/// two. Domain in = domain out.
///
/// # Cost
/// In the NTT domain: `k + count` INTTs, BConv `n · (k + count) · (l + 1 − count)`,
/// `l + 1 − count` NTTs.
pub fn mod_down_rescale(ctx: &RingContext, x: &RnsPoly, count: usize) -> RnsPoly {
    assert!(x.p_limbs() > 0, "mod_down_rescale: input has no P limbs");
    assert!(
        count >= 1 && count < x.q_limbs(),
        "mod_down_rescale: cannot drop {count} of {} Q limbs",
        x.q_limbs()
    );
    let _region = basalt_trace::region("ModDown");
    divide_round(ctx, x, x.q_limbs() - count, None, None)
}

/// Rescale: divide by the top `count` Q limbs with rounding (`count = 2` is Osiris's double-prime
/// scaling). The input must have no P limbs. Domain in = domain out.
///
/// # Cost
/// In the NTT domain: `count` INTTs, BConv `n · count · (l + 1 − count)`, `l + 1 − count` NTTs.
pub fn rescale(ctx: &RingContext, x: &RnsPoly, count: usize) -> RnsPoly {
    assert_eq!(x.p_limbs(), 0, "rescale: input must not have P limbs");
    assert!(
        count >= 1 && count < x.q_limbs(),
        "rescale: cannot drop {count} of {} limbs",
        x.q_limbs()
    );
    let _region = basalt_trace::region("Rescale");
    divide_round(ctx, x, x.q_limbs() - count, None, None)
}

/// The shared ModChange primitive: keep the first `keep` Q limbs of `x`, divide by the product
/// `D` of all its other limbs, rounding.
///
/// With `H = floor(D/2)` and `y = [x + H]_D` from the exact BConv, the result is
/// `(x + H − y) / D = floor((x + H) / D) = round(x / D)`, an exact division computed per kept
/// limb as `(x − (y − H)) · D^{-1}`; plus `add` if given; then each limb permuted by `perm`
/// (`out[k] = limb[perm[k]]`, an automorphism in the NTT domain) if given.
fn divide_round(
    ctx: &RingContext,
    x: &RnsPoly,
    keep: usize,
    add: Option<&RnsPoly>,
    perm: Option<&[u32]>,
) -> RnsPoly {
    let n = ctx.n();
    let drop: Vec<usize> = (keep..x.limbs()).collect();
    let drop_global: Vec<usize> = drop.iter().map(|&i| ctx.global_index(x, i)).collect();
    let keep_global: Vec<usize> = (0..keep).collect();
    let ntt = x.domain() == Domain::Ntt;
    let mut out = x.with_shape(keep, 0, x.domain());

    // Per-parameter constants: H mod each limb and D^{-1} mod each kept limb.
    let big_d: BigUint =
        drop_global.iter().map(|&g| BigUint::from(ctx.moduli()[g].value())).product();
    let half: BigUint = &big_d >> 1u32;
    let half_mod = |g: usize| -> u64 {
        (&half % BigUint::from(ctx.moduli()[g].value())).to_u64().expect("fits")
    };
    let d_inv: Vec<u64> = keep_global
        .iter()
        .map(|&g| {
            let m = ctx.moduli()[g];
            m.inv((&big_d % m.value()).to_u64().expect("fits")).expect("coprime moduli")
        })
        .collect();

    let (n32, d_len, k_len) = (n as u32, drop.len() as u32, keep as u32);
    let elem = |limbs: u32, op: ElemOp| emit(Kernel::Elem { n: n32, limbs, op });
    let symbolic = x.is_symbolic();

    // 1. The dropped limbs in the coefficient domain, plus H.
    if ntt {
        emit(Kernel::Intt { n: n32, limbs: d_len });
    }
    elem(d_len, ElemOp::Add);
    let mut dropped: Vec<Vec<u64>> = Vec::new();
    if !symbolic {
        dropped = drop.iter().map(|&i| x.limb(i).to_vec()).collect();
        dropped.par_iter_mut().zip(&drop_global).with_min_len(crate::parallel::min_len()).for_each(
            |(limb, &g)| {
                if ntt {
                    ctx.ntt_table(g).inverse(limb);
                }
                let m = ctx.moduli()[g];
                let h = half_mod(g);
                limb.iter_mut().for_each(|v| *v = m.add(*v, h));
            },
        );
    }
    // 2. y = exact BConv to the kept limbs, then (step 3) minus H and back to x's domain.
    if symbolic {
        emit(Kernel::BConv { n: n32, from: d_len, to: k_len });
    } else {
        // Steps 2 and 3 fused per kept limb j, while the limb is in cache:
        // y' = BConv_exact(...) − H, back to x's domain, then out = (x − y') · D^{-1}.
        let input: Vec<&[u64]> = dropped.iter().map(|v| v.as_slice()).collect();
        let mut outs: Vec<&mut [u64]> = out.data_mut().chunks_mut(n).collect();
        // (BConv subtracts H in its final reduction.)
        let finish = |j: usize, y: &mut [u64]| {
            let m = ctx.moduli()[j];
            if ntt {
                ctx.ntt_table(j).forward(y);
            }
            let (w, ws) = (d_inv[j], m.shoup(d_inv[j]));
            let xs = x.limb(j);
            let add_j = add.map(|c| c.limb(j));
            if super::simd::sub_mul_shoup_add(xs, y, (w, ws), m.value(), add_j).is_none() {
                match add {
                    None => y.iter_mut().zip(xs).for_each(|(v, &xv)| {
                        *v = m.mul_shoup(m.sub(xv, *v), w, ws);
                    }),
                    Some(c) => y.iter_mut().zip(xs).zip(c.limb(j)).for_each(|((v, &xv), &cv)| {
                        *v = m.add(cv, m.mul_shoup(m.sub(xv, *v), w, ws));
                    }),
                }
            }
            if let Some(perm) = perm {
                crate::fused::permute_in_place(y, perm);
            }
        };
        let halves: Vec<u64> = keep_global.iter().map(|&g| half_mod(g)).collect();
        let conv = ctx.bconv(&drop_global, &keep_global);
        conv.apply_exact_sub_then(&input, &mut outs, &halves, &finish);
    }
    elem(k_len, ElemOp::Sub);
    if ntt {
        emit(Kernel::Ntt { n: n32, limbs: k_len });
    }
    elem(k_len, ElemOp::Sub);
    elem(k_len, ElemOp::MulScalar);
    out
}
