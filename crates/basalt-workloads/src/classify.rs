//! Encrypted classification with a [`Network`]: the client encrypts each image, the server
//! runs the network, the client decrypts the scores and takes the arg-max; the cleartext twin
//! ([`Network::evaluate_plain`], the same square activations and weights) gives the plaintext
//! prediction. Written with the libraries' public API only, as a user would.

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Complex64, Encoder, EvaluationKeys, Evaluator, KeyGenerator, Parameters, SecretKey,
};

use crate::network::{Model, Network, StrategyRule};
use crate::{CircuitError, Result};

/// Bytes of stored evaluation-key material (relinearisation and Galois keys).
pub fn key_bytes(keys: &EvaluationKeys) -> usize {
    keys.relin.as_ref().map_or(0, |r| r.key.size_bytes())
        + keys.galois.values().map(|g| g.key.size_bytes()).sum::<usize>()
}

/// Client keys and the server's prepared network.
pub struct Classifier {
    params: Parameters,
    model: Model,
    sk: SecretKey,
    enc: Encoder,
    eval: Evaluator,
    key_bytes: usize,
}

impl Classifier {
    /// Prepare `net` at `params` (weights encoded at the levels they are used) and generate
    /// the keys it needs: relinearisation and every rotation of [`Model::rotations`].
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] for a chain shorter than the network; a layer the
    /// packing cannot hold (more columns or padded rows than the slots).
    pub fn new(params: &Parameters, net: &Network, rule: StrategyRule) -> Result<Classifier> {
        let model = Model::prepare(params, net, rule, false)?;
        let rotations = model.rotations();
        Self::with_rotations(params, model, &rotations)
    }

    /// As [`Classifier::new`] with rotation keys for `rotations` only (a server that lacks
    /// some fails with the scheme's "missing rotation key" error when it needs one).
    ///
    /// # Errors
    /// As [`Classifier::new`].
    pub fn with_rotations(
        params: &Parameters,
        model: Model,
        rotations: &[i64],
    ) -> Result<Classifier> {
        let kg = KeyGenerator::new(params);
        let sk = kg.gen_secret_key();
        let keys = kg.gen_evaluation_keys(&sk, rotations, false, false);
        let key_bytes = key_bytes(&keys);
        let eval = Evaluator::new(params, keys)?;
        Ok(Classifier {
            params: params.clone(),
            model,
            sk,
            enc: Encoder::new(params),
            eval,
            key_bytes,
        })
    }

    /// Evaluation-key bytes the server holds.
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// Rotation steps the network uses.
    pub fn rotations(&self) -> Vec<i64> {
        self.model.rotations()
    }

    /// Encrypt the client's `inputs` (one vector per input ciphertext), evaluate, decrypt the
    /// first `outputs` slots.
    ///
    /// # Errors
    /// Too many values for the slots, missing keys, scheme errors.
    pub fn scores(&self, inputs: &[Vec<f64>], outputs: usize) -> Result<Vec<f64>> {
        let (slots, level) = (self.model.input_slots(), self.model.input_level());
        let cts = inputs
            .iter()
            .map(|x| {
                if x.len() > slots {
                    return Err(CircuitError::VectorLength { len: x.len(), cols: slots });
                }
                let z: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
                let pt = self.enc.encode(&z, slots, level, self.params.default_scale())?;
                Ok(encrypt_sk(&self.params, &pt, &self.sk)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let out = self.model.evaluate(&self.eval, &cts)?;
        let z = self.enc.decode(&decrypt(&self.params, &out, &self.sk)?)?;
        Ok(z.iter().take(outputs).map(|c| c.re).collect())
    }
}

/// Index of the largest score.
pub fn argmax(v: &[f64]) -> usize {
    v.iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |b, (i, &x)| if x > b.1 { (i, x) } else { b })
        .0
}

/// Scores over a test set: plaintext and encrypted accuracy, their agreement, and the worst
/// precision of the encrypted scores against the twin's (bits, Lattigo's convention).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub n: usize,
    pub plain_correct: usize,
    pub enc_correct: usize,
    pub agree: usize,
    pub min_bits: f64,
}

impl Tally {
    /// Count one image: its label, the twin's scores and the decrypted ones.
    pub fn add(&mut self, label: usize, plain: &[f64], enc: &[f64]) {
        let (p, e) = (argmax(plain), argmax(enc));
        if self.n == 0 {
            self.min_bits = f64::INFINITY;
        }
        self.n += 1;
        self.plain_correct += usize::from(p == label);
        self.enc_correct += usize::from(e == label);
        self.agree += usize::from(p == e);
        let err = plain.iter().zip(enc).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        self.min_bits = self.min_bits.min(-err.max(f64::MIN_POSITIVE).log2());
    }

    /// Fraction of `k` over the images.
    pub fn rate(&self, k: usize) -> f64 {
        if self.n == 0 { 0.0 } else { k as f64 / self.n as f64 }
    }
}

/// The dense layers' split for the workloads' runs: single hoisting, Lattigo's baby-step-centric
/// order, at most 16 giant steps.
pub const RULE: StrategyRule = StrategyRule {
    hoisting: basalt_circuits::lintrans::Hoisting::Single,
    gsc: false,
    max_partials: 16,
    of_limb: false,
};
