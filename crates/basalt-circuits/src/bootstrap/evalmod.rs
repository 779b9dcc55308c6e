//! EvalMod: remove the `Q_0·I` that ModRaise added, slot by slot.
//!
//! After CoeffToSlot every slot holds `x = t/(K·Q_0)` for a raised coefficient
//! `t = m + Q_0·I` with `|I| < K`. The reduction `t mod Q_0 ≈ (Q_0/2π)·sin(2π·t/Q_0)` is
//! evaluated as a scaled cosine and `r` double angles (Han–Ki, CT-RSA 2020; Bossuat et al.,
//! EUROCRYPT 2021):
//! 1. `y_0 = p(x) ≈ cos(2π(K·x − 1/4)/2^r)`, a Chebyshev interpolant on `[−1, 1]` evaluated with
//!    optimal depth ([`crate::polynomial::evaluate`]);
//! 2. `y_{i+1} = 2·y_i² − 1`, so `y_r = cos(2π(K·x − 1/4)) = sin(2π·t/Q_0)`;
//! 3. optionally (`arcsine_degree > 0`), `arcsin(y_r)` by its odd Taylor polynomial, which
//!    undoes the sine's `−(2πε)³/6` on the message `ε = (t mod Q_0)/Q_0` (Bossuat et al. §5):
//!    the error that dominates when coefficients are large against `Q_0` (few slots, small
//!    rings, a low message ratio), at the cost of `⌈log2(d+1)⌉` more levels.
//!
//! The interpolant only needs to be accurate near `K·x ∈ ℤ` but is fitted on the whole interval:
//! with `K = 16`, degree 63 and `r = 2` its error after the double angles is `7·10^-14`
//! (the f64 floor; measured in `approximation_error_is_at_the_f64_floor`), and depth
//! `⌈log2 64⌉ + 2 = 8` is Lattigo's EvalMod depth. Degree 31 with `r = 3` (also depth 8) only
//! reaches `3·10^-9`, 15 bits worse.
//!
//! Scales: the input is at scale `S_e ≈ 2^60` (the EvalMod primes), so squaring and rescaling
//! keeps it stable; the output scale is set exactly by asking the polynomial for the scale that
//! the double angles map onto the requested target.

use basalt_ckks::{Ciphertext, Evaluator, Parameters};
use serde::{Deserialize, Serialize};

use crate::error::{CircuitError, Result};
use crate::polynomial::{self, Chebyshev};

/// Parameters of EvalMod.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalModConfig {
    /// `K`: the bound on `|I|` (the interval is `K·x ∈ [−K, K]`).
    pub k: f64,
    /// Degree of the cosine interpolant.
    pub degree: usize,
    /// Number `r` of double-angle steps.
    pub double_angle: usize,
    /// log2 of the scale during EvalMod (≈ the bits of its primes). Nominal for a
    /// [`super::Bootstrapper`], which uses the exact product of the primes EvalMod's first
    /// rescale drops (a scale off the primes drifts through the Chebyshev powers).
    pub log_scale: f64,
    /// Odd degree of the arcsine correction (Taylor series of `arcsin`); 0: none.
    #[serde(default)]
    pub arcsine_degree: usize,
}

impl Default for EvalModConfig {
    fn default() -> Self {
        EvalModConfig { k: 12.0, degree: 31, double_angle: 3, log_scale: 60.0, arcsine_degree: 0 }
    }
}

impl EvalModConfig {
    /// The interpolant `p(x) ≈ cos(2π(K·x − 1/4)/2^r)` on `[−1, 1]`.
    ///
    /// # Errors
    /// [`CircuitError::BadDegree`] for a degree outside `1..=1024`, [`CircuitError::Invalid`]
    /// for `K ≤ 0`.
    pub fn polynomial(&self) -> Result<Chebyshev> {
        if !(self.k > 0.0 && self.k.is_finite()) {
            return Err(CircuitError::Invalid(format!("EvalMod needs K > 0, got {}", self.k)));
        }
        let (k, r) = (self.k, self.double_angle as i32);
        let two_pi = 2.0 * std::f64::consts::PI;
        let g = move |x: f64| (two_pi * (k * x - 0.25) / 2f64.powi(r)).cos();
        let mut p = Chebyshev::interpolate(g, -1.0, 1.0, self.degree)?;
        let points: Vec<f64> =
            (1 - k.ceil() as i64..k.ceil() as i64).map(|i| i as f64 / k).collect();
        pin(&mut p.coeffs, &points, g);
        Ok(p)
    }

