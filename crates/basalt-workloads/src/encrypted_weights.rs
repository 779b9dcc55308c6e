//! A [`Network`] whose weights are ciphertexts: LoLa-MNIST with encrypted weights (CraterLake
//! Table 3/4 "MNIST Encryp. Wghts.", taken from F1), where the model is private too.
//!
//! # Reading \[GAP\]
//! CraterLake and F1 name the variant only. We keep the unencrypted row's network and packing
//! ([`crate::mnist::lola`], [`crate::network`]) and make every weight vector a ciphertext that
//! the model owner encrypts (with the public key: no seed, two polynomials) at the level and
//! scale where it is used, as the unencrypted row encodes its plaintexts:
//! - the convolution's 25 weight vectors and every bias;
//! - each dense layer's hybrid diagonals, pre-rotated for the BSGS split (`rot_{−n1 j}(d_k)`,
//!   which the owner can do before encrypting), so the split is the unencrypted row's.
//!
//! Every plaintext product becomes a tensor product (degree 2, no key switch). Products that
//! are summed stay at degree 2 and are relinearised once per sum (lazy relinearisation, as
//! SEAL and Lattigo allow): once for the convolution, once per giant step before its rotation
//! (a degree-2 ciphertext cannot be rotated). The evaluator loads each weight ciphertext from
//! memory (`CtLoad`) when the inference first uses it.

use std::collections::BTreeMap;

use basalt_circuits::lintrans::{Hoisting, Split, Strategy, rotate_slots};
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Evaluator, Parameters};

use crate::network::{self, Layer, Network, StrategyRule};
use crate::trace::{Inputs, record_shapes};

/// Encrypts `values` (zero-padded to `slots`) at `level` and `scale`: the model owner.
pub type WeightEncryptor<'a> = &'a dyn Fn(&[f64], usize, usize, f64) -> Result<Ciphertext>;

#[derive(Debug)]
enum Stage {
    Pointwise {
        w: Vec<Ciphertext>,
        b: Ciphertext,
    },
    Dense {
        split: Split,
        diags: BTreeMap<(usize, usize), Ciphertext>,
        folds: Vec<i64>,
        b: Ciphertext,
    },
    Square,
}

/// A network prepared with encrypted weights for inputs at `params`' top level.
#[derive(Debug)]
pub struct EncryptedModel {
    stages: Vec<Stage>,
    input_slots: usize,
    level: usize,
    hoisting: Hoisting,
}

impl EncryptedModel {
    /// Prepare `net` (first layer pointwise or dense); `owner` encrypts the weights, `None`
    /// builds shapes only (trace mode). The dense layers' split follows `rule` (no or single
    /// hoisting).
    ///
    /// # Errors
    /// A chain shorter than the network, double hoisting, a dense layer wider than its slots,
    /// encryption errors.
    pub fn prepare(
        params: &Parameters,
        net: &Network,
        rule: StrategyRule,
        owner: Option<WeightEncryptor>,
    ) -> Result<EncryptedModel> {
        if rule.hoisting == Hoisting::Double {
            return Err(CircuitError::Invalid("encrypted weights: no or single hoisting".into()));
        }
        let (top, drop) = (params.max_level(), params.primes_per_rescale());
        let available = (top + 1 - params.base_primes()) / drop;
        if net.depth() > available {
            let needed = net.depth();
            return Err(CircuitError::NotEnoughLevels { needed, available, level: top });
        }
        let encrypt = |v: &[f64], slots: usize, level: usize, scale: f64| match owner {
            Some(f) => f(v, slots, level, scale),
            None => {
                let mut ct = Ciphertext::symbolic(params, level)?;
                ct.set_slots(slots);
                ct.set_scale(scale);
                Ok(ct)
            }
        };
        let (mut level, mut slots, mut scale) = (top, net.input_slots, params.default_scale());
        let mut stages = Vec::with_capacity(net.layers.len());
        for layer in &net.layers {
            let q = network::dropped_scale(params, level);
            stages.push(match layer {
                Layer::Pointwise { w, b } => Stage::Pointwise {
                    w: w.iter().map(|wk| encrypt(wk, slots, level, q)).collect::<Result<_>>()?,
                    b: encrypt(b, slots, level - drop, scale)?,
                },
                Layer::Dense { w, b } => {
                    let mp = w.len().next_power_of_two();
                    if mp > slots || w.first().is_none_or(|r| r.len() > slots) {
                        return Err(CircuitError::Invalid(
                            "a dense layer wider than its slots".into(),
                        ));
                    }
                    let diagonals: BTreeMap<usize, Vec<f64>> = (0..mp)
                        .map(|i| (i, network::hybrid_diagonal(w, mp, slots, i)))
                        .map(|(i, d)| (i, d.iter().map(|z| z.re).collect::<Vec<_>>()))
                        .filter(|(_, d)| d.iter().any(|&x| x != 0.0))
                        .collect();
                    let Strategy::Bsgs { n1, .. } = rule.strategy(mp) else {
                        unreachable!("StrategyRule gives BSGS splits")
                    };
                    let indices: Vec<usize> = diagonals.keys().copied().collect();
                    let split = Split::new(&indices, n1, slots)?;
                    let mut diags = BTreeMap::new();
                    for (&j, is) in &split.giant {
                        for &i in is {
                            let d = rotate_slots(&diagonals[&(n1 * j + i)], -((n1 * j) as i64));
                            diags.insert((j, i), encrypt(&d, slots, level, q)?);
                        }
                    }
                    let folds = network::folds(slots, mp);
                    slots = mp;
                    Stage::Dense { split, diags, folds, b: encrypt(b, slots, level - drop, scale)? }
                }
                Layer::Square => {
                    scale = scale * scale / q;
                    Stage::Square
                }
                Layer::Sparse { .. } => {
                    return Err(CircuitError::Invalid(
                        "encrypted weights for a sparse (convolution) layer".into(),
                    ));
                }
            });
            level -= drop;
        }
        Ok(EncryptedModel {
            stages,
            input_slots: net.input_slots,
            level: top,
            hoisting: rule.hoisting,
        })
    }

