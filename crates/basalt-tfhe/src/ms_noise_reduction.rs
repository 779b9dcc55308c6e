//! Modulus-switch noise reduction ("drift technique"): before the modulus switch to `Z_{2N}`,
//! add to the ciphertext one public encryption of zero chosen so that the rounding error of the
//! switch is small, without knowing the key.
//!
//! # Why
//! On TFHE-rs's 2+2-bit set the modulus switch is by far the largest noise at the blind-rotation
//! input: `(1 + n/2)/(12·(2N)²)`, half of it from the key-*independent* mean of the rounding
//! error. For a binary key `s_i ∈ {0, 1}` with `E[s_i] = 1/2`, the rounding errors
//! `e_i = round(a_i) − a_i` (mask) and `e_b` (body) are public, and the switched phase is the
//! true phase plus `e_b − Σ e_i s_i`. Seen from the server (key unknown, uniform), that error has
//! mean `E = e_b − Σ e_i / 2` and variance `Σ e_i² / 4`. Adding an encryption of zero changes
//! the mask and body, hence every `e_i`, but not the message: the server can try candidates
//! until the *measure* `|E| + r·sqrt(Σ e_i²/4 + V_in)` is at most a bound `B` (the half-width of a
//! message box), so that a phase leaves its box only with probability about `2·Q(r)`.
//!
//! # Algorithm
//! Keep the ciphertext itself if its measure is within the bound; otherwise try the encryptions
//! of zero in order, stop at the first whose sum satisfies the bound, and if none does add the
//! one with the smallest measure. The noise of the added zero is that of a fresh small-key
//! encryption; the choice never reads the secret key, so the key bits stay uniform given it.
//!
//! # Source
//! Bernard, Joye, Smart, Walter, "Drifting Towards Better Error Probabilities in Fully
//! Homomorphic Encryption Schemes", IACR ePrint 2024/1718; TFHE-rs
//! (`core_crypto::algorithms::modulus_switch_noise_reduction`, parameters
//! `ModulusSwitchNoiseReductionParams { modulus_switch_zeros_count, ms_bound, ms_r_sigma_factor,
//! ms_input_variance }` of its V1 default sets). Written here from the description; the
//! failure-probability model of the technique is in [`crate::noise`].

use serde::{Deserialize, Serialize};

use crate::lwe::LweSecretKey;
use crate::params::{MsNoiseReductionParams, NoiseDistribution};
use crate::random::Csprng;
use crate::torus::Torus;

/// Public encryptions of zero under the small LWE key plus the selection parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct MsNoiseReductionKey<T: Torus> {
    pub(crate) lwe_dim: usize,
    pub(crate) zeros: Vec<T>,
    pub(crate) params: MsNoiseReductionParams,
}

/// Which candidate [`MsNoiseReductionKey::improve`] kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    /// The ciphertext already satisfied the bound.
    NoAddition,
    /// Encryption of zero number `index` was added.
    Zero { index: usize },
}

/// Outcome of a selection: the candidate and whether it satisfied the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub candidate: Candidate,
    pub within_bound: bool,
    /// Measures computed (1 for the ciphertext itself plus one per zero tried).
    pub checks: usize,
}

/// Signed rounding error of switching `a` to `2^log2_2n` and back, as a torus fraction.
#[inline(always)]
fn round_error<T: Torus>(a: T, log2_2n: u32) -> f64 {
    let shift = T::BITS - log2_2n;
    let rounded = T::from_u64(crate::modswitch::mod_switch(a, log2_2n) as u64).shl(shift);
    let e = rounded.wsub(a).to_signed() as f64;
    e * (-(T::BITS as f64)).exp2()
}

