//! Homomorphic comparison: `sign`, `min` and `max` of encrypted values in `[−1, 1]` through a
//! composite of odd polynomials, bootstrapping between stages when the chain runs out.
//!
//! # Algorithm
//! 1. `sign(x) ≈ p_k ∘ … ∘ p_1 (x)` for a list of odd polynomials on `[−1, 1]` (the
//!    *composition list*); each stage is a Chebyshev evaluation of depth `⌈log2(d+1)⌉`
//!    ([`crate::polynomial::evaluate`]). Before a stage that does not fit the levels left, the
//!    caller's `refresh` (a bootstrap) is applied.
//! 2. `max(a, b) = (a + b)/2 + (a − b)/2 · sign(a − b)`, `min = (a + b)/2 − (a − b)/2 · sign(a − b)`:
//!    one ciphertext product after the sign, and both halves land on the inputs' scale exactly
//!    ([`rescale_sum_to`]); `(a − b)/2` is taken from `a` and `b` after the sign, so it costs
//!    no level of its own ([`times_sign`]).
//!
//! The composites of Cheon, Kim, Kim and Lee use two degree-7 polynomials: `f_3` (the closed
//! form below: `f_3(±1) = ±1` with three vanishing derivatives there, so it squeezes values
//! near `±1` onto `±1`) and `g_3` (steep at 0: `g_3'(0) = 4589/1024 ≈ 4.48`, `|g_3| < 1` on
//! `[−1, 1]`, so it pushes small inputs away from 0 faster than `f_3`'s `35/16`). The comparison
//! is `f_3^{d_f} ∘ g_3^{d_g}` ([`composite`]): `g_3` first, `f_3` to finish.
//!
//! # Source
//! J. H. Cheon, D. Kim, D. Kim, "Efficient homomorphic comparison methods with optimal
//! complexity", ASIACRYPT 2020 (ePrint 2019/1234), §3: `f_n(x) = Σ_{i=0}^{n} (1/4^i)·C(2i, i)·
//! x(1 − x²)^i`, so `f_3(x) = (35x − 35x³ + 21x⁵ − 5x⁷)/16`; `g_3(x) = (4589x − 16577x³ +
//! 25614x⁵ − 12860x⁷)/2^10` is the paper's degree-7 `g_n` (coefficients transcribed from the
//! paper's list; the published table could not be re-checked offline, so the tests check the
//! properties the paper asks of `g_n`: odd, `|g_3| ≤ 1` on `[−1, 1]`, steeper than `f_3` at 0).
//! Osiris' sorting benchmark composites twelve degree-7 polynomials per comparison (§VI);
//! [`osiris_sort`] is twelve of these.
//!
//! # Cost
//! `sign`: `Σ ⌈log2(d_i + 1)⌉` levels (3 per degree-7 stage: 36 for twelve), plus one bootstrap
//! whenever a stage does not fit; `min`/`max`: one more level and one ciphertext product.

use basalt_ckks::{Ciphertext, Evaluator, Parameters, Plaintext};
use num_complex::Complex64;

use crate::error::{CircuitError, Result};
use crate::polynomial::eval::map_levels;
use crate::polynomial::{Chebyshev, evaluate};

/// `f_3(x) = (35x − 35x³ + 21x⁵ − 5x⁷)/16` (Cheon, Kim, Kim 2020, closed form).
pub fn cheon_f3() -> Chebyshev {
    let m = [0.0, 35.0, 0.0, -35.0, 0.0, 21.0, 0.0, -5.0].map(|c| c / 16.0);
    Chebyshev::from_monomial(&m, -1.0, 1.0).expect("fixed polynomial").into_odd()
}

/// `g_3(x) = (4589x − 16577x³ + 25614x⁵ − 12860x⁷)/2^10` (Cheon, Kim, Kim 2020).
pub fn cheon_g3() -> Chebyshev {
    let m = [0.0, 4589.0, 0.0, -16577.0, 0.0, 25614.0, 0.0, -12860.0].map(|c| c / 1024.0);
    Chebyshev::from_monomial(&m, -1.0, 1.0).expect("fixed polynomial").into_odd()
}

/// The composition list `g_3` `d_g` times, then `f_3` `d_f` times (applied in that order).
pub fn composite(d_g: usize, d_f: usize) -> Vec<Chebyshev> {
    let (g, f) = (cheon_g3(), cheon_f3());
    std::iter::repeat_n(g, d_g).chain(std::iter::repeat_n(f, d_f)).collect()
}

/// Twelve degree-7 stages, Osiris' comparison for sorting (§VI). The paper does not say which;
/// `g_3^8` then `f_3^4` \[GAP\] brings every `|x| ≥ 2^−19` within `2^−20` of `±1` (with
/// `f_3^{12}` alone only `|x| ≥ 2^−11` is resolved), about the resolution a 36-bit scale
/// leaves.
pub fn osiris_sort() -> Vec<Chebyshev> {
    composite(8, 4)
}

