//! HELR training under encryption on real data: digits 3-vs-8 (FAB §7's MNIST 3-vs-8 task on
//! scikit-learn's bundled digits), FAB's packing adapted to the data, the degree-3 sigmoid,
//! a bootstrap of both NAG vectors whenever the levels run out ([`crate::logreg`]).
//!
//! # Data
//! The training split's 3s and 8s (275 images), each resized ([`crate::digits::to14`], 14×14 =
//! FAB's 196 features; [`crate::digits::to4`] on the toy ring), centred by the training mean
//! (the client's preprocessing, as HELR standardises), a constant 1 appended (the bias), label
//! `y = +1` for a 3 and `−1` for an 8 folded in (`z = y·x`), zero-padded to the block.
//!
//! # Packing (FAB §7, HELR)
//! A ciphertext holds `2^log_samples` samples of `2^log_features` slots (at N = 2^16: 128
//! samples of 256 = 196 + 1 padded); the last ciphertext of the set is zero-padded, and a
//! zero sample adds nothing to the gradient. FAB's mini-batch is 1,024 of MNIST's 11,982
//! images; digits has 275, so a mini-batch here is 2 ciphertexts (256 samples; 32 on the toy
//! ring) and the iterations cycle over the set. The paper's 30 iterations; the toy run does 10.
//!
//! # Result
//! The client decrypts `w` and classifies the test split's 3s and 8s (`w·x > 0` → 3); the
//! cleartext twin ([`LogReg::train_plain`], the same sigmoid, batches and constants) gives the
//! plaintext-trained model.

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, Encapsulation};
use basalt_circuits::helr::Helr;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Ciphertext, Complex64, Encoder, Evaluator, KeyGenerator, Parameters, SecretKey};

use crate::classify::key_bytes;
use crate::digits::{Digit, Digits};
use crate::logreg::{Iteration, LogReg};
use crate::{CircuitError, Result};

/// Labelled samples: features (one block) and the label ±1.
pub type Samples = Vec<(Vec<f64>, f64)>;

/// One training task: the shape, the resizing and the iteration count.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    pub lr: LogReg,
    pub iterations: usize,
    /// Image side after resizing (14 or 4).
    pub side: usize,
}

impl Task {
    /// FAB's shape at `slots` = 2^15: 14×14 images (256-slot blocks, 128 samples per
    /// ciphertext), 2 ciphertexts per mini-batch, 30 iterations, `γ = 1 / batch`.
    pub fn fab() -> Task {
        let helr = Helr { log_features: 8, log_samples: 7, gamma: 1.0 / 256.0, ..Helr::fab() };
        Task { lr: LogReg { helr, cts: 2 }, iterations: 30, side: 14 }
    }

    /// The toy run: 4×4 images (32-slot blocks, 16 samples per 512-slot ciphertext), 2
    /// ciphertexts per mini-batch, 10 iterations, `γ = 2 / batch`.
    pub fn quick() -> Task {
        let helr = Helr { log_features: 5, log_samples: 4, gamma: 2.0 / 32.0, ..Helr::fab() };
        Task { lr: LogReg { helr, cts: 2 }, iterations: 10, side: 4 }
    }

    fn pixels(&self, d: &Digit) -> Vec<f64> {
        if self.side == 14 { crate::digits::to14(d) } else { crate::digits::to4(d) }
    }

    fn block(&self) -> usize {
        1 << self.lr.helr.log_features
    }