/// The measure `|E| + r·sqrt(Σe²/4 + V_in)` of `mask + add_mask`, `body + add_body` (torus units).
fn measure<T: Torus>(
    mask: &[T],
    body: T,
    add: Option<&[T]>,
    log2_2n: u32,
    p: &MsNoiseReductionParams,
) -> f64 {
    let (mut sum, mut sum2) = (0.0f64, 0.0f64);
    let mut body = body;
    match add {
        None => {
            for &a in mask {
                let e = round_error(a, log2_2n);
                sum += e;
                sum2 += e * e;
            }
        }
        Some(z) => {
            let n = mask.len();
            for (&a, &b) in mask.iter().zip(&z[..n]) {
                let e = round_error(a.wadd(b), log2_2n);
                sum += e;
                sum2 += e * e;
            }
            body = body.wadd(z[n]);
        }
    }
    let expectancy = round_error(body, log2_2n) - sum / 2.0;
    expectancy.abs() + p.ms_r_sigma_factor * (sum2 / 4.0 + p.ms_input_variance).sqrt()
}

impl<T: Torus> MsNoiseReductionKey<T> {
    /// `params.modulus_switch_zeros_count` fresh encryptions of zero under `sk` (the key the
    /// blind rotation's input is under), with the small key's noise.
    pub fn generate(
        sk: &LweSecretKey<T>,
        params: MsNoiseReductionParams,
        noise: NoiseDistribution,
        rng: &mut Csprng,
    ) -> Self {
        let n = sk.dimension();
        let mut zeros = Vec::with_capacity(params.modulus_switch_zeros_count * (n + 1));
        for _ in 0..params.modulus_switch_zeros_count {
            zeros.extend_from_slice(sk.encrypt(T::ZERO, noise, rng).as_slice());
        }
        MsNoiseReductionKey { lwe_dim: n, zeros, params }
    }

    pub fn params(&self) -> &MsNoiseReductionParams {
        &self.params
    }

    /// Dimension of the ciphertexts it applies to.
    pub fn lwe_dimension(&self) -> usize {
        self.lwe_dim
    }

    /// Number of encryptions of zero.
    pub fn count(&self) -> usize {
        if self.lwe_dim == 0 { 0 } else { self.zeros.len() / (self.lwe_dim + 1) }
    }

    pub fn size_bytes(&self) -> usize {
        self.zeros.len() * std::mem::size_of::<T>()
    }

    fn zero(&self, i: usize) -> &[T] {
        let w = self.lwe_dim + 1;
        &self.zeros[i * w..(i + 1) * w]
    }

    /// Choose the candidate for `lwe` (`n + 1` words) before a switch to `2·poly_size`.
    pub fn choose(&self, lwe: &[T], poly_size: usize) -> Selection {
        assert_eq!(lwe.len(), self.lwe_dim + 1, "ciphertext dimension");
        let l = (2 * poly_size).trailing_zeros();
        let (mask, body) = (&lwe[..self.lwe_dim], lwe[self.lwe_dim]);
        let bound = self.params.ms_bound;
        let base = measure(mask, body, None, l, &self.params);
        if base <= bound {
            return Selection { candidate: Candidate::NoAddition, within_bound: true, checks: 1 };
        }
        let (mut best, mut best_measure) = (Candidate::NoAddition, base);
        for i in 0..self.count() {
            let m = measure(mask, body, Some(self.zero(i)), l, &self.params);
            if m < best_measure {
                best_measure = m;
                best = Candidate::Zero { index: i };
            }
            if m <= bound {
                return Selection { candidate: best, within_bound: true, checks: i + 2 };
            }
        }
        Selection { candidate: best, within_bound: false, checks: self.count() + 1 }
    }

