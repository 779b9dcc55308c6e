//! Bitonic sorting of encrypted values, Osiris' "Sorting" benchmark (Table III, Set IV): `2^m`
//! values in `(0, 1)` in the slots of one sparsely packed ciphertext, compared through a
//! composite of degree-7 polynomials ([`basalt_circuits::compare`]), bootstrapped whenever the
//! chain runs out.
//!
//! # Algorithm
//! Batcher's bitonic network: for block sizes `2^k`, `k = 1..=m`, and distances
//! `j = 2^{k−1}, …, 1`, every slot `i` meets its partner `i ⊕ j`; the pair is ascending where
//! bit `k` of `i` is 0. One stage over all slots at once (SIMD, as Hong et al.'s \[31\] network of
//! `k`-way comparisons with `k = 2`):
//! 1. `y = M ⊙ rot(x, j) + (1 − M) ⊙ rot(x, −j)`, `M_i = [i & j = 0]`: every slot's partner (two
//!    rotations, one masked level; the slot count `2^m` makes rotations cyclic mod `2^m`);
//! 2. `d = x − y`, `h = x + y`, `s = sign(d)` (twelve degree-7 stages, 36 levels);
//! 3. `x' = h/2 + (τ/2) ⊙ d ⊙ s`, `τ_i = +1` where slot `i` keeps the larger value (the high
//!    slot of an ascending pair, the low one of a descending pair), `−1` where the smaller:
//!    `|d| = d·sign(d)`, so `x'` is the pair's max or min. `(τ/2) ⊙ d` is built after the sign
//!    from `x` and its two rotations (masks `τ/2`, `−(τ/2) ⊙ M`, `−(τ/2) ⊙ (1 − M)`), so the
//!    factor and the product share one level.
//!
//! A stage needs two levels of its input besides the sign; with fewer than three left (see
//! `STAGE_LEVELS`) the input is refreshed first; inside the sign a refresh comes before each
//! polynomial that does not fit ([`compare::sign_refreshed`]). Every comparison is computed in both slots of its pair
//! (half the signs are redundant): the network has `m(m+1)/2` stages of one sign each.
//!
//! # Packing
//! `2^14` values, Set IV's `n = 2^15` slots: the values fill `2^14` slots of a sparsely packed
//! ciphertext (the encoding repeats them twice over the ring's `N/2 = 2^15` slots), so that
//! rotations by `±j` wrap inside the `2^14` values and every bootstrap is a `2^14`-slot sparse
//! bootstrap (Osiris §VI: sparse-packed bootstrapping in sorting). \[GAP\] The paper gives neither
//! the packing nor the composite; this is the simplest one ciphertext layout of \[31\]'s
//! 2-way network.
//!
//! # Source
//! K. E. Batcher, "Sorting networks and their applications", AFIPS 1968; S. Hong, S. Kim,
//! J. Choi, Y. Lee, J. H. Cheon, "Efficient sorting of homomorphic encrypted data with k-way
//! sorting network", IEEE TIFS 16, 2021 (Osiris' \[31\]); Cheon, Kim, Kim, ASIACRYPT 2020 (the
//! comparison).
//!
//! # Cost
//! `m(m+1)/2` stages (105 for `2^14`), each: 2 rotations, 5 plaintext products, one sign
//! (`Σ` stage depths levels), one ciphertext product; bootstraps as the levels require.

use basalt_circuits::compare::{self, Factor, Refresh};
use basalt_circuits::polynomial::Chebyshev;
use basalt_ckks::{Ciphertext, Evaluator};

use crate::{CircuitError, Result};

/// A bitonic sorting network over `2^log_len` slots with one comparison composite.
#[derive(Clone, Debug)]
pub struct BitonicSort {
    pub log_len: u32,
    /// The comparison's composition list ([`compare::sign_refreshed`]).
    pub comparison: Vec<Chebyshev>,
}

