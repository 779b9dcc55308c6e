//! The standard-order hybrid key switch ([`super::hybrid::keyswitch_lazy`]) computed without
//! materialising the extended digits.
//!
//! # Why
//! The textbook datapath writes every ModUp output (`β` polynomials of `l+1+k` limbs: 75 MB at
//! N = 2^16, L = 24, dnum 5) to fresh memory and reads it back once for the inner product; the
//! page faults and memory traffic cost as much as the BConv arithmetic. Here the work goes
//! limb by limb of the `Q_l ∪ P` accumulators: BConv's step 1 is done once per digit, then,
//! for each limb, every digit's extension of that limb is converted into a per-thread scratch
//! limb and transformed, and the two sums over all digits are formed in one lazy pass
//! ([`basalt_math::fused::dot_pair`]: 128-bit sums, one reduction per coefficient) while the
//! limbs are in cache. A digit's own limbs are read straight from the input (ModUp copies them
//! unchanged). The accumulators are written once instead of read and written once per digit.
//!
//! The sums are the same sums of the same products (modular addition is exact and every step
//! returns the canonical residue), so the result is **bit-identical** to the unfused path; a
//! test checks it. The trace reports the unfused path's kernels and regions, in its order:
//! the work done is the same, only its schedule differs.

use std::ops::Range;

use basalt_math::parallel::min_len;
use basalt_math::{Domain, RnsPoly};
use basalt_trace::{ElemOp, Kernel, emit, region};
use rayon::prelude::*;

use super::map_limb;
use crate::keys::KeySwitchKey;
use crate::params::Parameters;

