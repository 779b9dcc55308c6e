//! Decompose + ModUp: the part of key switching that depends only on the input polynomial,
//! hence shareable among rotations (hoisting).

use basalt_math::{RnsPoly, rns};
use basalt_trace::{ObjectId, region};

use crate::params::Parameters;

/// The digits of a decomposed polynomial, each extended to `Q_l ∪ P` (NTT domain).
#[derive(Clone, Debug, PartialEq)]
pub struct HoistedDecomp {
    pub(crate) digits: Vec<RnsPoly>,
    pub(crate) level: usize,
    /// Identity in the trace (`CtLoad`/`CtStore`): a hoisted decomposition is as large as
    /// `β` extended polynomials and is read by every rotation that shares it.
    pub(crate) object: ObjectId,
}

impl HoistedDecomp {
    pub fn level(&self) -> usize {
        self.level
    }
    pub fn digits(&self) -> &[RnsPoly] {
        &self.digits
    }
}

/// INTT of `d` (a `Q_l` polynomial in the NTT domain): the coefficient form every ModUp needs.
pub(crate) fn to_coeff(params: &Parameters, d: &RnsPoly) -> RnsPoly {
    let _r = region("Decompose");
    let mut dc = d.clone();
    params.ring().intt_assign(&mut dc);
    dc
}

/// Decompose `d` into `β = ⌈(l+1)/α⌉` digits and ModUp each to `Q_l ∪ P` (`α` and `P` of the
/// level's gadget).
///
/// # Cost
/// INTT `l+1`; per digit `j`: BConv `n·α_j·(l+1+k−α_j)` and NTT `l+1+k−α_j`.
pub fn decompose(params: &Parameters, d: &RnsPoly) -> HoistedDecomp {
    let level = d.q_limbs() - 1;
    let dc = to_coeff(params, d);
    let digits = (0..params.dnum_at(level))
        .map(|j| {
            let digit = params.digit_range(level, j);
            let k = params.k_at(level);
            rns::mod_up_with(params.ring(), &dc, d, digit, k, super::mod_up_mode(params))
        })
        .collect();
    HoistedDecomp { digits, level, object: ObjectId::fresh() }
}