/// A stage's input is refreshed first when it has fewer levels than this. Two are needed (the
/// partner mask and the product with the sign; the `τ/2` factor shares the product's level,
/// [`compare::times_sign`]); three aligns the 3-level polynomials with the 9-level chain
/// after a bootstrap: on Set IV a dynamic program over every refresh placement (each
/// stage's input, each polynomial, the product) finds 472 bootstraps for 2^14 values, which
/// this rule attains (two: 489). It is a property of the schedule, not fitted to a row.
const STAGE_LEVELS: usize = 3;

impl BitonicSort {
    /// Osiris' benchmark: `2^14` values, twelve degree-7 polynomials per comparison.
    pub fn osiris() -> BitonicSort {
        BitonicSort { log_len: 14, comparison: compare::osiris_sort() }
    }

    /// Values sorted (and slots used).
    pub fn len(&self) -> usize {
        1 << self.log_len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// `(block, distance)` of every stage, in order: `m(m+1)/2` of them.
    pub fn stages(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for k in 1..=self.log_len {
            let mut j = 1usize << (k - 1);
            while j > 0 {
                out.push((1 << k, j));
                j /= 2;
            }
        }
        out
    }

    /// Rotations the network uses: `±j` for every distance.
    pub fn rotations(&self) -> Vec<i64> {
        (0..self.log_len).flat_map(|b| [1i64 << b, -(1i64 << b)]).collect()
    }

    /// One stage's plaintext vectors: the partner mask `M`, `1 − M`, and the factors of
    /// `(τ/2) ⊙ d` on `x`, `rot(x, j)` and `rot(x, −j)`: `τ/2`, `−(τ/2) ⊙ M`, `−(τ/2) ⊙ (1 − M)`.
    fn masks(&self, block: usize, j: usize) -> [Vec<f64>; 5] {
        let n = self.len();
        let low: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i & j == 0))).collect();
        let high: Vec<f64> = low.iter().map(|m| 1.0 - m).collect();
        let tau_half: Vec<f64> = (0..n)
            .map(|i| {
                let ascending = i & block == 0;
                let is_high = i & j != 0;
                if ascending == is_high { 0.5 } else { -0.5 }
            })
            .collect();
        let times = |m: &[f64]| tau_half.iter().zip(m).map(|(t, m)| -t * m).collect();
        let (t_low, t_high) = (times(&low), times(&high));
        [low, high, tau_half, t_low, t_high]
    }

    /// Cleartext twin: the same network with the same polynomial comparison (not an exact
    /// sort: values closer than the composite resolves are blended, as encrypted).
    ///
    /// # Panics
    /// If `x` is not [`BitonicSort::len`] long.
    pub fn sort_plain(&self, x: &[f64]) -> Vec<f64> {
        let n = self.len();
        assert_eq!(x.len(), n, "one value per slot");
        let mut x = x.to_vec();
        for (block, j) in self.stages() {
            let [low, _, tau_half, ..] = self.masks(block, j);
            x = (0..n)
                .map(|i| {
                    let y = if low[i] == 1.0 { x[(i + j) % n] } else { x[(i + n - j) % n] };
                    let d = x[i] - y;
                    0.5 * (x[i] + y) + tau_half[i] * d * compare::sign_plain(d, &self.comparison)
                })
                .collect();
        }
        x
    }

    /// Sort the `2^m` values in `ct`'s slots (values in `(0, 1)`, `ct.slots() = 2^m`), calling
    /// `refresh` (a bootstrap to the chain's top at the same scale) whenever the levels run out.
    /// In trace mode `refresh` can stand in for the bootstrap (see `record_sort`).
    ///
    /// # Errors
    /// [`CircuitError::SlotMismatch`] for a ciphertext of another slot count;
    /// [`CircuitError::NotEnoughLevels`] if the chain above a refresh is too short for one
    /// polynomial or a stage's three levels; scheme errors (missing rotation keys).
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        refresh: Refresh<'_>,
    ) -> Result<Ciphertext> {
        if ct.slots() != self.len() {
            return Err(CircuitError::SlotMismatch { expected: self.len(), found: ct.slots() });
        }
        let params = eval.params();
        let mut x = ct.clone();
        for (block, j) in self.stages() {
            let _r = basalt_trace::region("SortStage");
            if compare::levels_left(params, &x) < STAGE_LEVELS {
                x = refresh(&x)?;
            }
            let [low, high, tau_half, t_low, t_high] = self.masks(block, j);
            let up = eval.rotate(&x, j as i64)?;
            let down = eval.rotate(&x, -(j as i64))?;
            // The partner y, one level down at x's scale; d = x − y and h = x + y.
            let c = params.primes_per_rescale();
            let ly = x.level() - c;
            let partner = [(&up, Factor::Slots(&low)), (&down, Factor::Slots(&high))];
            let y = compare::rescale_sum_to(eval, &partner, ly, x.scale())?;
            let x0 = eval.drop_level(&x, c)?;
            let d = eval.sub(&x0, &y)?;
            let h = eval.add(&x0, &y)?;
            let s = compare::sign_refreshed(eval, &d, &self.comparison, &mut *refresh)?;
            // (τ/2) ⊙ d from x and its rotations: no level of its own.
            let half_d = [
                (&x, Factor::Slots(&tau_half)),
                (&up, Factor::Slots(&t_low)),
                (&down, Factor::Slots(&t_high)),
            ];
            let t = compare::times_sign(eval, &half_d, &s, &mut *refresh)?;
            let mid = compare::rescale_to(eval, &h, Factor::Const(0.5), t.level(), t.scale())?;
            x = eval.add(&mid, &t)?;
        }
        Ok(x)
    }
}