    /// Apply the selection to `lwe` in place (its message and key are unchanged).
    pub fn improve(&self, lwe: &mut [T], poly_size: usize) -> Selection {
        let sel = self.choose(lwe, poly_size);
        if let Candidate::Zero { index } = sel.candidate {
            for (x, &z) in lwe.iter_mut().zip(self.zero(index)) {
                *x = x.wadd(z);
            }
        }
        sel
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modswitch::mod_switch_lwe;
    use crate::torus::to_real;

    fn setup(
        n: usize,
        count: usize,
        r: f64,
        bound: f64,
    ) -> (LweSecretKey<u64>, MsNoiseReductionKey<u64>, Csprng) {
        let mut rng = Csprng::from_seed(77);
        let sk = LweSecretKey::<u64>::generate(n, &mut rng);
        let p = MsNoiseReductionParams {
            modulus_switch_zeros_count: count,
            ms_bound: bound,
            ms_r_sigma_factor: r,
            ms_input_variance: 0.0,
        };
        let noise = NoiseDistribution::TUniform { bound_log2: 40 };
        let key = MsNoiseReductionKey::generate(&sk, p, noise, &mut rng);
        (sk, key, rng)
    }

    /// Phase error (torus) of the switched ciphertext, computed with the key.
    fn ms_error(sk: &LweSecretKey<u64>, ct: &[u64], mu: u64, poly: usize) -> f64 {
        let mut ms = Vec::new();
        mod_switch_lwe(ct, poly, &mut ms);
        let two_n = 2 * poly as i64;
        let n = sk.dimension();
        let dot: i64 = ms[..n].iter().zip(sk.as_slice()).map(|(&a, &s)| a as i64 * s as i64).sum();
        let ph = ms[n] as i64 - dot;
        let ph = ph.rem_euclid(two_n) as f64 / two_n as f64;
        let e = ph - to_real(mu);
        e - e.round()
    }

    /// The reduction keeps the message and, over many ciphertexts, removes the mean part of the
    /// switching error: its variance drops from `(1 + n/2)/(12·(2N)²)` towards `n/(48·(2N)²)`.
    #[test]
    fn reduction_keeps_the_message_and_shrinks_the_switching_error() {
        let (n, poly) = (256, 512);
        let s = 1.0 / (2 * poly) as f64;
        // Bound a little above r·σ at the typical Σe²/4 = n s²/48: a few candidates each.
        let r = 3.0;
        let sigma_e = (s * s * (1.0 + n as f64 / 4.0) / 12.0).sqrt();
        let bound = r * (n as f64 * s * s / 48.0).sqrt() + 0.5 * sigma_e;
        let (sk, key, mut rng) = setup(n, 64, r, bound);
        let model = crate::noise::drift_model(n, 2 * poly, 0.25, 0.0, key.params());
        let noise = NoiseDistribution::TUniform { bound_log2: 40 };
        let (mut v_plain, mut v_red, mut checks, mut within) = (0.0, 0.0, 0, 0);
        let trials = 3000;
        for t in 0..trials {
            let mu = (t as u64 % 8) << 60;
            let ct = sk.encrypt(mu, noise, &mut rng);
            let mut red = ct.as_slice().to_vec();
            let sel = key.improve(&mut red, poly);
            checks += sel.checks;
            within += sel.within_bound as usize;
            // Same message under the same key, tiny extra noise.
            let d = to_real(sk.phase(&crate::lwe::LweCiphertext::from_vec(red.clone())).wsub(mu));
            assert!(d.abs() < 1e-6, "message changed: {d}");
            v_plain += ms_error(&sk, ct.as_slice(), mu, poly).powi(2);
            v_red += ms_error(&sk, &red, mu, poly).powi(2);
        }
        let (v_plain, v_red) = (v_plain / trials as f64, v_red / trials as f64);
        let model_plain = (1.0 + n as f64 / 2.0) * s * s / 12.0;
        let mean_checks = checks as f64 / trials as f64;
        eprintln!(
            "plain {v_plain:e} (model {model_plain:e}), reduced {v_red:e} (model {:e}), \
             checks {mean_checks:.2} (model {:.2}), within {within}",
            model.reduced_modswitch_var, model.expected_checks
        );
        assert!((0.9..1.1).contains(&(v_plain / model_plain)));
        assert!(v_red < 0.75 * v_plain, "reduced {v_red:e} plain {v_plain:e}");
        assert!((0.85..1.15).contains(&(v_red / model.reduced_modswitch_var)));
        assert!((0.85..1.15).contains(&(mean_checks / model.expected_checks)));
        assert_eq!(within, trials);
    }

    #[test]
    fn a_ciphertext_within_the_bound_is_left_alone() {
        let (sk, key, mut rng) = setup(64, 4, 1.0, 0.49);
        let ct = sk.encrypt(1u64 << 62, NoiseDistribution::TUniform { bound_log2: 40 }, &mut rng);
        let mut c = ct.as_slice().to_vec();
        let sel = key.improve(&mut c, 256);
        assert_eq!(sel.candidate, Candidate::NoAddition);
        assert_eq!(c, ct.as_slice());
    }
}
