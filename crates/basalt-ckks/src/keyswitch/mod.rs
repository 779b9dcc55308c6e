//! Hybrid key switching, all variants, one implementation.
//!
//! Switching a polynomial `d ∈ R_{Q_l}` (NTT domain) that decrypts under `s'` to a pair
//! `(u_0, u_1)` with `u_0 + u_1·s ≈ d·s'`:
//!
//! 1. **Decompose** ([`decompose()`]): INTT `d` once; split its `l+1` limbs into
//!    `β = ⌈(l+1)/α⌉` digits of `α` limbs.
//! 2. **ModUp** each digit to `Q_l ∪ P` (BConv + NTT of the new limbs).
//! 3. **Inner product** with the key: `Σ_j d̃_j·(b_j, a_j)` over `Q_l ∪ P`.
//! 4. **ModDown** both results back to `Q_l` (`round(x/P)`, exact: basalt-math's BConv
//!    corrects the base-conversion overshoot, so no biased error reaches the slots).
//!
//! `dnum = L+1` (`α = 1`) is SEAL's/F1's per-limb "standard" switching; `dnum = 1` is
//! CraterLake's 1-digit boosted switching; FAB uses `dnum = 3`. Variants ([`KsVariant`]):
//! [`hybrid`] runs the steps in the order above; [`reordered`] is FAB's greedy order (a digit's
//! own limbs enter the inner product before its extension exists, and the extension is
//! produced and consumed block by block), bit-identical to [`hybrid`]; [`hoisted`] shares one
//! Decompose+ModUp among many rotations and offers `_lazy` results left in `Q_l ∪ P` so that a
//! sum of rotations pays one ModDown (double hoisting).
//!
//! # Source
//! Han & Ki, "Better bootstrapping for approximate homomorphic encryption", CT-RSA 2020
//! (hybrid key switching); FAB §4.6 (reordering); Halevi–Shoup and Bossuat et al.,
//! EUROCRYPT 2021 (hoisting, double hoisting).
//!
//! # Level-dependent special modulus
//! The digit size `α` and the special primes `P` are those of the level's gadget
//! ([`Parameters::gadget_at`]): one `α` and all `k` special primes at every level, unless the set
//! has `key_switch_bands` (CraterLake §3.1: at `l+1` limbs in a band of `t` digits,
//! `α_l = ⌈(l+1)/t⌉` and `P_l` = the first `α_l` special primes; 1-digit switching at `l+1`
//! limbs extends to `2(l+1)` limbs, Table 1's count). Every step below reads `k = k_at(l)`; the
//! ModDown divides by the input's own `P` limbs.
//!
//! # Cost
//! At level `l` (`l+1` limbs), `β` digits of `α_j` limbs (`Σ α_j = l+1`), `k = k_at(l)`
//! special primes:
//! - INTT: `l+1` (Decompose) + `2k` (ModDown of two polynomials).
//! - NTT: `Σ_j (l+1+k−α_j) = β(l+1+k) − (l+1)` (ModUp) + `2(l+1)` (ModDown).
//! - BConv multiply-adds: `n·Σ_j α_j(l+1+k−α_j)` (ModUp) + `2·n·k(l+1)` (ModDown).
//! - MulAcc: `2β(l+1+k)` limb products (inner product).
//! - Key load: `β` digits × 2 × `(l+1+k)` limbs (`Kernel::KeyLoad`); a seeded key regenerates
//!   `β(l+1+k)` limbs (`Kernel::KeyGen`).
//!
//! A rotation permutes its two output polynomials after the key switch (`2(l+1)` automorphism
//! limbs; `2(l+1+k)` for a lazy, `Q∪P` one, [`hoisted`]); a hoisted one pays the
//! Decompose/ModUp part once per group.
//! The trace tests check these closed forms exactly ([`cost`]).

pub mod decompose;
mod fused;
pub mod hoisted;
pub mod hybrid;
pub mod reordered;

pub use decompose::{HoistedDecomp, decompose};
pub use hoisted::CiphertextQP;
pub use hybrid::{keyswitch, keyswitch_lazy};
pub use reordered::keyswitch_reordered;