/// Record `sort` on a shape-only ciphertext at `params`' top level (`2^log_len` slots, the
/// default scale), seeded keys or not. Each refresh is a bootstrap marker
/// ([`basalt_trace::Marker::Bootstrap`]) and returns a fresh ciphertext at the top: the bootstrap it
/// stands for is recorded once on its own chain and timed by multiplicity (a sort of `2^14`
/// needs hundreds). Returns the trace and the refresh count.
///
/// # Errors
/// A chain too short for one stage; scheme errors.
pub fn record_sort(
    params: &basalt_ckks::Parameters,
    sort: &BitonicSort,
    seeded: bool,
) -> Result<(basalt_trace::Trace, usize)> {
    let keys = basalt_ckks::KeyGenerator::new(params).gen_symbolic_evaluation_keys(
        &sort.rotations(),
        false,
        seeded,
    );
    let eval = Evaluator::new(params, keys)?;
    let top = params.max_level();
    let fresh = |scale: f64| -> Result<Ciphertext> {
        let mut ct = Ciphertext::symbolic(params, top)?;
        ct.set_slots(sort.len());
        ct.set_scale(scale);
        Ok(ct)
    };
    let input = fresh(params.default_scale())?;
    let mut refreshes = 0;
    let mut refresh = |c: &Ciphertext| -> Result<Ciphertext> {
        basalt_trace::mark(basalt_trace::Marker::Bootstrap);
        refreshes += 1;
        fresh(c.scale())
    };
    let (out, t) = basalt_trace::record(|| sort.evaluate(&eval, &input, &mut refresh));
    out?;
    Ok((t, refreshes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_has_the_stated_stages_and_its_twin_sorts() {
        let s = BitonicSort::osiris();
        assert_eq!(s.stages().len(), 14 * 15 / 2);
        assert_eq!(s.rotations().len(), 28);
        let small = BitonicSort { log_len: 5, comparison: compare::composite(2, 2) };
        // 32 values on a grid of step 1/32 (gaps the composite resolves), shuffled.
        let x: Vec<f64> = (0..32).map(|i| ((i * 13) % 32) as f64 / 32.0 + 1.0 / 64.0).collect();
        let mut want = x.clone();
        want.sort_by(f64::total_cmp);
        let have = small.sort_plain(&x);
        let err = want.iter().zip(&have).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1.0 / 256.0, "{err}: {have:?}");
    }
}