    /// Level and slots of the input ciphertexts.
    pub fn input_level(&self) -> usize {
        self.level
    }
    pub fn input_slots(&self) -> usize {
        self.input_slots
    }

    /// Weight ciphertexts (diagonals, weight vectors, biases).
    pub fn weights(&self) -> usize {
        self.stages
            .iter()
            .map(|s| match s {
                Stage::Pointwise { w, .. } => w.len() + 1,
                Stage::Dense { diags, .. } => diags.len() + 1,
                Stage::Square => 0,
            })
            .sum()
    }

    /// Every rotation the dense layers need.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> = self
            .stages
            .iter()
            .flat_map(|s| match s {
                Stage::Dense { split, folds, .. } => {
                    split.rotations().into_iter().chain(folds.iter().copied()).collect()
                }
                _ => Vec::new(),
            })
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// One inference, as [`network::Model::evaluate`] with ciphertext weights.
    ///
    /// # Errors
    /// A wrong number of inputs; missing keys; level, scale or slot mismatches.
    pub fn evaluate(&self, eval: &Evaluator, inputs: &[Ciphertext]) -> Result<Ciphertext> {
        let mut x = inputs.first().ok_or(CircuitError::EmptyMatrix)?.clone();
        for stage in &self.stages {
            x = match stage {
                Stage::Pointwise { w, b } => {
                    if inputs.len() != w.len() {
                        return Err(CircuitError::VectorLength {
                            len: inputs.len(),
                            cols: w.len(),
                        });
                    }
                    let mut acc: Option<Ciphertext> = None;
                    for (xk, wk) in inputs.iter().zip(w) {
                        sum_into(eval, &mut acc, eval.mul(xk, wk)?)?;
                    }
                    let acc = acc.ok_or(CircuitError::EmptyMatrix)?;
                    eval.add(&eval.rescale(&eval.relinearize(&acc)?)?, b)?
                }
                Stage::Dense { split, diags, folds, b } => {
                    let mut y = self.bsgs(eval, &x, split, diags)?;
                    for &s in folds {
                        y = eval.add(&y, &eval.rotate(&y, s)?)?;
                    }
                    y.set_slots(b.slots());
                    eval.add(&y, b)?
                }
                Stage::Square => eval.rescale(&eval.mul_relin(&x, &x)?)?,
            };
        }
        Ok(x)
    }

    /// `Σ_j rot_{n1 j}(relin(Σ_i rot_i(x) ⊗ D_{j,i}))`, rescaled: the BSGS product with
    /// ciphertext diagonals.
    fn bsgs(
        &self,
        eval: &Evaluator,
        x: &Ciphertext,
        split: &Split,
        diags: &BTreeMap<(usize, usize), Ciphertext>,
    ) -> Result<Ciphertext> {
        let decomp = match self.hoisting {
            Hoisting::None => None,
            _ => Some(eval.decompose(x)?),
        };
        let mut babies = BTreeMap::new();
        for i in split.babies() {
            let k = i as i64;
            let r = match &decomp {
                _ if i == 0 => x.clone(),
                None => eval.rotate(x, k)?,
                Some(d) => eval.rotate_hoisted_with(x, d, k)?,
            };
            babies.insert(i, r);
        }
        let mut acc = None;
        for (&j, is) in &split.giant {
            let mut partial = None;
            for &i in is {
                let d = &diags[&(j, i)];
                sum_into(eval, &mut partial, eval.mul(&babies[&i], d)?)?;
            }
            let mut p = eval.relinearize(&partial.ok_or(CircuitError::EmptyMatrix)?)?;
            if j != 0 {
                p = eval.rotate(&p, (j * split.n1) as i64)?;
            }
            sum_into(eval, &mut acc, p)?;
        }
        Ok(eval.rescale(&acc.ok_or(CircuitError::EmptyMatrix)?)?)
    }
}

/// `acc += x` (or `acc = x`).
fn sum_into(eval: &Evaluator, acc: &mut Option<Ciphertext>, x: Ciphertext) -> Result<()> {
    match acc {
        None => *acc = Some(x),
        Some(a) => eval.add_assign(a, &x)?,
    }
    Ok(())
}

/// Record one LoLa-MNIST inference with encrypted weights at `params` in trace mode (seed-0
/// weights, shapes only).
///
/// # Errors
/// As [`EncryptedModel::prepare`] and [`EncryptedModel::evaluate`].
pub fn record_mnist(
    params: &Parameters,
    rule: StrategyRule,
    seeded: bool,
) -> Result<basalt_trace::Trace> {
    let net = crate::mnist::lola(0);
    let model = EncryptedModel::prepare(params, &net, rule, None)?;
    let inputs =
        Inputs { count: net.inputs(), level: model.input_level(), slots: model.input_slots() };
    record_shapes(params, &model.rotations(), seeded, inputs, |eval, cts| model.evaluate(eval, cts))
}
