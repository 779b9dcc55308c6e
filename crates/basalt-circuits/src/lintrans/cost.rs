//! Closed-form operation counts of the linear transforms, checked against the trace.
//!
//! Notation at level `l`: `L = l+1` Q limbs, `k = k_at(l)` special primes (the level's `P`,
//! level-dependent with `key_switch_bands`), `β = dnum_at(l)` digits of
//! `α_j` limbs, `n` the ring degree, `c` primes dropped per rescale. Primitive costs:
//!
//! | primitive | NTT | INTT | BConv MACs | mult limbs | automorph limbs |
//! |---|---|---|---|---|---|
//! | rotation (key switch of `c_1`) | `β(L+k)+L` | `L+2k` | `n Σ α_j(L+k−α_j) + 2nkL` | `2β(L+k)+2L` | `2L` |
//! | decompose (hoisted, once) | `β(L+k)−L` | `L` | `n Σ α_j(L+k−α_j)` | 0 | 0 |
//! | hoisted rotation | `2L` | `2k` | `2nkL` | `2β(L+k)+2L` | `2L` |
//! | lazy rotation (`Q∪P`) | 0 | 0 | 0 | `2β(L+k)+L` | `2(L+k)` |
//! | ModDown of a `Q∪P` pair | `2L` | `2k` | `2nkL` | `2L` | 0 |
//! | plaintext product | 0 | 0 | 0 | `2L` | 0 |
//! | OF-Limb regeneration | `L` | 0 | 0 | 0 | 0 |
//! | rescale | `2(L−c)` | `2c` | `2nc(L−c)` | `2(L−c)` | 0 |
//!
//! Every key switch (plain, hoisted or lazy) also reads `2β(L+k)·n·8` bytes of key material
//! (`key_bytes`), HE-MxV's `B_ksk0 + B_ksk1 = 2·l(l+1)·N·8` when `β = l`, `L + k = l + 1`.
//!
//! A transform with baby set `B`, giant set `G` (`n2 = |G|`), `D` diagonals, `r` GSC groups:
//! baby rotations `Σ_groups |B_g∖{0}|` (`|B|−1` without grouping), giant rotations `|G∖{0}|`,
//! `D` plaintext products, one rescale; hoisting adds one decompose.
//!
//! Full double hoisting ([`super::double`]) instead counts: one decompose; lazy baby rotations
//! (`Σ_groups |B_g∖{0}|`) and a `P·x` lift (`2L` limb products) in every group that uses baby 0;
//! `D` products over `Q∪P` (`2(L+k)` limbs, `L+k` plaintext limbs loaded, `L+k` NTTs each when
//! regenerated); per non-zero giant step a ModDown of one polynomial, a decompose and a lazy
//! key switch (`2β(L+k)` MulAcc, then automorphisms of the `2(L+k)` limbs of its output); one
//! final ModDown pair. Every rotation permutes its output pair after the key switch
//! (`basalt_ckks::keyswitch::hoisted`), not the `β` extended digits before it.
//!
//! # Source
//! Key-switching closed forms from `basalt_ckks::keyswitch::cost`; the double-hoisted
//! BSGS of Osiris §III (Bossuat et al.'s double hoisting), counted kernel by kernel.

use basalt_ckks::Parameters;
use basalt_ckks::keyswitch;

use super::bsgs::Split;
use super::plan::Plan;
use super::{GscOrder, Hoisting};
use crate::accounting::OpCounts;

/// Primitive costs at one level (see the table of the module doc).
#[derive(Clone, Copy, Debug)]
pub struct Primitives {
    pub rotation: OpCounts,
    pub decompose: OpCounts,
    pub hoisted_rotation: OpCounts,
    pub lazy_rotation: OpCounts,
    pub mod_down_pair: OpCounts,
    pub mul_plain: OpCounts,
    pub of_limb: OpCounts,
    pub rescale: OpCounts,
    /// ModDown of one `Q∪P` polynomial (full double hoisting's giant steps).
    pub mod_down_one: OpCounts,
    /// Plaintext product over `Q∪P` (full double hoisting).
    pub mul_plain_qp: OpCounts,
}