    /// The arcsine correction: `Σ_{k odd ≤ d} c_k y^k`, the Taylor polynomial of `arcsin`,
    /// in the Chebyshev basis on `[−1, 1]` (exact: interpolating a degree-`d` polynomial at
    /// `d + 1` nodes). A Taylor series rather than a fit on a small interval: `|y|` has no
    /// tight bound (a coefficient can be as large as the sum of the slots), and the series
    /// grows gently outside any interval. `None` when `arcsine_degree` is 0.
    ///
    /// # Errors
    /// [`CircuitError::BadDegree`] for an even degree or one above 31.
    pub fn arcsine_polynomial(&self) -> Result<Option<Chebyshev>> {
        let d = self.arcsine_degree;
        if d == 0 {
            return Ok(None);
        }
        if d.is_multiple_of(2) || d > 31 {
            return Err(CircuitError::BadDegree(d));
        }
        // c_{2j+1} = (2j)! / (4^j (j!)^2 (2j+1)), by the ratio c_{2j+1}/c_{2j−1}.
        let mut coeffs = vec![0.0; d + 1];
        let mut c = 1.0;
        for j in 0..=(d - 1) / 2 {
            if j > 0 {
                let jf = j as f64;
                c *= (2.0 * jf - 1.0) * (2.0 * jf - 1.0) / ((2.0 * jf) * (2.0 * jf + 1.0));
            }
            coeffs[2 * j + 1] = c;
        }
        let taylor = move |y: f64| coeffs.iter().rev().fold(0.0, |acc, &c| acc * y + c);
        Ok(Some(Chebyshev::interpolate(taylor, -1.0, 1.0, d)?))
    }

    fn arcsine_depth(&self) -> usize {
        match self.arcsine_degree {
            0 => 0,
            d => depth_of(d),
        }
    }

    /// Levels consumed (logical): the interpolant's depth, one per double angle, and the
    /// arcsine's depth.
    pub fn depth(&self) -> usize {
        depth_of(self.degree) + self.double_angle + self.arcsine_depth()
    }

    /// The plain function EvalMod computes, `y_r(x)` or `arcsin`'s series of it (tests and
    /// precision budgets).
    pub fn evaluate_plain(&self, p: &Chebyshev, x: f64) -> f64 {
        let mut y = p.evaluate_plain(x);
        for _ in 0..self.double_angle {
            y = 2.0 * y * y - 1.0;
        }
        match self.arcsine_polynomial() {
            Ok(Some(a)) => a.evaluate_plain(y),
            _ => y,
        }
    }
}

/// Levels a polynomial of `degree` consumes with optimal-depth evaluation: ⌈log2(degree + 1)⌉.
fn depth_of(degree: usize) -> usize {
    (usize::BITS - degree.leading_zeros()) as usize
}