    /// The features (centred, bias appended, padded to the block) and labels (±1) of the 3s
    /// and 8s of `train` and `test`.
    ///
    /// # Errors
    /// Features that do not fit a block.
    pub fn data(&self, digits: &Digits) -> Result<(Samples, Samples)> {
        let pick = |set: &[Digit]| -> Samples {
            set.iter()
                .filter(|d| d.label == 3 || d.label == 8)
                .map(|d| (self.pixels(d), if d.label == 3 { 1.0 } else { -1.0 }))
                .collect()
        };
        let (train, test) = (pick(&digits.train), pick(&digits.test));
        let n = self.side * self.side;
        if n + 1 > self.block() {
            return Err(CircuitError::Invalid(format!(
                "{n} features and a bias do not fit a {}-slot sample block",
                self.block()
            )));
        }
        let mut mean = vec![0.0; n];
        train.iter().for_each(|(x, _)| mean.iter_mut().zip(x).for_each(|(m, v)| *m += v));
        mean.iter_mut().for_each(|m| *m /= train.len() as f64);
        let shape = |set: Samples| {
            set.into_iter()
                .map(|(x, y)| {
                    let mut f: Vec<f64> = x.iter().zip(&mean).map(|(a, m)| a - m).collect();
                    f.push(1.0);
                    f.resize(self.block(), 0.0);
                    (f, y)
                })
                .collect()
        };
        Ok((shape(train), shape(test)))
    }

    /// The label-folded samples `z = y·x` in ciphertext-sized chunks (the last zero-padded),
    /// grouped into mini-batches of [`LogReg::cts`] ciphertexts: `batches[b][c]` is the
    /// concatenated slots of one ciphertext.
    pub fn batches(&self, train: &[(Vec<f64>, f64)]) -> Vec<Vec<Vec<f64>>> {
        let per_ct = 1usize << self.lr.helr.log_samples;
        let per_batch = per_ct * self.lr.cts;
        let z: Vec<Vec<f64>> =
            train.iter().map(|(x, y)| x.iter().map(|v| v * y).collect()).collect();
        z.chunks(per_batch)
            .map(|b| {
                let mut b = b.to_vec();
                b.resize(per_batch, vec![0.0; self.block()]);
                b.chunks(per_ct).map(<[Vec<f64>]>::concat).collect()
            })
            .collect()
    }

    /// The samples of iteration `i`'s mini-batch (cycling over the set), as the twin reads them.
    fn samples(&self, batches: &[Vec<Vec<f64>>], i: usize) -> Vec<Vec<f64>> {
        batches[i % batches.len()]
            .iter()
            .flat_map(|ct| ct.chunks(self.block()).map(<[f64]>::to_vec).collect::<Vec<_>>())
            .collect()
    }

    /// The plaintext-trained model (the cleartext twin over the same mini-batches).
    pub fn train_plain(&self, batches: &[Vec<Vec<f64>>]) -> Vec<f64> {
        let all: Vec<Vec<Vec<f64>>> =
            (0..self.iterations).map(|i| self.samples(batches, i)).collect();
        let zero = vec![0.0; self.block()];
        self.lr.train_plain(&all, &zero, &zero)
    }
}

/// Accuracy of `w` on `test` (`w·x > 0` predicts +1) and each prediction.
pub fn predict(w: &[f64], test: &[(Vec<f64>, f64)]) -> (f64, Vec<bool>) {
    let p: Vec<bool> =
        test.iter().map(|(x, _)| x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() > 0.0).collect();
    let correct = p.iter().zip(test).filter(|(p, (_, y))| **p == (*y > 0.0)).count();
    (correct as f64 / test.len().max(1) as f64, p)
}

/// The client's keys and the server's bootstrapper and evaluator for a training run.
pub struct Trainer {
    params: Parameters,
    sk: SecretKey,
    enc: Encoder,
    eval: Evaluator,
    bt: Bootstrapper,
    encaps: Option<Encapsulation>,
    key_bytes: usize,
    boot_scale: f64,
}

