//! Activation approximations: composite sign and ReLU, and HELR's degree-3 sigmoid.
//!
//! # Algorithm
//! Sign on `[−1, −ε] ∪ [ε, 1]`, two options ([`SignApprox`]):
//! - `Composed { steps }`: compose `r` times the fixed odd polynomial
//!   `f_2(x) = (15x − 10x³ + 3x⁵)/8` (each step pushes values towards ±1; `f_2(±1) = ±1`,
//!   `f_2'(±1) = f_2''(±1) = 0`), each a depth-3 Chebyshev evaluation;
//! - `Minimax { degrees, eps }`: Lee et al.'s minimax composite ([`super::minimax::sign`]):
//!   each stage the Remez minimax odd polynomial for the interval the previous stage leaves,
//!   depth `Σ ⌈log2(d_i+1)⌉`.
//!
//! `ReLU(x) = x·(1 + sign(x))/2` adds one product.
//!
//! # Source
//! Cheon, Kim, Kim, "Efficient homomorphic comparison methods with optimal complexity",
//! ASIACRYPT 2020 (the `f_n` family); Lee, Lee, Kim, No, "Minimax approximation of sign
//! function by composite polynomial", EUROCRYPT 2021 (composites of low-degree odd
//! polynomials); HELR (Han et al., ePrint 2018/662) for
//! `σ3(x) ≈ 0.5 − 0.0843·x + 0.0002·x³` on `[−8, 8]` (the coefficients of a public port of
//! HELR's reference code; unverified against the HELR paper, and FAB gives none).
//!
//! # Cost
//! Sign: `3r` levels (composed) or `Σ ⌈log2(d_i+1)⌉` (minimax); ReLU: one more; sigmoid: 2.

use basalt_ckks::{Ciphertext, Evaluator};

use super::minimax::CompositeSign;
use super::{Chebyshev, evaluate};
use crate::error::Result;

/// Which sign approximation [`sign_with`] and [`relu_with`] evaluate.
#[derive(Clone, Debug, PartialEq)]
pub enum SignApprox {
    /// `steps` compositions of the fixed `f_2` (3 levels each).
    Composed { steps: usize },
    /// A minimax composite (build it with [`super::minimax::sign`]).
    Minimax(CompositeSign),
}

impl SignApprox {
    /// The stages, in the order applied.
    pub fn stages(&self) -> Vec<Chebyshev> {
        match self {
            SignApprox::Composed { steps } => vec![sign_step(); *steps],
            SignApprox::Minimax(c) => c.stages.clone(),
        }
    }
    /// Multiplicative depth of the sign.
    pub fn depth(&self) -> usize {
        self.stages().iter().map(Chebyshev::depth).sum()
    }
    /// Cleartext twin.
    pub fn evaluate_plain(&self, x: f64) -> f64 {
        self.stages().iter().fold(x, |v, p| p.evaluate_plain(v))
    }
}

/// `f_2(x) = (15x − 10x³ + 3x⁵)/8` in the Chebyshev basis of `[−1, 1]`.
pub fn sign_step() -> Chebyshev {
    Chebyshev::from_monomial(&[0.0, 15.0 / 8.0, 0.0, -10.0 / 8.0, 0.0, 3.0 / 8.0], -1.0, 1.0)
        .expect("fixed polynomial")
        .into_odd()
}

/// HELR's degree-3 sigmoid on `[−8, 8]`.
pub fn helr_sigmoid3() -> Chebyshev {
    Chebyshev::from_monomial(&[0.5, -0.0843, 0.0, 0.0002], -8.0, 8.0).expect("fixed polynomial")
}

/// Cleartext twin of [`sign`].
pub fn sign_plain(x: f64, steps: usize) -> f64 {
    let f = sign_step();
    (0..steps).fold(x, |v, _| f.evaluate_plain(v))
}

/// Composite sign of `ct` (values in `[−1, 1]`) with `steps` compositions.
///
/// # Errors
/// [`crate::CircuitError::NotEnoughLevels`] if fewer than `3·steps` levels are left.
pub fn sign(eval: &Evaluator, ct: &Ciphertext, steps: usize) -> Result<Ciphertext> {
    sign_with(eval, ct, &SignApprox::Composed { steps })
}

/// Sign of `ct` (values in `[−1, −ε] ∪ [ε, 1]`) with the chosen approximation.
///
/// # Errors
/// [`crate::CircuitError::NotEnoughLevels`] (before any work) if fewer than
/// [`SignApprox::depth`] levels are left.
pub fn sign_with(eval: &Evaluator, ct: &Ciphertext, approx: &SignApprox) -> Result<Ciphertext> {
    let stages = approx.stages();
    let total = approx.depth();
    let params = eval.params();
    let available =
        (ct.level() + 1).saturating_sub(params.base_primes()) / params.primes_per_rescale();
    if total > available {
        return Err(crate::CircuitError::NotEnoughLevels {
            needed: total,
            available,
            level: ct.level(),
        });
    }
    let mut x = ct.clone();
    for f in &stages {
        x = evaluate(eval, &x, f, None)?;
    }
    Ok(x)
}

/// `ReLU(x) = x·(1 + sign(x))/2` for values in `[−1, 1]`. The output scale is
/// `2·scale(x)²/q_l` (not forced back to `scale(x)`: that would cost one more level).
///
/// # Errors
/// As [`sign`], with one more level.
pub fn relu(eval: &Evaluator, ct: &Ciphertext, steps: usize) -> Result<Ciphertext> {
    relu_with(eval, ct, &SignApprox::Composed { steps })
}

/// [`relu`] with the chosen sign approximation (output scale `2·scale(x)²/q_l`).
///
/// # Errors
/// As [`sign_with`], with one more level.
pub fn relu_with(eval: &Evaluator, ct: &Ciphertext, approx: &SignApprox) -> Result<Ciphertext> {
    let s = sign_with(eval, ct, approx)?;
    // (1 + s)/2 at the scale of s, then times x (dropped to the same level), one rescale.
    let half = eval.add_const(&s, 1.0.into())?;
    let mut half = half;
    half.set_scale(half.scale() * 2.0);
    let x = eval.drop_level(ct, ct.level() - half.level())?;
    let prod = eval.mul_relin(&x, &half)?;
    Ok(eval.rescale(&prod)?)
}
