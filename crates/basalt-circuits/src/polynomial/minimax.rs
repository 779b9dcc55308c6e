//! Minimax odd approximations of `sign(x)` on `[−1, −ε] ∪ [ε, 1]` (Remez exchange) and their
//! composites, in the Chebyshev basis of `[−1, 1]` for the homomorphic evaluator.
//!
//! # Algorithm
//! *One polynomial.* An odd `p(x) = Σ_{k<m} c_k T_{2k+1}(x)` of degree `d = 2m − 1`
//! approximates `sign` on both halves iff it approximates `1` on `[ε, 1]`; the odd Chebyshev
//! polynomials form a Haar system there, so the best approximation is characterised by an
//! error `e = p − 1` equioscillating at `m + 1` points (Chebyshev's alternation theorem).
//! Remez exchange:
//! 1. reference `x_0 < … < x_m`: `x_i = √y_i` with `y_i` the Chebyshev extrema of `[ε², 1]`
//!    (odd polynomials are `x·q(x²)`);
//! 2. solve the `(m+1)×(m+1)` system `Σ_k c_k T_{2k+1}(x_i) + (−1)^i E = 1` (Gaussian
//!    elimination with partial pivoting; the Chebyshev basis keeps it well conditioned);
//! 3. locate the local extrema of `e` on a grid clustered like Chebyshev points towards both
//!    ends of `[ε, 1]`, refine each by golden-section search, merge runs of equal sign
//!    (keeping the largest), and drop the smaller end point until `m + 1` remain;
//! 4. repeat until the levelled error `|E|` and the true maximum agree to `1e−9` (relative)
//!    plus the absolute rounding of an f64 evaluation (`64·ε_mach·(1 + Σ|c_k|)`), or the error
//!    is below [`ERROR_FLOOR`] or that rounding. If fewer than `m + 1` alternating
//!    extrema are found (a poor reference), one-point exchange: the global maximum replaces
//!    the reference point of the same error sign next to it.
//!
//! *Composite* (Lee, Lee, Kim, No): `p_1` is the minimax polynomial on `[ε_1, 1]`, `ε_1 = ε`,
//! with error `E_1`, so `p_1([ε, 1]) ⊂ [1 − E_1, 1 + E_1]`. Dividing its coefficients by
//! `1 + E_1` maps that range into `[ε_2, 1]`, `ε_2 = (1 − E_1)/(1 + E_1)`, on which `p_2` is the
//! next minimax polynomial, and so on; the last stage is not normalised. The composite's
//! error on `[ε, 1]` is the last stage's `E_k` (plus rounding).
//!
//! # Source
//! E. Ya. Remez (1934); Trefethen, *Approximation Theory and Approximation Practice*, ch. 10;
//! Lee, Lee, Kim, No, "Minimax approximation of sign function by composite polynomial for
//! homomorphic comparison", IEEE TDSC 2021 / EUROCRYPT 2021 (composite construction).
//!
//! # Cost
//! Homomorphic depth `Σ_i ⌈log2(d_i + 1)⌉` (each stage on `[−1, 1]`, no interval map);
//! plaintext work `O(iterations · (m³ + grid·m))`, milliseconds for `d ≤ 63`.

use super::Chebyshev;
use crate::error::{CircuitError, Result};

/// Highest odd degree [`remez_sign`] accepts (f64 converges in ≤ 5 exchanges up to here for
/// ε from 2^−10 to 1/2; tested to 255).
pub const MAX_MINIMAX_DEGREE: usize = 255;

const MAX_ITERATIONS: usize = 500;

/// Errors below this are at the rounding level of an f64 evaluation; the exchange stops there.
pub const ERROR_FLOOR: f64 = 1e-13;

/// The minimax odd polynomial of one degree.
#[derive(Clone, Debug, PartialEq)]
pub struct MinimaxSign {
    /// `p` in the Chebyshev basis of `[−1, 1]` (odd).
    pub poly: Chebyshev,
    /// `max_{x ∈ [ε, 1]} |p(x) − 1|` (measured on the final grid).
    pub error: f64,
    /// The levelled error `|E|` of the last reference.
    pub levelled: f64,
    /// The final reference (alternation points).
    pub reference: Vec<f64>,
    pub eps: f64,
    pub iterations: usize,
}