/// Make `p` exact (to f64 rounding) at `points` by the minimum-norm change of its Chebyshev
/// coefficients: `Δc = Aᵀ(AAᵀ)^{-1}·r` with `A[i][k] = T_k(x_i)` and `r` the residuals.
///
/// Why: inputs cluster at `x = I/K` for the integers `I`, so the interpolant's error there is
/// *systematic*: every coefficient with the same `I` gets the same error, the errors have a
/// non-zero mean, and after SlotToCoeff a constant added to every coefficient lands on one
/// slot multiplied by `≈ 0.64·N` (`Σ_k ζ^k` for the slot nearest 1): at N = 2^16 a 7·10^-13
/// interpolation error cost that slot 5 bits. With the error pinned to zero at the integers,
/// what remains is proportional to the message offset, which has zero mean.
fn pin(coeffs: &mut [f64], points: &[f64], g: impl Fn(f64) -> f64) {
    let m = points.len();
    let d = coeffs.len();
    if m == 0 || m > d {
        return;
    }
    let row = |x: f64| -> Vec<f64> {
        let mut t = vec![1.0; d];
        if d > 1 {
            t[1] = x;
        }
        for k in 2..d {
            t[k] = 2.0 * x * t[k - 1] - t[k - 2];
        }
        t
    };
    let a: Vec<Vec<f64>> = points.iter().map(|&x| row(x)).collect();
    let eval = |c: &[f64], ai: &[f64]| ai.iter().zip(c).map(|(t, c)| t * c).sum::<f64>();
    for _ in 0..2 {
        // Two passes: the second removes what f64 rounding left of the first.
        let r: Vec<f64> = points.iter().zip(&a).map(|(&x, ai)| g(x) - eval(coeffs, ai)).collect();
        // Solve (A Aᵀ) y = r by Gaussian elimination with partial pivoting.
        let mut gm: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                let mut rowv: Vec<f64> =
                    (0..m).map(|j| a[i].iter().zip(&a[j]).map(|(x, y)| x * y).sum()).collect();
                rowv.push(r[i]);
                rowv
            })
            .collect();
        for col in 0..m {
            let piv = (col..m).max_by(|&i, &j| gm[i][col].abs().total_cmp(&gm[j][col].abs()));
            let piv = piv.expect("non-empty");
            gm.swap(col, piv);
            let pivot_row = gm[col].clone();
            for row in gm.iter_mut().skip(col + 1) {
                let f = row[col] / pivot_row[col];
                row.iter_mut().zip(&pivot_row).skip(col).for_each(|(x, p)| *x -= f * p);
            }
        }
        let mut y = vec![0.0; m];
        for i in (0..m).rev() {
            let s: f64 = (i + 1..m).map(|j| gm[i][j] * y[j]).sum();
            y[i] = (gm[i][m] - s) / gm[i][i];
        }
        for (k, c) in coeffs.iter_mut().enumerate() {
            *c += (0..m).map(|i| a[i][k] * y[i]).sum::<f64>();
        }
    }
}

/// `Π` of the primes a rescale at `level` drops.
fn dropped(params: &Parameters, level: usize) -> f64 {
    let c = params.primes_per_rescale();
    params.q()[level + 1 - c..=level].iter().map(|&q| q as f64).product()
}

