//! Secret and error distributions of an LWE instance, reduced to what the attack models use:
//! a standard deviation (in the units of the modulus `q`), and for sparse secrets the Hamming
//! weight.
//!
//! The lattice estimator's `ND` module (Albrecht, Player, Scott, "On the concrete hardness of
//! Learning with Errors", J. Math. Cryptol. 2015, §2, and the estimator's documentation)
//! represents every distribution by its mean and standard deviation for the same reason: the
//! primal and dual attacks only see the Euclidean length of the secret and error vectors.

use std::fmt;

/// A distribution of the coefficients of an LWE secret or error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform over {−1, 0, 1} (the Homomorphic Encryption Standard's "ternary" secret).
    Ternary,
    /// Exactly `h` of the `n` coefficients are ±1, the others 0 (Lattigo's H192, Osiris).
    SparseTernary { h: usize },
    /// Uniform over {0, 1} (TFHE keys).
    Binary,
    /// Uniform modulo `q` (plain LWE secret; attacks use the normal form, see
    /// [`Distribution::log2_std_dev`]).
    UniformModQ,
    /// Rounded Gaussian of standard deviation `sigma`, in units of 1 (CKKS: σ = 3.2).
    Gaussian { sigma: f64 },
    /// TFHE-rs TUniform: integers in [−2^b, 2^b], the two ends with half the probability of the
    /// interior values. Variance (2^(2b+1) + 1)/6.
    TUniform { bound_log2: u32 },
}

impl Distribution {
    /// Standard deviation of one coefficient (log2 of it, so that `q = 2^1960` and
    /// `σ = q/√12` stay finite), for a vector of `n` coefficients modulo `2^log_q`.
    ///
    /// A binary secret is centred first (s − 1/2 has coefficients ±1/2: the attacker knows
    /// the shift), as the estimator does.
    pub fn log2_std_dev(&self, n: usize, log_q: f64) -> f64 {
        match *self {
            Distribution::Ternary => 0.5 * (2.0f64 / 3.0).log2(),
            Distribution::SparseTernary { h } => 0.5 * (h as f64 / n as f64).log2(),
            Distribution::Binary => -1.0,
            Distribution::UniformModQ => log_q - 0.5 * 12f64.log2(),
            Distribution::Gaussian { sigma } => sigma.log2(),
            Distribution::TUniform { bound_log2 } => {
                let b = bound_log2 as f64;
                // log2(sqrt((2^(2b+1) + 1)/6)) without overflow for large b.
                0.5 * ((2.0 * b + 1.0) + (1.0 + (-(2.0 * b + 1.0)).exp2()).log2() - 6f64.log2())
            }
        }
    }

    /// Hamming weight of a sparse secret of `n` coefficients (`None` if not sparse).
    pub fn hamming_weight(&self) -> Option<usize> {
        match *self {
            Distribution::SparseTernary { h } => Some(h),
            _ => None,
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Distribution::Ternary => write!(f, "ternary"),
            Distribution::SparseTernary { h } => write!(f, "sparse ternary h={h}"),
            Distribution::Binary => write!(f, "binary"),
            Distribution::UniformModQ => write!(f, "uniform mod q"),
            Distribution::Gaussian { sigma } => write!(f, "Gaussian σ={sigma}"),
            Distribution::TUniform { bound_log2 } => write!(f, "TUniform 2^{bound_log2}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_deviations() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(
            Distribution::Ternary.log2_std_dev(1024, 30.0).exp2(),
            (2.0f64 / 3.0).sqrt()
        ));
        assert!(close(Distribution::SparseTernary { h: 64 }.log2_std_dev(1024, 30.0), -2.0));
        assert!(close(Distribution::Binary.log2_std_dev(10, 30.0).exp2(), 0.5));
        assert!(close(Distribution::Gaussian { sigma: 3.2 }.log2_std_dev(10, 30.0).exp2(), 3.2));
        // TUniform b = 2: values −4..4, interior 1/8, ends 1/16: Var = (2·16 + 2·(1+4+9)/8·… )
        let b = 2u32;
        let mut var = 0.0;
        for x in -4i32..=4 {
            let p = if x.abs() == 4 { 1.0 / 16.0 } else { 1.0 / 8.0 };
            var += p * (x * x) as f64;
        }
        let got = Distribution::TUniform { bound_log2: b }.log2_std_dev(1, 64.0).exp2();
        assert!(close(got * got, var), "{got} vs {var}");
        // Uniform mod q: q/√12.
        assert!(close(
            Distribution::UniformModQ.log2_std_dev(1, 10.0).exp2(),
            1024.0 / 12f64.sqrt()
        ));
    }
}