/// Multiplicative depth of a composition list (each stage on `[−1, 1]` or with its map).
pub fn depth(stages: &[Chebyshev]) -> usize {
    stages.iter().map(|p| p.depth() + map_levels(p)).sum()
}

/// Cleartext twin of [`sign`].
pub fn sign_plain(x: f64, stages: &[Chebyshev]) -> f64 {
    stages.iter().fold(x, |v, p| p.evaluate_plain(v))
}

/// Cleartext twin of [`min_max`]: `(min, max)` as the circuit computes them.
pub fn min_max_plain(a: f64, b: f64, stages: &[Chebyshev]) -> (f64, f64) {
    let half = 0.5 * (a - b) * sign_plain(a - b, stages);
    (0.5 * (a + b) - half, 0.5 * (a + b) + half)
}

/// Logical levels `ct` has left above the base modulus.
pub fn levels_left(params: &Parameters, ct: &Ciphertext) -> usize {
    (ct.level() + 1).saturating_sub(params.base_primes()) / params.primes_per_rescale()
}

/// What refreshes a ciphertext whose levels ran out (a bootstrap, or in trace mode a marker).
pub type Refresh<'r> = &'r mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>;

/// `sign(ct)` for values in `[−1, 1]` with the composition list `stages`, without bootstrapping.
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] (before any work) if the list's depth is not left.
pub fn sign(eval: &Evaluator, ct: &Ciphertext, stages: &[Chebyshev]) -> Result<Ciphertext> {
    let available = levels_left(eval.params(), ct);
    let needed = depth(stages);
    if needed > available {
        return Err(CircuitError::NotEnoughLevels { needed, available, level: ct.level() });
    }
    sign_refreshed(eval, ct, stages, &mut |c: &Ciphertext| Ok(c.clone()))
}

/// [`sign`], applying `refresh` before every stage that does not fit the levels left.
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] if a stage does not fit even after `refresh`; scheme
/// errors; `refresh`'s errors.
pub fn sign_refreshed(
    eval: &Evaluator,
    ct: &Ciphertext,
    stages: &[Chebyshev],
    refresh: Refresh<'_>,
) -> Result<Ciphertext> {
    let params = eval.params();
    let mut x = ct.clone();
    for p in stages {
        if levels_left(params, &x) < p.depth() + map_levels(p) {
            x = refresh(&x)?;
        }
        x = evaluate(eval, &x, p, None)?;
    }
    Ok(x)
}

/// A multiplier for [`rescale_to`]: one constant, or one real value per slot (a mask).
#[derive(Clone, Copy, Debug)]
pub enum Factor<'a> {
    Const(f64),
    Slots(&'a [f64]),
}

/// `factor ⊙ ct` at exactly `(level, scale)`: [`rescale_sum_to`] of one term.
///
/// # Errors
/// As [`rescale_sum_to`].
pub fn rescale_to(
    eval: &Evaluator,
    ct: &Ciphertext,
    factor: Factor<'_>,
    level: usize,
    scale: f64,
) -> Result<Ciphertext> {
    rescale_sum_to(eval, &[(ct, factor)], level, scale)
}