impl Primitives {
    pub fn at(params: &Parameters, level: usize) -> Primitives {
        let n = params.n() as u64;
        let l1 = level as u64 + 1;
        let k = params.k_at(level) as u64;
        let beta = params.dnum_at(level) as u64;
        let c = params.primes_per_rescale() as u64;
        let ks = keyswitch::cost(params, level);
        let ext = beta * (l1 + k);
        let key_bytes = 2 * ext * n * 8;
        let f = |o: OpCounts| o.finish(n as usize);
        let decompose = f(OpCounts {
            ntt_limbs: ext - l1,
            intt_limbs: l1,
            bconv_macs: ks.bconv_macs - 2 * n * k * l1,
            ..OpCounts::default()
        });
        let mod_down_pair = f(OpCounts {
            ntt_limbs: 2 * l1,
            intt_limbs: 2 * k,
            bconv_macs: 2 * n * k * l1,
            mul_limbs: 2 * l1,
            ..OpCounts::default()
        });
        Primitives {
            rotation: f(OpCounts {
                rotations: 1,
                key_switches: 1,
                key_bytes,
                ntt_limbs: ks.ntt_limbs,
                intt_limbs: ks.intt_limbs,
                bconv_macs: ks.bconv_macs,
                automorph_limbs: 2 * l1,
                mul_limbs: ks.mul_acc_limbs + 2 * l1,
                ..OpCounts::default()
            }),
            decompose,
            hoisted_rotation: f(OpCounts {
                rotations: 1,
                key_switches: 1,
                key_bytes,
                automorph_limbs: 2 * l1,
                mul_limbs: 2 * ext + 2 * l1,
                ..mod_down_pair
            }),
            lazy_rotation: f(OpCounts {
                rotations: 1,
                key_switches: 1,
                key_bytes,
                automorph_limbs: 2 * (l1 + k),
                mul_limbs: 2 * ext + l1,
                ..OpCounts::default()
            }),
            mod_down_pair,
            mul_plain: f(OpCounts {
                plain_mults: 1,
                mul_limbs: 2 * l1,
                plaintext_bytes: l1 * n * 8,
                ..OpCounts::default()
            }),
            of_limb: f(OpCounts { ntt_limbs: l1, ..OpCounts::default() }),
            rescale: f(OpCounts {
                ntt_limbs: 2 * (l1 - c),
                intt_limbs: 2 * c,
                bconv_macs: 2 * n * c * (l1 - c),
                mul_limbs: 2 * (l1 - c),
                ..OpCounts::default()
            }),
            mod_down_one: f(OpCounts {
                ntt_limbs: l1,
                intt_limbs: k,
                bconv_macs: n * k * l1,
                mul_limbs: l1,
                ..OpCounts::default()
            }),
            mul_plain_qp: f(OpCounts {
                plain_mults: 1,
                mul_limbs: 2 * (l1 + k),
                plaintext_bytes: (l1 + k) * n * 8,
                ..OpCounts::default()
            }),
        }
    }
}

/// Number of non-zero baby rotations executed, summed over the GSC groups.
pub fn baby_rotations(split: &Split, order: GscOrder) -> u64 {
    group_babies(split, order).iter().map(|b| b.iter().filter(|&&i| i != 0).count() as u64).sum()
}

/// Predicted counts of `LinearTransform::evaluate` with `plan` on `split` at `level`;
/// `regenerate`: diagonals are encoded at use (OF-Limb or generated), not stored; `rescale`:
/// the transform ends with its rescale (false: the caller's, `LinearTransform::unrescaled`).
pub fn predict(
    params: &Parameters,
    split: &Split,
    plan: &Plan,
    level: usize,
    regenerate: bool,
    rescale: bool,
) -> OpCounts {
    let p = Primitives::at(params, level);
    let mut c = OpCounts::default();
    let babies = baby_rotations(split, plan.order);
    let giants = split.giant_rotations() as u64;
    let diags = split.diagonals() as u64;
    if plan.hoisting == Hoisting::Double {
        return full_double(params, split, plan.order, level, regenerate, rescale);
    }
    match plan.hoisting {
        Hoisting::None => c.add_scaled(&p.rotation, babies),
        Hoisting::Single | Hoisting::Double => {
            c.add_scaled(&p.decompose, 1);
            c.add_scaled(&p.hoisted_rotation, babies);
        }
    }
    c.add_scaled(&p.rotation, giants);
    c.add_scaled(&p.mul_plain, diags);
    if regenerate {
        c.add_scaled(&p.of_limb, diags);
    }
    c.add_scaled(&p.rescale, u64::from(rescale));
    c.finish(params.n())
}