use basalt_math::{RingContext, RnsPoly};
use basalt_trace::{ElemOp, Kernel, emit};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::keys::KeyMaterial;
use crate::params::Parameters;

/// Which key-switching datapath the evaluator uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KsVariant {
    /// Decompose → ModUp (all digits) → inner product → ModDown.
    #[default]
    Hybrid,
    /// FAB's reordered (greedy) datapath, bit-identical to `Hybrid`.
    Reordered,
}

/// Closed-form kernel counts of one key switch (see the module's `# Cost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KsCost {
    pub intt_limbs: u64,
    pub ntt_limbs: u64,
    pub bconv_macs: u64,
    pub mul_acc_limbs: u64,
    pub key_limbs: u64,
}

/// The closed forms of the module doc for `params` at `level`.
pub fn cost(params: &Parameters, level: usize) -> KsCost {
    let n = params.n() as u64;
    let l1 = (level + 1) as u64;
    let k = params.k_at(level) as u64;
    let beta = params.dnum_at(level) as u64;
    let alphas: Vec<u64> =
        (0..beta as usize).map(|j| params.digit_range(level, j).len() as u64).collect();
    KsCost {
        intt_limbs: l1 + 2 * k,
        ntt_limbs: beta * (l1 + k) - l1 + 2 * l1,
        bconv_macs: n * alphas.iter().map(|a| a * (l1 + k - a)).sum::<u64>() + 2 * n * k * l1,
        mul_acc_limbs: 2 * beta * (l1 + k),
        key_limbs: 2 * beta * (l1 + k),
    }
}

/// The BConv mode of every ModUp (fused, step-by-step, reordered and hoisted alike, so the
/// variants stay bit-identical to each other).
///
/// [`BConvMode::Centered`](basalt_math::rns::BConvMode::Centered) (the default)
/// extends each digit's centred representative (no `u·Q_j` overshoot of the fast
/// conversion): the key-switching noise `Σ_j d_j·e_j / P` then has digits of magnitude
/// `Q_j/2` instead of up to `α·Q_j`, which matters when a digit is nearly as large as `P`
/// (the top levels of `N16QP1546H192H32`, CraterLake's one-digit sets). Measured: a top-level
/// rotation's worst slot gains about 10 bits on `CRATERLAKE_128` (−0.7 → 9.8) and 8 bits on
/// `N16QP1546H192H32` (18.6 → 26.4), the mean 2.7 and 1 bit.
/// [`BConvMode::Fast`](basalt_math::rns::BConvMode::Fast) reproduces the outputs of earlier
/// releases bit for bit.
pub(crate) fn mod_up_mode(_params: &Parameters) -> basalt_math::rns::BConvMode {
    basalt_math::rns::BConvMode::Centered
}

/// Report the key material an inner product at `level` reads.
pub(crate) fn emit_key_load(params: &Parameters, key: &KeyMaterial, level: usize) {
    emit(Kernel::KeyLoad {
        n: params.n() as u32,
        limbs: (level + 1 + params.k_at(level)) as u32,
        digits: params.dnum_at(level) as u32,
        seeded: key.is_seeded(),
    });
}

/// Index of the limb of `other` matching limb `i` of a `Q_{aq−1} ∪ P` polynomial.
#[inline]
fn map_limb(i: usize, aq: usize, other_q: usize) -> usize {
    if i < aq { i } else { other_q + (i - aq) }
}