/// `T_0 … T_n` at `x` (three-term recurrence).
fn chebyshev_values(x: f64, n: usize) -> Vec<f64> {
    let mut t = Vec::with_capacity(n + 1);
    t.push(1.0);
    if n >= 1 {
        t.push(x);
    }
    for k in 2..=n {
        let v = 2.0 * x * t[k - 1] - t[k - 2];
        t.push(v);
    }
    t
}

/// Solve `A·y = b` in place (partial pivoting). `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in col + 1..n {
            let f = a[r][col] / a[col][col];
            if f != 0.0 {
                let (top, rest) = a.split_at_mut(r);
                for (x, p) in rest[0][col..].iter_mut().zip(&top[col][col..]) {
                    *x -= f * p;
                }
                b[r] -= f * b[col];
            }
        }
    }
    let mut y = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r][c] * y[c]).sum();
        y[r] = (b[r] - s) / a[r][r];
    }
    y.iter().all(|v| v.is_finite()).then_some(y)
}

fn odd_eval(c: &[f64], x: f64) -> f64 {
    let t = chebyshev_values(x, 2 * c.len());
    c.iter().enumerate().map(|(k, ck)| ck * t[2 * k + 1]).sum()
}

/// Local extrema of `e` on `[lo, hi]` (end points included), refined, as `(x, e(x))`.
fn extrema(e: &dyn Fn(f64) -> f64, lo: f64, hi: f64, m: usize) -> Vec<(f64, f64)> {
    let n = 200 + 60 * m;
    // Chebyshev-like clustering towards both ends, where the alternation points crowd.
    let xs: Vec<f64> = (0..=n)
        .map(|i| {
            let t = std::f64::consts::PI * i as f64 / n as f64;
            lo + (hi - lo) * (1.0 - t.cos()) / 2.0
        })
        .collect();
    let ys: Vec<f64> = xs.iter().map(|&x| e(x)).collect();
    let mut out = Vec::new();
    let is_ext = |i: usize| {
        let y = ys[i];
        let l = if i == 0 { None } else { Some(ys[i - 1]) };
        let r = ys.get(i + 1).copied();
        let ge = |o: Option<f64>| o.is_none_or(|v| y.abs() >= v.abs() || y.signum() != v.signum());
        ge(l) && ge(r)
    };
    for i in 0..=n {
        if !is_ext(i) {
            continue;
        }
        if i == 0 || i == n {
            out.push((xs[i], ys[i]));
            continue;
        }
        // Golden-section search for the extremum of s·e on [x_{i−1}, x_{i+1}].
        let s = ys[i].signum();
        let (mut a, mut b) = (xs[i - 1], xs[i + 1]);
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
        let (mut fc, mut fd) = (s * e(c), s * e(d));
        for _ in 0..60 {
            if fc > fd {
                b = d;
                d = c;
                fd = fc;
                c = b - g * (b - a);
                fc = s * e(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + g * (b - a);
                fd = s * e(d);
            }
        }
        let x = 0.5 * (a + b);
        let y = e(x);
        let (x, y) = if y.abs() >= ys[i].abs() { (x, y) } else { (xs[i], ys[i]) };
        out.push((x, y));
    }
    out
}

/// The minimax odd polynomial of odd `degree` for `sign` on `[−1, −eps] ∪ [eps, 1]`.
///
/// # Errors
/// [`CircuitError::BadDegree`] unless `degree` is odd and in `1..=255`;
/// [`CircuitError::Invalid`] unless `0 < eps < 1`, or if the exchange breaks down numerically
/// (fewer alternation points than needed, a singular system).
pub fn remez_sign(degree: usize, eps: f64) -> Result<MinimaxSign> {
    if degree.is_multiple_of(2) || degree > MAX_MINIMAX_DEGREE {
        return Err(CircuitError::BadDegree(degree));
    }
    if !(eps > 0.0 && eps < 1.0) {
        return Err(CircuitError::Invalid(format!("eps = {eps} must be in (0, 1)")));
    }
    let m = degree.div_ceil(2);
    // Odd polynomials on [ε, 1] are x times polynomials in y = x²: start from the Chebyshev
    // extrema of [ε², 1] in y, which keeps the first reference system well conditioned (the
    // extrema of [ε, 1] in x make degree ≥ 127 diverge).
    let e2 = eps * eps;
    let mut refs: Vec<f64> = (0..=m)
        .map(|i| {
            let t = std::f64::consts::PI * i as f64 / m as f64;
            (e2 + (1.0 - e2) * (1.0 - t.cos()) / 2.0).sqrt()
        })
        .collect();
    let mut coeffs = vec![0.0; m];
    let mut levelled = 0.0;
    let mut error = f64::INFINITY;
    let mut iterations = 0;
    for it in 1..=MAX_ITERATIONS {
        iterations = it;
        let a: Vec<Vec<f64>> = refs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let t = chebyshev_values(x, degree);
                let mut row: Vec<f64> = (0..m).map(|k| t[2 * k + 1]).collect();
                row.push(if i.is_multiple_of(2) { 1.0 } else { -1.0 });
                row
            })
            .collect();
        let y = solve(a, vec![1.0; m + 1])
            .ok_or_else(|| CircuitError::Invalid("Remez: singular reference system".into()))?;
        coeffs.copy_from_slice(&y[..m]);
        levelled = y[m].abs();
        let c = coeffs.clone();
        let e = move |x: f64| odd_eval(&c, x) - 1.0;
        let mut ext = extrema(&e, eps, 1.0, m);
        // Merge runs of equal sign, keeping the largest |e|.
        let mut alt: Vec<(f64, f64)> = Vec::new();
        for p in ext.drain(..) {
            match alt.last_mut() {
                Some(q) if q.1.signum() == p.1.signum() => {
                    if p.1.abs() > q.1.abs() {
                        *q = p;
                    }
                }
                _ => alt.push(p),
            }
        }
        while alt.len() > m + 1 {
            if alt[0].1.abs() < alt[alt.len() - 1].1.abs() {
                alt.remove(0);
            } else {
                alt.pop();
            }
        }
        error = alt.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
        // Absolute rounding of an f64 evaluation of p (a sum of m terms of size |c_k|).
        let rounding = 64.0 * f64::EPSILON * (1.0 + coeffs.iter().map(|c| c.abs()).sum::<f64>());
        if error <= ERROR_FLOOR.max(rounding) || error - levelled <= 1e-9 * error + rounding {
            // Levelled, or at the f64 rounding of the evaluation (a late composite stage on a
            // domain [1 − δ, 1]): nothing left to exchange.
            break;
        }
        if alt.len() == m + 1 {
            refs = alt.iter().map(|p| p.0).collect();
        } else {
            // Too few alternating extrema (a poor reference far from the solution): fall back
            // to the one-point exchange, which keeps the alternation and always makes progress.
            let &(xs, es) = alt
                .iter()
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .ok_or_else(|| CircuitError::Invalid("Remez: no extremum found".into()))?;
            // e(x_i) = −(−1)^i·E on the reference.
            let sign_at =
                |i: usize| if i.is_multiple_of(2) { -y[m].signum() } else { y[m].signum() };
            let pos = refs.partition_point(|&r| r < xs);
            if pos == 0 {
                if sign_at(0) == es.signum() {
                    refs[0] = xs;
                } else {
                    refs.pop();
                    refs.insert(0, xs);
                }
            } else if pos == refs.len() {
                if sign_at(m) == es.signum() {
                    refs[m] = xs;
                } else {
                    refs.remove(0);
                    refs.push(xs);
                }
            } else if sign_at(pos - 1) == es.signum() {
                refs[pos - 1] = xs;
            } else {
                refs[pos] = xs;
            }
        }
        if refs.windows(2).any(|w| w[0] >= w[1]) {
            return Err(CircuitError::Invalid(format!(
                "Remez: the reference of degree {degree} on [{eps}, 1] collapsed"
            )));
        }
        if it == MAX_ITERATIONS {
            return Err(CircuitError::Invalid(format!(
                "Remez: no convergence for degree {degree} on [{eps}, 1] (error {error:e}, levelled {levelled:e})"
            )));
        }
    }
    let mut full = vec![0.0; degree + 1];
    for (k, c) in coeffs.iter().enumerate() {
        full[2 * k + 1] = *c;
    }
    Ok(MinimaxSign {
        poly: Chebyshev::new(-1.0, 1.0, full)?,
        error,
        levelled,
        reference: refs,
        eps,
        iterations,
    })
}

