//! FAB's reordered ("greedy") key-switching datapath.
//!
//! # Algorithm
//! After one INTT of the input (Decompose), for each digit `j` in turn:
//! 1. the digit's own `α_j` limbs are already in the NTT domain and unchanged by ModUp, so they
//!    enter the inner product immediately: `acc[i] += d[i]·key_j[i]` for `i ∈ digit j`;
//! 2. the digit's extension to the other `l+1+k−α_j` limbs of `Q_l ∪ P` is produced **block by
//!    block** (`block` limbs at a time: BConv from the digit, NTT), and each block is consumed by
//!    the inner product as soon as it exists.
//!
//! Only one block of extension limbs is alive at a time (FAB keeps no ciphertext limb off chip
//! during KeySwitch); the sum is the same sum of the same products in another order, and
//! modular addition is exact, so the result is **bit-identical** to [`super::hybrid::keyswitch`]
//! (a test checks it). ModDown follows as usual.
//!
//! # Source
//! FAB (Agrawal et al., HPCA 2023), §4.6 and Fig. 5(b).
//!
//! # Cost
//! Same totals as [`super::cost`]: the NTTs and BConv multiply-adds are split into
//! `⌈(l+1+k−α_j)/block⌉` kernels per digit.

use basalt_math::{Domain, RnsPoly, rns};
use basalt_trace::{Kernel, emit, region};
use rayon::prelude::*;

use super::decompose::to_coeff;
use super::{emit_key_load, mac_pair};
use crate::keys::KeyMaterial;
use crate::params::Parameters;

/// Key switching of `d` (`Q_l`, NTT) in FAB's order; `block ≥ 1` extension limbs at a time.
pub fn keyswitch_reordered(
    params: &Parameters,
    d: &RnsPoly,
    key: &KeyMaterial,
    block: usize,
) -> (RnsPoly, RnsPoly) {
    let _r = region("KeySwitch");
    let (v0, v1) = keyswitch_reordered_lazy(params, d, key, block);
    let ring = params.ring();
    (rns::mod_down(ring, &v0), rns::mod_down(ring, &v1))
}

/// [`keyswitch_reordered`] without the final ModDown (result in `Q_l ∪ P`).
pub fn keyswitch_reordered_lazy(
    params: &Parameters,
    d: &RnsPoly,
    key: &KeyMaterial,
    block: usize,
) -> (RnsPoly, RnsPoly) {
    let ring = params.ring();
    let n = ring.n();
    let level = d.q_limbs() - 1;
    let l1 = level + 1;
    let k = params.k_at(level);
    let g = params.gadget_index(level);
    let block = block.max(1);
    let dc = to_coeff(params, d);
    let mut acc0 = d.with_shape(l1, k, Domain::Ntt);
    let mut acc1 = d.with_shape(l1, k, Domain::Ntt);
    // One buffer for the extension blocks, reused across digits.
    let mut ext = d.with_shape(l1, k, Domain::Ntt);
    let globals = ring.global_indices(&acc0);
    emit_key_load(params, key, level);
    for j in 0..params.dnum_at(level) {
        let digit = params.digit_range(level, j);
        let a = key.a(params, (g, j), l1, d.is_symbolic());
        let b = key.b(g, j);
        {
            let _r = region("InnerProduct");
            let own: Vec<usize> = digit.clone().collect();
            mac_pair(ring, &mut acc0, &mut acc1, d, b, &a, &own);
        }
        let targets: Vec<usize> = (0..l1 + k).filter(|i| !digit.contains(i)).collect();
        let from: Vec<usize> = digit.clone().collect();
        for blk in targets.chunks(block) {
            {
                let _r = region("ModUp");
                let to: Vec<usize> = blk.iter().map(|&i| globals[i]).collect();
                if d.is_symbolic() {
                    emit(Kernel::BConv {
                        n: n as u32,
                        from: from.len() as u32,
                        to: blk.len() as u32,
                    });
                    emit(Kernel::Ntt { n: n as u32, limbs: blk.len() as u32 });
                } else {
                    let conv = ring.bconv(&from, &to);
                    let input: Vec<&[u64]> = from.iter().map(|&i| dc.limb(i)).collect();
                    let mut outs: Vec<&mut [u64]> = ext
                        .data_mut()
                        .chunks_mut(n)
                        .enumerate()
                        .filter(|(i, _)| blk.contains(i))
                        .map(|(_, l)| l)
                        .collect();
                    conv.apply_mode_then(&input, &mut outs, super::mod_up_mode(params), &|_, _| {});
                    emit(Kernel::Ntt { n: n as u32, limbs: blk.len() as u32 });
                    outs.par_iter_mut()
                        .zip(&to)
                        .with_min_len(basalt_math::parallel::min_len())
                        .for_each(|(limb, &g)| ring.ntt_table(g).forward(limb));
                }
            }
            let _r = region("InnerProduct");
            mac_pair(ring, &mut acc0, &mut acc1, &ext, b, &a, blk);
        }
    }
    (acc0, acc1)
}
