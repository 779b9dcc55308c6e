//! Polynomials in the Chebyshev basis on an interval `[a, b]`, their interpolation, and their
//! homomorphic evaluation ([`eval`]) with optimal depth and an exact output scale; activation
//! approximations in [`approx`].
//!
//! `p(x) = Σ_k c_k T_k(u)`, `u = (2x − a − b)/(b − a) ∈ [−1, 1]`.
//!
//! # Source
//! Trefethen, "Approximation Theory and Approximation Practice", ch. 3–4 (interpolation at
//! Chebyshev points); Bossuat et al., EUROCRYPT 2021, §4 (Chebyshev basis in CKKS).

pub mod approx;
pub mod eval;
pub mod minimax;

pub use eval::{PolyEvaluator, evaluate, evaluate_with, merged_rescales, with_merged_rescales};

use crate::error::{CircuitError, Result};

/// Highest supported degree.
pub const MAX_DEGREE: usize = 1024;

/// A polynomial in the Chebyshev basis of `[a, b]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chebyshev {
    pub a: f64,
    pub b: f64,
    pub coeffs: Vec<f64>,
}

/// Parity of a polynomial (only odd or only even `T_k` present).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parity {
    Odd,
    Even,
    None,
}

fn check_interval(a: f64, b: f64) -> Result<()> {
    if !(a.is_finite() && b.is_finite() && a < b) {
        return Err(CircuitError::BadInterval { a, b });
    }
    Ok(())
}

impl Chebyshev {
    /// From coefficients on `[a, b]` (trailing zeros dropped).
    ///
    /// # Errors
    /// [`CircuitError::BadInterval`], [`CircuitError::BadDegree`].
    pub fn new(a: f64, b: f64, mut coeffs: Vec<f64>) -> Result<Chebyshev> {
        check_interval(a, b)?;
        while coeffs.len() > 1 && coeffs.last() == Some(&0.0) {
            coeffs.pop();
        }
        if coeffs.is_empty() || coeffs.len() > MAX_DEGREE + 1 {
            return Err(CircuitError::BadDegree(coeffs.len().saturating_sub(1)));
        }
        Ok(Chebyshev { a, b, coeffs })
    }

    /// Interpolate `f` at the `d+1` Chebyshev points of the first kind of `[a, b]`.
    ///
    /// # Algorithm
    /// `x_j = cos(π(j + ½)/(d+1))`, `c_k = (2 − δ_{k0})/(d+1) · Σ_j f(x_j)·T_k(x_j)`
    /// (a discrete cosine transform; `O(d²)` here, `d ≤ 1024`).
    ///
    /// # Errors
    /// [`CircuitError::BadInterval`], [`CircuitError::BadDegree`] (`d = 0` or `d > 1024`).
    pub fn interpolate(f: impl Fn(f64) -> f64, a: f64, b: f64, degree: usize) -> Result<Chebyshev> {
        check_interval(a, b)?;
        if degree == 0 || degree > MAX_DEGREE {
            return Err(CircuitError::BadDegree(degree));
        }
        let m = degree + 1;
        let theta: Vec<f64> =
            (0..m).map(|j| std::f64::consts::PI * (j as f64 + 0.5) / m as f64).collect();
        let fx: Vec<f64> =
            theta.iter().map(|t| f(0.5 * (b - a) * t.cos() + 0.5 * (a + b))).collect();
        let coeffs = (0..m)
            .map(|k| {
                let s: f64 = theta.iter().zip(&fx).map(|(t, y)| y * (k as f64 * t).cos()).sum();
                s * if k == 0 { 1.0 } else { 2.0 } / m as f64
            })
            .collect();
        Chebyshev::new(a, b, coeffs)
    }

    /// The polynomial with monomial coefficients `mono` (`Σ mono_k x^k`) on `[a, b]`,
    /// converted exactly (interpolation at `deg+1` points reproduces a degree-`deg` polynomial).
    ///
    /// # Errors
    /// As [`Chebyshev::interpolate`].
    pub fn from_monomial(mono: &[f64], a: f64, b: f64) -> Result<Chebyshev> {
        let f = |x: f64| mono.iter().rev().fold(0.0, |acc, &c| acc * x + c);
        let mut p = Chebyshev::interpolate(f, a, b, mono.len().saturating_sub(1).max(1))?;
        let scale = p.coeffs.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        p.coeffs.iter_mut().for_each(|c| {
            if c.abs() < 1e-14 * scale {
                *c = 0.0;
            }
        });
        Chebyshev::new(a, b, p.coeffs)
    }

    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// Multiplicative depth of an optimal evaluation: `⌈log2(d+1)⌉`.
    pub fn depth(&self) -> usize {
        (usize::BITS - self.degree().leading_zeros()) as usize
    }

    /// Keep only the odd coefficients (for an odd `f` the even ones are rounding noise).
    pub fn into_odd(mut self) -> Chebyshev {
        self.coeffs.iter_mut().step_by(2).for_each(|c| *c = 0.0);
        self
    }
    /// Keep only the even coefficients.
    pub fn into_even(mut self) -> Chebyshev {
        self.coeffs.iter_mut().skip(1).step_by(2).for_each(|c| *c = 0.0);
        self
    }

    /// Which parity the coefficients have (exact zeros).
    pub fn parity(&self) -> Parity {
        let odd_zero = self.coeffs.iter().skip(1).step_by(2).all(|&c| c == 0.0);
        let even_zero = self.coeffs.iter().step_by(2).all(|&c| c == 0.0);
        match (even_zero, odd_zero) {
            (true, _) => Parity::Odd,
            (_, true) => Parity::Even,
            _ => Parity::None,
        }
    }

    /// `u` of `x`: the affine map of `[a, b]` onto `[−1, 1]`.
    pub fn to_unit(&self, x: f64) -> f64 {
        (2.0 * x - self.a - self.b) / (self.b - self.a)
    }

    /// Evaluate in the clear (Clenshaw's recurrence).
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        let u = self.to_unit(x);
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coeffs.iter().skip(1).rev() {
            let b0 = 2.0 * u * b1 - b2 + c;
            b2 = b1;
            b1 = b0;
        }
        u * b1 - b2 + self.coeffs[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_converges_and_depth_is_log() {
        let p = Chebyshev::interpolate(f64::exp, -2.0, 3.0, 20).unwrap();
        for i in 0..50 {
            let x = -2.0 + 5.0 * i as f64 / 49.0;
            assert!((p.evaluate_plain(x) - x.exp()).abs() < 1e-9, "x = {x}");
        }
        assert_eq!(p.depth(), 5);
        let q = Chebyshev::from_monomial(&[0.5, -0.0843, 0.0, 0.0002], -8.0, 8.0).unwrap();
        assert_eq!(q.depth(), 2);
        assert!((q.evaluate_plain(2.0) - (0.5 - 0.1686 + 0.0016)).abs() < 1e-12);
        assert_eq!(
            Chebyshev::from_monomial(&[0.0, 1.5, 0.0, -0.5], -1.0, 1.0).unwrap().parity(),
            Parity::Odd
        );
        assert_eq!(
            Chebyshev::interpolate(f64::sin, 1.0, 1.0, 3),
            Err(CircuitError::BadInterval { a: 1.0, b: 1.0 })
        );
    }
}