/// A composite of minimax stages approximating `sign` on `[−1, −ε] ∪ [ε, 1]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositeSign {
    /// Stages in the order applied, each in the Chebyshev basis of `[−1, 1]` (all but the
    /// last normalised to map `[ε_i, 1]` into `[ε_{i+1}, 1]`).
    pub stages: Vec<Chebyshev>,
    /// `ε_i` of each stage's domain.
    pub domains: Vec<f64>,
    /// Minimax error `E_i` of each stage on its domain (before normalisation).
    pub stage_errors: Vec<f64>,
    pub eps: f64,
}

impl CompositeSign {
    /// Multiplicative depth: `Σ ⌈log2(d_i + 1)⌉`.
    pub fn depth(&self) -> usize {
        self.stages.iter().map(Chebyshev::depth).sum()
    }
    /// Predicted error on `[ε, 1]`: the last stage's minimax error.
    pub fn error(&self) -> f64 {
        *self.stage_errors.last().expect("at least one stage")
    }
    /// Cleartext twin.
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        self.stages.iter().fold(x, |v, p| p.evaluate_plain(v))
    }
    pub fn degrees(&self) -> Vec<usize> {
        self.stages.iter().map(Chebyshev::degree).collect()
    }
}

/// Minimax composite sign with the given odd stage degrees on `[−1, −eps] ∪ [eps, 1]`.
///
/// # Errors
/// As [`remez_sign`]; [`CircuitError::Invalid`] for no degree.
pub fn sign(degrees: &[usize], eps: f64) -> Result<CompositeSign> {
    if degrees.is_empty() {
        return Err(CircuitError::Invalid("a composite sign needs at least one degree".into()));
    }
    let mut stages = Vec::new();
    let mut domains = Vec::new();
    let mut stage_errors = Vec::new();
    let mut e = eps;
    for (i, &d) in degrees.iter().enumerate() {
        let mm = remez_sign(d, e)?;
        domains.push(e);
        stage_errors.push(mm.error);
        let mut p = mm.poly;
        if i + 1 < degrees.len() {
            let s = 1.0 + mm.error;
            p.coeffs.iter_mut().for_each(|c| *c /= s);
            e = (1.0 - mm.error) / s;
            if !(e > 0.0 && e < 1.0) {
                return Err(CircuitError::Invalid(format!(
                    "stage {} (degree {d}) does not separate the signs on [{e}, 1]: error {}",
                    i + 1,
                    mm.error
                )));
            }
        }
        stages.push(p);
    }
    Ok(CompositeSign { stages, domains, stage_errors, eps })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degree_one_and_three_match_closed_forms() {
        // Degree 1: p = c·x levels 1 − cε and c − 1, so c = 2/(1+ε), E = (1−ε)/(1+ε).
        let eps = 0.1;
        let p = remez_sign(1, eps).unwrap();
        let c = 2.0 / (1.0 + eps);
        assert!((p.poly.coeffs[1] - c).abs() < 1e-9, "{:?}", p.poly.coeffs);
        assert!((p.error - (1.0 - eps) / (1.0 + eps)).abs() < 1e-9);
        let p3 = remez_sign(3, eps).unwrap();
        assert!(p3.error < p.error);
        assert!(remez_sign(4, eps).is_err());
        assert!(remez_sign(3, 0.0).is_err());
        assert!(remez_sign(3, 1.5).is_err());
    }
}
