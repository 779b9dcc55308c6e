//! Shared set-up for tests, examples and the benchmark suite: keys, encryption, decryption and
//! precision in bits (Lattigo's convention: `−log2` of the largest absolute error).
//!
//! Toy parameter sets here are insecure (small rings) and only for tests.

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Ciphertext, Encoder, Evaluator, KeyGenerator, Parameters, ParametersLiteral, SecretKey,
};
use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::error::Result;

/// Keys, encoder and evaluator for one parameter set.
pub struct Ctx {
    pub params: Parameters,
    pub enc: Encoder,
    pub sk: SecretKey,
    pub eval: Evaluator,
}

/// Insecure toy set: `N = 2^log_n`, a 60-bit `q_0`, `levels` primes of `log_scale` bits,
/// `dnum` digits and as many 61-bit special primes as a digit has limbs (so that `P` exceeds
/// every digit), default scale `2^log_scale`.
pub fn toy_params(log_n: u32, levels: usize, log_scale: u32, dnum: usize) -> Parameters {
    let k = (levels + 1).div_ceil(dnum.max(1));
    let mut lit = ParametersLiteral::toy(log_n, 60, log_scale, levels, 61, k, dnum);
    lit.log_default_scale = log_scale as f64;
    Parameters::new(lit).expect("toy parameters are valid")
}

/// Insecure toy set with Lattigo's bootstrapping chain shape: a 60-bit `q_0`, `residual`
/// 40-bit levels, `stc` 39-bit SlotToCoeff, 8 60-bit EvalMod and `cts` 56-bit CoeffToSlot
/// primes, three 61-bit special primes, default scale 2^40.
pub fn toy_bootstrap_params(
    log_n: u32,
    residual: usize,
    stc: usize,
    cts: usize,
    secret: basalt_ckks::SecretDistribution,
) -> Parameters {
    toy_bootstrap_params_with(log_n, residual, stc, 8, cts, secret)
}

/// [`toy_bootstrap_params`] with `evalmod` EvalMod levels (e.g. 8 + an arcsine's depth).
pub fn toy_bootstrap_params_with(
    log_n: u32,
    residual: usize,
    stc: usize,
    evalmod: usize,
    cts: usize,
    secret: basalt_ckks::SecretDistribution,
) -> Parameters {
    let mut log_q = vec![60];
    log_q.extend(std::iter::repeat_n(40, residual));
    log_q.extend(std::iter::repeat_n(39, stc));
    log_q.extend(std::iter::repeat_n(60, evalmod));
    log_q.extend(std::iter::repeat_n(56, cts));
    let mut lit = ParametersLiteral::toy(log_n, 60, 40, 1, 61, 3, 1);
    lit.name = format!("TOY_BTP_N{log_n}");
    lit.dnum = Some(log_q.len().div_ceil(3));
    lit.log_q = log_q;
    lit.secret = secret;
    lit.log_default_scale = 40.0;
    Parameters::new(lit).expect("toy bootstrapping parameters are valid")
}

impl Ctx {
    /// Generate a secret key, the relinearization key and keys for `rotations`.
    pub fn new(params: &Parameters, rotations: &[i64]) -> Result<Ctx> {
        Self::with_keys(params, rotations, false)
    }

    /// As [`Ctx::new`]; `seeded` stores only the seed and `b` half of every key (half the
    /// memory; the `a` halves are regenerated at each use).
    pub fn with_keys(params: &Parameters, rotations: &[i64], seeded: bool) -> Result<Ctx> {
        let kg = KeyGenerator::new(params);
        let sk = kg.gen_secret_key();
        let keys = kg.gen_evaluation_keys(&sk, rotations, false, seeded);
        let eval = Evaluator::new(params, keys)?;
        Ok(Ctx { params: params.clone(), enc: Encoder::new(params), sk, eval })
    }

    /// Encrypt `values` into `slots` slots at `level` with the default scale.
    pub fn encrypt(&self, values: &[Complex64], slots: usize, level: usize) -> Result<Ciphertext> {
        let pt = self.enc.encode(values, slots, level, self.params.default_scale())?;
        Ok(encrypt_sk(&self.params, &pt, &self.sk)?)
    }

    /// Encrypt real values.
    pub fn encrypt_real(&self, values: &[f64], slots: usize, level: usize) -> Result<Ciphertext> {
        let v: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encrypt(&v, slots, level)
    }

    /// Decrypt and decode all slots.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Vec<Complex64>> {
        Ok(self.enc.decode(&decrypt(&self.params, ct, &self.sk)?)?)
    }
}

/// Uniform complex values in `[−1, 1]²` (real only if `real`), reproducible from `seed`.
pub fn random_values(n: usize, seed: u64, real: bool) -> Vec<Complex64> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let re = rng.random_range(-1.0..1.0);
            let im = if real { 0.0 } else { rng.random_range(-1.0..1.0) };
            Complex64::new(re, im)
        })
        .collect()
}

/// Uniform real matrix in `[−a, a]`, reproducible from `seed`.
pub fn random_matrix(rows: usize, cols: usize, a: f64, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..rows).map(|_| (0..cols).map(|_| rng.random_range(-a..a)).collect()).collect()
}

/// Minimum precision in bits: `−log2(max_t |want_t − have_t|)` over the common length.
pub fn precision_bits(want: &[Complex64], have: &[Complex64]) -> f64 {
    let e = want.iter().zip(have).map(|(a, b)| (a - b).norm()).fold(0.0f64, f64::max);
    -(e.max(f64::MIN_POSITIVE)).log2()
}

/// Real-valued [`precision_bits`].
pub fn precision_bits_real(want: &[f64], have: &[f64]) -> f64 {
    let e = want.iter().zip(have).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
    -(e.max(f64::MIN_POSITIVE)).log2()
}

/// A shape-only ciphertext with `ct`'s level, slots and scale: what trace mode runs on, for
/// tests that compare a real run's trace with a symbolic one.
///
/// # Errors
/// A level above the parameters' top.
pub fn symbolic_like(params: &Parameters, ct: &Ciphertext) -> Result<Ciphertext> {
    let mut sym = Ciphertext::symbolic(params, ct.level())?;
    sym.set_slots(ct.slots());
    sym.set_scale(ct.scale());
    Ok(sym)
}
