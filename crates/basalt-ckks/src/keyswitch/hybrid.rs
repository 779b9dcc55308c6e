//! Standard-order hybrid key switching: Decompose → ModUp (all digits) → inner product →
//! ModDown. See the parent module for the algorithm, sources and closed-form cost.

use basalt_math::{Domain, RnsPoly, rns};
use basalt_trace::region;

use super::decompose::{HoistedDecomp, decompose};
use super::{LimbPairPost, dot_pairs, dot_pairs_then, emit_key_load, mac_pair};
use crate::keys::KeyMaterial;
use crate::params::Parameters;

/// `Σ_j d̃_j·(b_j, a_j)` over `Q_l ∪ P` for the digits of `decomp` (no ModDown).
pub fn inner_product(
    params: &Parameters,
    decomp: &HoistedDecomp,
    key: &KeyMaterial,
) -> (RnsPoly, RnsPoly) {
    inner_product_then(params, decomp, key, None).0
}

/// [`inner_product`], with `post(i, acc0_i, acc1_i)` applied to each pair of result limbs
/// while in cache when the product runs limb by limb (a full key on real data: the second
/// result is then `true`); otherwise `post` is not called and the second result is `false`.
pub(crate) fn inner_product_then(
    params: &Parameters,
    decomp: &HoistedDecomp,
    key: &KeyMaterial,
    post: Option<LimbPairPost<'_>>,
) -> ((RnsPoly, RnsPoly), bool) {
    let _r = region("InnerProduct");
    let l1 = decomp.level + 1;
    let k = params.k_at(decomp.level);
    let g = params.gadget_index(decomp.level);
    let like = &decomp.digits[0];
    let mut acc0 = like.with_shape(l1, k, Domain::Ntt);
    let mut acc1 = like.with_shape(l1, k, Domain::Ntt);
    emit_key_load(params, key, decomp.level);
    if let (false, KeyMaterial::Full(full)) = (like.is_symbolic(), key) {
        let part = full.parts[g].as_ref().expect("key part checked by the caller");
        let xs: Vec<&RnsPoly> = decomp.digits.iter().collect();
        let keys: Vec<(&RnsPoly, &RnsPoly)> = part.b.iter().zip(&part.a).take(xs.len()).collect();
        match post {
            Some(post) => dot_pairs_then(params.ring(), &mut acc0, &mut acc1, &xs, &keys, post),
            None => dot_pairs(params.ring(), &mut acc0, &mut acc1, &xs, &keys),
        }
        return ((acc0, acc1), post.is_some());
    }
    let all: Vec<usize> = (0..l1 + k).collect();
    for (j, dj) in decomp.digits.iter().enumerate() {
        let a = key.a(params, (g, j), l1, like.is_symbolic());
        mac_pair(params.ring(), &mut acc0, &mut acc1, dj, key.b(g, j), &a, &all);
    }
    ((acc0, acc1), false)
}

/// Key switching left in `Q_l ∪ P`: `(u_0, u_1)` with `u_0 + u_1·s ≈ P·d·s'`.
///
/// Real inputs with a full key take the fused schedule of `super::fused` (bit-identical, same
/// trace); symbolic inputs and seeded keys the step-by-step one.
pub fn keyswitch_lazy(params: &Parameters, d: &RnsPoly, key: &KeyMaterial) -> (RnsPoly, RnsPoly) {
    if let (false, KeyMaterial::Full(k)) = (d.is_symbolic(), key) {
        return super::fused::keyswitch_lazy_fused(params, d, k);
    }
    keyswitch_lazy_unfused(params, d, key)
}

/// [`keyswitch_lazy`] step by step: every extended digit materialised, then the inner product.
pub(crate) fn keyswitch_lazy_unfused(
    params: &Parameters,
    d: &RnsPoly,
    key: &KeyMaterial,
) -> (RnsPoly, RnsPoly) {
    let decomp = decompose(params, d);
    inner_product(params, &decomp, key)
}

/// Key switching of `d` (`Q_l`, NTT) with `key`: returns `(u_0, u_1)` over `Q_l` with
/// `u_0 + u_1·s ≈ d·s'`.
///
/// # Algorithm
/// 1. `d̃_j = ModUp(digit_j(INTT(d)))` for `j < β`;
/// 2. `(v_0, v_1) = Σ_j d̃_j·(b_j, a_j)` over `Q_l ∪ P`;
/// 3. `u_i = ModDown(v_i) = round(v_i / P)`.
///
/// # Cost
/// See [`super::cost`].
pub fn keyswitch(params: &Parameters, d: &RnsPoly, key: &KeyMaterial) -> (RnsPoly, RnsPoly) {
    let _r = region("KeySwitch");
    let (v0, v1) = keyswitch_lazy(params, d, key);
    let ring = params.ring();
    (rns::mod_down(ring, &v0), rns::mod_down(ring, &v1))
}