/// Baby indices of every group of giant steps the loop order processes together.
fn group_babies(split: &Split, order: GscOrder) -> Vec<Vec<usize>> {
    let giants: Vec<usize> = split.giant.keys().copied().collect();
    let group = match order {
        GscOrder::BabyStepCentric => giants.len().max(1),
        GscOrder::GiantStepCentric { max_partials, .. } => max_partials.max(1),
    };
    giants
        .chunks(group)
        .map(|g| {
            let mut b: Vec<usize> = g.iter().flat_map(|j| split.giant[j].iter().copied()).collect();
            b.sort_unstable();
            b.dedup();
            b
        })
        .collect()
}

/// Full double hoisting as run by [`super::double`] (see the module doc).
fn full_double(
    params: &Parameters,
    split: &Split,
    order: GscOrder,
    level: usize,
    regenerate: bool,
    rescale: bool,
) -> OpCounts {
    let p = Primitives::at(params, level);
    let (l1, k) = (level as u64 + 1, params.k_at(level) as u64);
    let ext = params.dnum_at(level) as u64 * (l1 + k);
    let groups = group_babies(split, order);
    let babies: u64 = groups.iter().map(|b| b.iter().filter(|&&i| i != 0).count() as u64).sum();
    let lifts = groups.iter().filter(|b| b.contains(&0)).count() as u64;
    let giants = split.giant.keys().filter(|&&j| j != 0).count() as u64;
    let diags = split.diagonals() as u64;
    let mut c = OpCounts::default();
    c.add_scaled(&p.decompose, 1);
    c.add_scaled(&p.lazy_rotation, babies);
    c.add_scaled(&OpCounts { mul_limbs: 2 * l1, ..OpCounts::default() }, lifts);
    c.add_scaled(&p.mul_plain_qp, diags);
    if regenerate {
        c.add_scaled(&OpCounts { ntt_limbs: l1 + k, ..OpCounts::default() }, diags);
    }
    let giant_ks = OpCounts {
        rotations: 1,
        key_switches: 1,
        key_bytes: p.rotation.key_bytes,
        automorph_limbs: 2 * (l1 + k),
        mul_limbs: 2 * ext,
        ..OpCounts::default()
    };
    c.add_scaled(&p.mod_down_one, giants);
    c.add_scaled(&p.decompose, giants);
    c.add_scaled(&giant_ks, giants);
    c.add_scaled(&p.mod_down_pair, 1);
    c.add_scaled(&p.rescale, u64::from(rescale));
    c.finish(params.n())
}

/// Closed form of Bossuat et al.'s full double hoisting (baby steps kept in `Q∪P`, products
/// with `Q∪P` diagonals, per giant step a ModDown of `c_1` only, a key switch left in `Q∪P`,
/// one final ModDown), baby-step-centric — what `Hoisting::Double` runs (Osiris
/// §III). `of_limb`: count the `L+k` NTTs regenerating each `Q∪P` diagonal.
pub fn predict_full_double_hoisting(
    params: &Parameters,
    split: &Split,
    level: usize,
    of_limb: bool,
) -> OpCounts {
    full_double(params, split, GscOrder::BabyStepCentric, level, of_limb, true)
}

/// Closed form of the partial variant this crate ran before full double hoisting (baby steps
/// single-hoisted in `Q`, each giant step decomposed and rotated lazily into `Q∪P`, one final
/// ModDown), kept for comparisons (`tests/paper_counts.rs`).
pub fn predict_giant_only_double_hoisting(
    params: &Parameters,
    split: &Split,
    level: usize,
) -> OpCounts {
    let p = Primitives::at(params, level);
    let mut c = OpCounts::default();
    let babies = baby_rotations(split, GscOrder::BabyStepCentric);
    let giants = split.giant.keys().filter(|&&j| j != 0).count() as u64;
    c.add_scaled(&p.decompose, 1 + giants);
    c.add_scaled(&p.hoisted_rotation, babies);
    c.add_scaled(&p.lazy_rotation, giants);
    c.add_scaled(&p.mod_down_pair, u64::from(giants > 0));
    c.add_scaled(&p.mul_plain, split.diagonals() as u64);
    c.add_scaled(&p.rescale, 1);
    c.finish(params.n())
}