/// Evaluate EvalMod on `ct` (slots in `[−1, 1]`, scale ≈ `2^log_scale`); the output holds
/// `sin(2π·K·x)` (or, with the arcsine correction, `2π·ε` for `K·x = I + ε`) at scale exactly
/// `target_scale`.
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] before any work if the depth exceeds the levels left;
/// scheme errors (e.g. a missing relinearization key).
pub fn eval_mod(
    eval: &Evaluator,
    ct: &Ciphertext,
    cfg: &EvalModConfig,
    p: &Chebyshev,
    target_scale: f64,
    merge_rescale: bool,
) -> Result<Ciphertext> {
    let params = eval.params();
    let c = params.primes_per_rescale();
    let plan = polynomial::eval::plan(params, ct.level(), p)?;
    let r = cfg.double_angle;
    let asin = cfg.arcsine_polynomial()?;
    let extra = cfg.arcsine_depth();
    if plan.out_level < (r + extra) * c + params.base_primes() - 1 {
        return Err(CircuitError::NotEnoughLevels {
            needed: plan.depth + r + extra,
            available: (ct.level() + 1 - params.base_primes()) / c,
            level: ct.level(),
        });
    }
    // With the arcsine the double angles end at EvalMod's own scale and the series sets the
    // target; without it the double angles do.
    let sine_target = if asin.is_some() { 2f64.powf(cfg.log_scale) } else { target_scale };
    // Backwards from the target: squaring y at level l and rescaling gives scale S²/D_l.
    let mut scale = sine_target;
    for i in (0..r).rev() {
        scale = (scale * dropped(params, plan.out_level - i * c)).sqrt();
    }
    let mut y = polynomial::evaluate_with(eval, ct, p, Some(scale), merge_rescale)?;
    for _ in 0..r {
        // cos(2θ) = 2·cos²θ − 1
        y = if merge_rescale {
            eval.mul_relin_rescale(&y, &y, true, None, -1.0)?
        } else {
            let sq = eval.mul_relin(&y, &y)?;
            let two = eval.add(&sq, &sq)?;
            let two = eval.add_const(&two, (-1.0).into())?;
            eval.rescale(&two)?
        };
    }
    let rel = (y.scale() - sine_target).abs() / sine_target;
    debug_assert!(rel < 1e-9, "EvalMod output scale off by {rel}");
    y.set_scale(sine_target);
    if let Some(a) = asin {
        y = polynomial::evaluate(eval, &y, &a, Some(target_scale))?;
        y.set_scale(target_scale);
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximation_error_is_at_the_f64_floor() {
        let worst = |cfg: EvalModConfig| {
            let p = cfg.polynomial().unwrap();
            let mut worst = 0f64;
            for i in -(cfg.k as i64) + 1..cfg.k as i64 {
                for j in -20..=20 {
                    let t = i as f64 + j as f64 * 2f64.powi(-8) / 20.0;
                    let x = t / cfg.k;
                    let want = (2.0 * std::f64::consts::PI * t).sin();
                    worst = worst.max((cfg.evaluate_plain(&p, x) - want).abs());
                }
            }
            worst
        };
        let default = EvalModConfig::default();
        assert_eq!(default.depth(), 8);
        assert!(worst(default) < 2e-13, "{}", worst(default));
        let shallow = EvalModConfig { k: 16.0, degree: 31, double_angle: 3, ..default };
        assert_eq!(shallow.depth(), 8);
        assert!(worst(shallow) > 1e-10, "K = 16 at this depth is much worse");
    }

    #[test]
    fn arcsine_correction_removes_the_cubic_term() {
        let plain = EvalModConfig::default();
        let p = plain.polynomial().unwrap();
        // Taylor coefficients 1, 1/6, 3/40, 5/112: arcsin(1/2) = π/6 up to the y^9 term.
        let a7 = EvalModConfig { arcsine_degree: 7, ..plain }.arcsine_polynomial().unwrap();
        let a7 = a7.unwrap();
        let want = std::f64::consts::PI / 6.0;
        assert!((a7.evaluate_plain(0.5) - want).abs() < 1e-4, "{}", a7.evaluate_plain(0.5));
        assert!((a7.evaluate_plain(0.5) - want).abs() > 1e-7, "truncated, not exact");
        // Against the ideal 2π·ε: the sine alone is off by (2πε)³/6, the corrected output by
        // the series' next term.
        for (d, depth) in [(3, 10), (7, 11)] {
            let cfg = EvalModConfig { arcsine_degree: d, ..plain };
            assert_eq!(cfg.depth(), depth);
            for i in [-7i32, 0, 5] {
                let eps = 2f64.powi(-5);
                let x = (i as f64 + eps) / plain.k;
                let ideal = 2.0 * std::f64::consts::PI * eps;
                let e0 = (plain.evaluate_plain(&p, x) - ideal).abs();
                let e1 = (cfg.evaluate_plain(&p, x) - ideal).abs();
                assert!(e0 > 1e-3 && e1 < e0 / 50.0, "d = {d}, I = {i}: {e0:e} -> {e1:e}");
            }
        }
        for bad in [2, 33] {
            let cfg = EvalModConfig { arcsine_degree: bad, ..plain };
            assert!(matches!(cfg.arcsine_polynomial(), Err(CircuitError::BadDegree(_))));
        }
    }

    #[test]
    fn the_interpolant_is_exact_at_the_integers() {
        let cfg = EvalModConfig::default();
        let p = cfg.polynomial().unwrap();
        for i in -11..=11 {
            let x = i as f64 / cfg.k;
            let y = cfg.evaluate_plain(&p, x);
            assert!(y.abs() < 5e-14, "I = {i}: {y:e}");
        }
        // Pinning does not spoil the error next to the integers.
        let unpinned = Chebyshev::interpolate(
            |x| (2.0 * std::f64::consts::PI * (cfg.k * x - 0.25) / 8.0).cos(),
            -1.0,
            1.0,
            cfg.degree,
        )
        .unwrap();
        let at = |p: &Chebyshev, x: f64| {
            let mut y = p.evaluate_plain(x);
            for _ in 0..3 {
                y = 2.0 * y * y - 1.0;
            }
            y
        };
        let before = (-11..=11).map(|i| at(&unpinned, i as f64 / cfg.k).abs()).fold(0.0, f64::max);
        assert!(before > 1e-13, "the plain interpolant is off at the integers: {before:e}");
        for i in -11..=11 {
            for j in [-4.0, -1.0, 1.0, 4.0] {
                let t = i as f64 + j * 2f64.powi(-10);
                let want = (2.0 * std::f64::consts::PI * t).sin();
                let (a, b) = (at(&p, t / cfg.k) - want, at(&unpinned, t / cfg.k) - want);
                assert!(a.abs() < 4.0 * b.abs().max(1e-13), "t = {t}: {a:e} vs {b:e}");
            }
        }
    }
}