/// `Σ factor_i ⊙ ct_i` at exactly `(level, scale)`: each term dropped to `level + c` primes and
/// multiplied by its factor encoded at `scale·Q/scale(ct_i)` (`Q` the primes the rescale then
/// divides by), the sum rescaled once. One level; the output scale is exact, so results can be
/// added without drift, and terms of different scales and levels combine.
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] if a term is not at least one level above `level`;
/// [`CircuitError::Invalid`] for no term; scheme errors (a mask longer than the slots).
pub fn rescale_sum_to(
    eval: &Evaluator,
    terms: &[(&Ciphertext, Factor<'_>)],
    level: usize,
    scale: f64,
) -> Result<Ciphertext> {
    let params = eval.params();
    let c = params.primes_per_rescale();
    let q: f64 = params.q()[level + 1..=level + c].iter().map(|&q| q as f64).product();
    let mut sum: Option<Ciphertext> = None;
    for &(ct, factor) in terms {
        if ct.level() < level + c {
            return Err(CircuitError::NotEnoughLevels {
                needed: 1,
                available: 0,
                level: ct.level(),
            });
        }
        let x = eval.drop_level(ct, ct.level() - (level + c))?;
        let const_scale = scale * q / ct.scale();
        let y = match factor {
            Factor::Const(m) => eval.mul_const_scaled(&x, m, const_scale)?,
            Factor::Slots(v) => {
                let mut pt = if x.is_symbolic() {
                    Plaintext::symbolic(params, x.level())?
                } else {
                    let v: Vec<Complex64> = v.iter().map(|&r| Complex64::new(r, 0.0)).collect();
                    eval.encoder().encode(&v, x.slots(), x.level(), const_scale)?
                };
                pt.set_scale(const_scale);
                eval.mul_plain(&x, &pt)?
            }
        };
        sum = Some(match sum {
            None => y,
            Some(s) => eval.add(&s, &y)?,
        });
    }
    let sum = sum.ok_or_else(|| CircuitError::Invalid("a sum of no terms".into()))?;
    Ok(eval.rescale(&sum)?)
}

/// `(min(a, b), max(a, b))` slot-wise for `a, b` at one level and scale with `a − b ∈ [−1, 1]`;
/// outputs at the inputs' scale, one level below the sign (see the module's algorithm).
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] if the inputs have no level left for the final product
/// (refresh them first); as [`sign_refreshed`].
pub fn min_max(
    eval: &Evaluator,
    a: &Ciphertext,
    b: &Ciphertext,
    stages: &[Chebyshev],
    refresh: Refresh<'_>,
) -> Result<(Ciphertext, Ciphertext)> {
    let d = eval.sub(a, b)?;
    let h = eval.add(a, b)?;
    let s = sign_refreshed(eval, &d, stages, &mut *refresh)?;
    let half_d = [(a, Factor::Const(0.5)), (b, Factor::Const(-0.5))];
    let t = times_sign(eval, &half_d, &s, refresh)?;
    let mid = rescale_to(eval, &h, Factor::Const(0.5), t.level(), t.scale())?;
    Ok((eval.sub(&mid, &t)?, eval.add(&mid, &t)?))
}

/// `(Σ factor_i ⊙ ct_i) ⊙ s` at the scale of the first term, one level below where the sum
/// (one level below its lowest term) and `s` meet; `s` is refreshed first if it has no level
/// left. Applying the factors to the terms rather than to their sum costs no level of its own
/// (the factor's rescale and the sum's are one).
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] if a term cannot take the factor and the product; scheme
/// and `refresh` errors.
pub fn times_sign(
    eval: &Evaluator,
    terms: &[(&Ciphertext, Factor<'_>)],
    s: &Ciphertext,
    refresh: Refresh<'_>,
) -> Result<Ciphertext> {
    let params = eval.params();
    let c = params.primes_per_rescale();
    let Some(first) = terms.first() else {
        return Err(CircuitError::Invalid("a product with no terms".into()));
    };
    let mut s = s.clone();
    if levels_left(params, &s) < 1 {
        s = refresh(&s)?;
    }
    let low = terms.iter().map(|(t, _)| t.level()).min().unwrap_or(0);
    let floor = params.base_primes() - 1 + c; // lowest level a product can be rescaled from
    let lp = s.level().min(low.saturating_sub(c));
    if lp < floor || low < c {
        return Err(CircuitError::NotEnoughLevels { needed: 2, available: 0, level: low });
    }
    // After the rescale at lp the product's scale is scale(sum) · scale(s) / Q_lp: choose
    // scale(sum) so that it is the first term's scale again.
    let q: f64 = params.q()[lp + 1 - c..=lp].iter().map(|&q| q as f64).product();
    let sum = rescale_sum_to(eval, terms, lp, first.0.scale() * q / s.scale())?;
    let s = eval.drop_level(&s, s.level() - lp)?;
    Ok(eval.rescale(&eval.mul_relin(&sum, &s)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheon_polynomials_have_the_stated_shape() {
        let (f, g) = (cheon_f3(), cheon_g3());
        assert_eq!((f.degree(), g.degree(), f.depth()), (7, 7, 3));
        for i in 0..=1000 {
            let x = i as f64 / 1000.0;
            assert!((f.evaluate_plain(-x) + f.evaluate_plain(x)).abs() < 1e-14, "odd");
            assert!(g.evaluate_plain(x).abs() <= 1.0, "|g_3| <= 1 at {x}");
            assert!(f.evaluate_plain(x) <= 1.0 + 1e-14 && f.evaluate_plain(x) >= 0.0);
        }
        assert!((f.evaluate_plain(1.0) - 1.0).abs() < 1e-14);
        let slope = |p: &Chebyshev| p.evaluate_plain(1e-6) / 1e-6;
        assert!((slope(&f) - 35.0 / 16.0).abs() < 1e-6);
        assert!((slope(&g) - 4589.0 / 1024.0).abs() < 1e-6);
        // Twelve stages resolve 2^-19 to 20 bits; f_3 alone does not.
        let s = osiris_sort();
        assert_eq!((s.len(), depth(&s)), (12, 36));
        assert!(1.0 - sign_plain(2f64.powi(-19), &s) < 2f64.powi(-20));
        assert!(1.0 - sign_plain(2f64.powi(-19), &composite(0, 12)) > 0.1);
        let (lo, hi) = min_max_plain(0.3, 0.7, &s);
        assert!((lo - 0.3).abs() < 1e-12 && (hi - 0.7).abs() < 1e-12);
    }
}