thread_local! {
    /// One scratch limb per digit and thread: the digits' extensions of the limb in hand.
    static SCRATCH: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `Σ_j ModUp(digit_j(d))·(b_j, a_j)` over `Q_l ∪ P` for a real (non-symbolic) `d` in the NTT
/// domain and a full key.
pub(crate) fn keyswitch_lazy_fused(
    params: &Parameters,
    d: &RnsPoly,
    key: &KeySwitchKey,
) -> (RnsPoly, RnsPoly) {
    assert!(!d.is_symbolic(), "keyswitch_lazy_fused: symbolic input");
    assert_eq!(d.domain(), Domain::Ntt, "keyswitch_lazy_fused: input must be in the NTT domain");
    let ring = params.ring();
    let n = ring.n();
    let l1 = d.q_limbs();
    let level = l1 - 1;
    let k = params.k_at(level);
    let beta = params.dnum_at(level);
    let part =
        key.parts[params.gadget_index(level)].as_ref().expect("key part checked by the caller");
    report_unfused_trace(params, l1);

    // Decompose: the coefficient form of `d`.
    let mut dc = d.clone();
    dc.set_domain(Domain::Coeff);
    dc.data_mut()
        .par_chunks_mut(n)
        .with_min_len(min_len())
        .enumerate()
        .for_each(|(i, limb)| ring.ntt_table(i).inverse(limb));

    let mut acc0 = RnsPoly::zero(n, l1, k, Domain::Ntt);
    let mut acc1 = RnsPoly::zero(n, l1, k, Domain::Ntt);
    let glob = ring.global_indices(&acc0);
    // Step 1 of every digit's BConv, to the limbs outside the digit (in limb order).
    let digits: Vec<Range<usize>> = (0..beta).map(|j| params.digit_range(level, j)).collect();
    let convs: Vec<_> = digits
        .iter()
        .map(|digit| {
            let from: Vec<usize> = digit.clone().collect();
            let to: Vec<usize> =
                (0..l1 + k).filter(|i| !digit.contains(i)).map(|i| glob[i]).collect();
            let conv = ring.bconv(&from, &to);
            let input: Vec<&[u64]> = digit.clone().map(|i| dc.limb(i)).collect();
            let prep = conv.prepare_input(&input, super::mod_up_mode(params));
            (conv, prep)
        })
        .collect();
    let keys: Vec<(&RnsPoly, &RnsPoly)> = part.b.iter().zip(&part.a).take(beta).collect();
    // Limb by limb: each digit's extension of the limb (BConv, NTT) into a per-thread scratch
    // limb, or the digit's own limb as it is in `d`; then both sums over every digit at once.
    acc0.data_mut()
        .par_chunks_mut(n)
        .zip(acc1.data_mut().par_chunks_mut(n))
        .with_min_len(min_len())
        .enumerate()
        .for_each(|(i, (o0, o1))| {
            let t = ring.ntt_table(glob[i]);
            let mut scratch = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
            scratch.resize_with(beta, Vec::new);
            for ((digit, (conv, prep)), x) in digits.iter().zip(&convs).zip(scratch.iter_mut()) {
                if digit.contains(&i) {
                    continue;
                }
                x.resize(n, 0);
                // Position of limb `i` among the limbs outside the digit.
                let j = if i < digit.start { i } else { i - digit.len() };
                conv.convert_prepared(prep, j, x);
                t.forward(x);
            }
            let xs: Vec<&[u64]> = digits
                .iter()
                .zip(&scratch)
                .map(|(digit, x)| if digit.contains(&i) { d.limb(i) } else { x.as_slice() })
                .collect();
            let b: Vec<&[u64]> =
                keys.iter().map(|(b, _)| b.limb(map_limb(i, l1, b.q_limbs()))).collect();
            let a: Vec<&[u64]> =
                keys.iter().map(|(_, a)| a.limb(map_limb(i, l1, a.q_limbs()))).collect();
            basalt_math::fused::dot_pair(ring.moduli()[glob[i]], &xs, &b, &a, o0, o1);
            SCRATCH.with(|s| *s.borrow_mut() = scratch);
        });
    (acc0, acc1)
}

/// The kernels and regions of Decompose → ModUp (every digit) → inner product, as the unfused
/// path reports them (`to_coeff`, `rns::mod_up`, `hybrid::accumulate` with a full key).
fn report_unfused_trace(params: &Parameters, l1: usize) {
    let (n, level) = (params.n() as u32, l1 - 1);
    let k = params.k_at(level);
    let beta = params.dnum_at(level);
    {
        let _r = region("Decompose");
        emit(Kernel::Intt { n, limbs: l1 as u32 });
    }
    for j in 0..beta {
        let _r = region("ModUp");
        let alpha = params.digit_range(level, j).len() as u32;
        let to = (l1 + k) as u32 - alpha;
        emit(Kernel::BConv { n, from: alpha, to });
        emit(Kernel::Ntt { n, limbs: to });
    }
    let _r = region("InnerProduct");
    emit(Kernel::KeyLoad { n, limbs: (l1 + k) as u32, digits: beta as u32, seeded: false });
    for _ in 0..2 * beta {
        emit(Kernel::Elem { n, limbs: (l1 + k) as u32, op: ElemOp::MulAcc });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{KeyGenerator, KeyMaterial};
    use crate::keyswitch::hybrid::keyswitch_lazy_unfused;
    use crate::params::ParametersLiteral;
    use basalt_math::bench::random_poly;
    use basalt_trace::record;

    #[test]
    fn fused_is_bit_identical_to_unfused_with_the_same_trace() {
        // Digits of equal and unequal sizes, one digit, one limb per digit; mixed prime sizes.
        for (levels, k, dnum) in [(4usize, 1usize, 5usize), (4, 2, 3), (5, 3, 2), (4, 5, 1)] {
            let lit = ParametersLiteral::toy(10, 60, 40, levels, 61, k, dnum);
            let params = Parameters::new(lit).unwrap();
            let kg = KeyGenerator::new(&params);
            let (s, s2) = (kg.gen_secret_key(), kg.gen_secret_key());
            let ksk = kg.gen_key_switch_key(&s2, &s);
            let full = KeyMaterial::Full(ksk.clone());
            for level in [levels, 2, 0] {
                let mut d = random_poly(params.ring(), level + 1, 0, level as u64 + 7);
                d.set_domain(Domain::Ntt);
                let (fused, t_fused) = record(|| keyswitch_lazy_fused(&params, &d, &ksk));
                let (plain, t_plain) = record(|| keyswitch_lazy_unfused(&params, &d, &full));
                assert!(fused == plain, "levels={levels} k={k} dnum={dnum} level={level}");
                assert_eq!(t_fused, t_plain, "levels={levels} k={k} dnum={dnum} level={level}");
            }
        }
    }
}