impl Trainer {
    /// Keys for `task` at `params` with the bootstrapping circuit `cfg`: the bootstrap's own
    /// keys, HELR's rotations, relinearisation and conjugation (to split the two packed NAG
    /// vectors after a bootstrap).
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] if the bootstrap leaves fewer levels than one
    /// iteration takes; a slot count other than the task's.
    pub fn new(params: &Parameters, cfg: BootstrapConfig, task: &Task) -> Result<Trainer> {
        if 1usize << cfg.log_slots != task.lr.slots() {
            return Err(CircuitError::Invalid(format!(
                "the bootstrapping circuit packs 2^{} slots, the training 2^{}",
                cfg.log_slots,
                task.lr.slots().trailing_zeros()
            )));
        }
        let bt = Bootstrapper::new(params, cfg)?;
        let top = bt.budget().output_level;
        task.lr.schedule(params, top, top, 1)?;
        let kg = KeyGenerator::new(params);
        let sk = kg.gen_secret_key();
        let (mut keys, encaps) = bt.generate_keys(&sk, false)?;
        for r in task.lr.rotations() {
            keys = keys.with_galois(kg.gen_rotation_key(&sk, r, false));
        }
        keys = keys.with_galois(kg.gen_conjugation_key(&sk, false));
        let key_bytes = key_bytes(&keys);
        let eval = Evaluator::new(params, keys)?;
        let boot_scale = params.default_scale().min(bt.max_input_scale());
        Ok(Trainer {
            params: params.clone(),
            sk,
            enc: Encoder::new(params),
            eval,
            bt,
            encaps,
            key_bytes,
            boot_scale,
        })
    }

    /// Evaluation-key bytes (without the encapsulation keys of the sparse-secret bootstrap).
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// The schedule of `iterations` from the bootstrap's output level.
    ///
    /// # Errors
    /// As [`LogReg::schedule`].
    pub fn schedule(&self, task: &Task) -> Result<Vec<Iteration>> {
        let top = self.bt.budget().output_level;
        task.lr.schedule(&self.params, top, top, task.iterations)
    }

    fn encrypt(&self, v: &[f64], slots: usize, level: usize) -> Result<Ciphertext> {
        let z: Vec<Complex64> = v.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let pt = self.enc.encode(&z, slots, level, self.params.default_scale())?;
        Ok(encrypt_sk(&self.params, &pt, &self.sk)?)
    }

    /// Train under encryption: the client encrypts each iteration's mini-batch at the level
    /// the schedule reads it (and the zero weights), the server iterates and bootstraps, the
    /// client decrypts `w`. `tick` is called after every iteration. Returns the decrypted
    /// model (one block) and the bootstrap count.
    ///
    /// # Errors
    /// Scheme and bootstrapping errors.
    pub fn train(
        &self,
        task: &Task,
        batches: &[Vec<Vec<f64>>],
        tick: &mut dyn FnMut(),
    ) -> Result<(Vec<f64>, usize)> {
        let schedule = self.schedule(task)?;
        let slots = task.lr.slots();
        let zero = vec![0.0; slots];
        let start = schedule.first().map_or(0, |it| it.level);
        let mut v = self.encrypt(&zero, slots, start)?;
        let mut w = self.encrypt(&zero, slots, start)?;
        let working = v.scale();
        let mut boots = 0;
        let mut refresh = |ct: &Ciphertext| -> Result<Ciphertext> {
            boots += 1;
            self.bt.bootstrap(&self.eval, self.encaps.as_ref(), ct)
        };
        for (i, it) in schedule.iter().enumerate() {
            let batch = batches[i % batches.len()]
                .iter()
                .map(|ct| self.encrypt(ct, slots, it.level))
                .collect::<Result<Vec<_>>>()?;
            (v, w) = task.lr.step(
                &self.eval,
                *it,
                &batch,
                (&v, &w),
                (self.boot_scale, working),
                &mut refresh,
            )?;
            tick();
        }
        let z = self.enc.decode(&decrypt(&self.params, &w, &self.sk)?)?;
        let block = 1 << task.lr.helr.log_features;
        Ok((z.iter().take(block).map(|c| c.re).collect(), boots))
    }
}