/// `acc0[i] += x[i]·k0[i]`, `acc1[i] += x[i]·k1[i]` for the limbs `i ∈ limbs` of the
/// `Q_l ∪ P` accumulators. `x`, `k0`, `k1` may live on larger Q prefixes (a key over `Q_L ∪ P`)
/// or only on `Q_l` (the input's own limbs): limbs are matched by modulus, never copied.
pub(crate) fn mac_pair(
    ring: &RingContext,
    acc0: &mut RnsPoly,
    acc1: &mut RnsPoly,
    x: &RnsPoly,
    k0: &RnsPoly,
    k1: &RnsPoly,
    limbs: &[usize],
) {
    let n = ring.n();
    for _ in 0..2 {
        emit(Kernel::Elem { n: n as u32, limbs: limbs.len() as u32, op: ElemOp::MulAcc });
    }
    if acc0.is_symbolic() {
        return;
    }
    let aq = acc0.q_limbs();
    let mut sel = vec![false; acc0.limbs()];
    limbs.iter().for_each(|&i| sel[i] = true);
    let glob = ring.global_indices(acc0);
    acc0.data_mut()
        .par_chunks_mut(n)
        .zip(acc1.data_mut().par_chunks_mut(n))
        .with_min_len(basalt_math::parallel::min_len())
        .enumerate()
        .for_each(|(i, (o0, o1))| {
            if !sel[i] {
                return;
            }
            let t = ring.ntt_table(glob[i]);
            let xi = x.limb(map_limb(i, aq, x.q_limbs()));
            let (b, a) =
                (k0.limb(map_limb(i, aq, k0.q_limbs())), k1.limb(map_limb(i, aq, k1.q_limbs())));
            t.mul_acc(o0, xi, b);
            t.mul_acc(o1, xi, a);
        });
}

/// `(acc0, acc1) = Σ_j x_j·(b_j, a_j)` over every limb of the `Q_l ∪ P` accumulators, all
/// digits of a limb in one lazy pass ([`basalt_math::fused::dot_pair`]) instead of one
/// [`mac_pair`] per digit: the accumulators go through memory once. Same result (canonical
/// residues) and the same trace as `β` calls of [`mac_pair`] on zeroed accumulators.
pub(crate) fn dot_pairs(
    ring: &RingContext,
    acc0: &mut RnsPoly,
    acc1: &mut RnsPoly,
    xs: &[&RnsPoly],
    keys: &[(&RnsPoly, &RnsPoly)],
) {
    dot_pairs_then(ring, acc0, acc1, xs, keys, &|_, _, _| {});
}

/// Work on one pair of accumulator limbs `(i, acc0_i, acc1_i)` right after the inner product
/// produced them ([`dot_pairs_then`]).
pub(crate) type LimbPairPost<'a> = &'a (dyn Fn(usize, &mut [u64], &mut [u64]) + Sync);

/// [`dot_pairs`], then `post(i, acc0_i, acc1_i)` on each pair of accumulator limbs in the task
/// that produced it, while both are in cache (a lazy rotation adds `P·c_0` and permutes there).
pub(crate) fn dot_pairs_then(
    ring: &RingContext,
    acc0: &mut RnsPoly,
    acc1: &mut RnsPoly,
    xs: &[&RnsPoly],
    keys: &[(&RnsPoly, &RnsPoly)],
    post: LimbPairPost<'_>,
) {
    let n = ring.n();
    let limbs = acc0.limbs() as u32;
    for _ in 0..2 * xs.len() {
        emit(Kernel::Elem { n: n as u32, limbs, op: ElemOp::MulAcc });
    }
    assert_eq!(xs.len(), keys.len(), "dot_pairs: one key pair per digit");
    if acc0.is_symbolic() {
        return;
    }
    let aq = acc0.q_limbs();
    let glob = ring.global_indices(acc0);
    acc0.data_mut()
        .par_chunks_mut(n)
        .zip(acc1.data_mut().par_chunks_mut(n))
        .with_min_len(basalt_math::parallel::min_len())
        .enumerate()
        .for_each(|(i, (o0, o1))| {
            let x: Vec<&[u64]> = xs.iter().map(|x| x.limb(map_limb(i, aq, x.q_limbs()))).collect();
            let b: Vec<&[u64]> =
                keys.iter().map(|(b, _)| b.limb(map_limb(i, aq, b.q_limbs()))).collect();
            let a: Vec<&[u64]> =
                keys.iter().map(|(_, a)| a.limb(map_limb(i, aq, a.q_limbs()))).collect();
            basalt_math::fused::dot_pair(ring.moduli()[glob[i]], &x, &b, &a, o0, o1);
            post(i, o0, o1);
        });
}
