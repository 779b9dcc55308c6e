//! The server side: a [`ServerKey`] (no secret) plus the batched bootstrap engine every integer
//! operation goes through.
//!
//! # Why one engine
//! Radix operations are layers of independent block bootstraps (all carries of a layer, all
//! partial products, all block comparisons). `IntegerServer::bootstrap_many` key-switches a
//! whole layer as one tiled batch and runs the blind rotations through the two-level batched PBS
//! ([`pbs_batch`]), one batch per distinct lookup table, the batches themselves spread over the
//! rayon pool: a layer costs about `⌈jobs / threads⌉` bootstraps of latency. Tables of one
//! small input share a blind rotation ([`ManyLut`], `IntegerServer::bootstrap_layer`), and every
//! blind-rotation input goes through the set's modulus-switch noise reduction, as the shortint
//! path does.

use std::sync::Arc;

use rayon::prelude::*;

use crate::batch::{BatchConfig, keyswitch_batch, pbs_batch};
use crate::integer::carry::CarryPropagation;
use crate::integer::error::{IntegerError, IntegerResult};
use crate::integer::radix::{Block, BoolCiphertext, IntegerType, RadixCiphertext};
use crate::keys::{Ciphertext, Encoding, ServerKey};
use crate::lut::{Lut, delta};
use crate::lwe::LweCiphertext;
use crate::many_lut::{ManyLut, many_lut_pbs_batch};
use crate::params::{AtomicPattern, TfheParams};
use crate::torus::Torus;

/// Integer layer needs room for a carry (`carry ≥ message`) and digits of at least 2 bits (the
/// carry-propagation states 0, 1, 2 are packed as the high digit of a bivariate lookup).
pub(crate) fn check_params(p: &TfheParams) -> IntegerResult<()> {
    if p.message_modulus < 4 || p.carry_modulus < p.message_modulus {
        return Err(IntegerError::Unsupported(format!(
            "radix integers need message_modulus ≥ 4 and carry_modulus ≥ message_modulus \
             (set '{}' has {} and {})",
            p.name, p.message_modulus, p.carry_modulus
        )));
    }
    Ok(())
}

/// One bootstrap of a layer: input block, lookup table, degree of the output.
pub(crate) struct Job<'a, T: Torus> {
    pub input: Ciphertext<T>,
    pub lut: &'a Lut<T>,
    pub degree: u64,
}

/// One many-LUT bootstrap of a layer: input block, its degree (which bounds the outputs'
/// degrees), the packed tables.
pub(crate) struct ManyJob<'a, T: Torus> {
    pub input: Ciphertext<T>,
    pub input_degree: u64,
    pub lut: &'a ManyLut<T>,
}

/// The test vector a group of a layer's inputs shares.
#[derive(Clone, Copy)]
enum Table<'a, T: Torus> {
    One(&'a Lut<T>),
    Many(&'a ManyLut<T>),
}

impl<T: Torus> Table<'_, T> {
    fn is(&self, o: Table<'_, T>) -> bool {
        match (self, o) {
            (Table::One(a), Table::One(b)) => std::ptr::eq(*a, b),
            (Table::Many(a), Table::Many(b)) => std::ptr::eq(*a, b),
            _ => false,
        }
    }
}

/// Integer operations with the server key only. The key is shared (an [`Arc`]): a server that
/// also runs shortint lookup tables and gates on the same key holds it once.
#[derive(Clone, Debug)]
pub struct IntegerServer<T: Torus> {
    pub(crate) key: Arc<ServerKey<T>>,
    pub(crate) batch: BatchConfig,
    pub(crate) carry: CarryPropagation,
    /// Whether several tables of one small input share one blind rotation ([`ManyLut`]).
    pub(crate) many_lut: bool,
}

impl<T: Torus> IntegerServer<T> {
    /// Wrap a server key; its set must satisfy the same conditions as the client's.
    pub fn new(key: ServerKey<T>) -> IntegerResult<Self> {
        Self::from_shared(Arc::new(key))
    }

    /// Wrap a server key held elsewhere too (no copy of the bootstrapping key).
    pub fn from_shared(key: Arc<ServerKey<T>>) -> IntegerResult<Self> {
        check_params(key.params())?;
        Ok(IntegerServer {
            key,
            batch: BatchConfig::default(),
            carry: CarryPropagation::Auto,
            many_lut: true,
        })
    }

    pub fn server_key(&self) -> &ServerKey<T> {
        &self.key
    }

    pub fn params(&self) -> &TfheParams {
        self.key.params()
    }

    pub fn key_id(&self) -> u64 {
        self.key.key_id
    }

    /// Batch schedule of the block bootstraps.
    pub fn batch_config(&self) -> BatchConfig {
        self.batch
    }

    pub fn set_batch_config(&mut self, cfg: BatchConfig) {
        self.batch = cfg;
    }

    /// Carry-propagation algorithm of additions and products (default: chosen by thread count).
    pub fn carry_propagation(&self) -> CarryPropagation {
        self.carry
    }

    pub fn set_carry_propagation(&mut self, c: CarryPropagation) {
        self.carry = c;
    }

    /// Whether digit and carry (and other tables of one small input) come from one blind
    /// rotation ([`ManyLut`]; default on). Off, every table is its own bootstrap; results are
    /// the same either way.
    pub fn many_lut(&self) -> bool {
        self.many_lut
    }

    pub fn set_many_lut(&mut self, on: bool) {
        self.many_lut = on;
    }

    /// `m`: values of one digit.
    pub fn message_modulus(&self) -> u64 {
        self.params().message_modulus
    }

    /// `p = m · carry_modulus`: values a block can hold before reaching the padding bit.
    pub fn plaintext_modulus(&self) -> u64 {
        self.params().plaintext_modulus()
    }

    /// Largest noise level a bootstrap input may have: `m + 1`, what packing two clean digits
    /// `a·m + b` produces (5 on the 2+2 set, TFHE-rs's `MaxNoiseLevel` there).
    pub fn max_noise_level(&self) -> u64 {
        self.message_modulus() + 1
    }

    pub(crate) fn block_bits(&self) -> u32 {
        self.message_modulus().trailing_zeros()
    }

    pub(crate) fn delta(&self) -> T {
        delta(self.plaintext_modulus())
    }

    /// A lookup table on one block's value `0..p`.
    pub(crate) fn lut(&self, f: impl Fn(u64) -> u64) -> Lut<T> {
        Lut::from_fn(self.params(), f)
    }

    /// A lookup table on two digits packed as `hi·m + lo` ([`Self::pack`]).
    pub(crate) fn lut2(&self, f: impl Fn(u64, u64) -> u64) -> Lut<T> {
        let m = self.message_modulus();
        Lut::from_fn(self.params(), |x| f(x / m, x % m))
    }

    /// `hi·m + lo`: two digits in one block for a bivariate lookup.
    pub(crate) fn pack(&self, hi: &Block<T>, lo: &Block<T>) -> Ciphertext<T> {
        debug_assert!(hi.degree * self.message_modulus() + lo.degree < self.plaintext_modulus());
        debug_assert!(
            hi.noise_level * self.message_modulus() + lo.noise_level <= self.max_noise_level()
        );
        hi.scale(self.message_modulus()).add(lo).ct
    }

    /// A trivial (noiseless, public) block of value `v`.
    pub(crate) fn trivial_block(&self, v: u64) -> Block<T> {
        let n = self.key.ciphertext_dimension();
        let like = Ciphertext {
            params_id: self.params().id(),
            key_id: self.key.key_id,
            encoding: Encoding::Integer,
            lwe: LweCiphertext::zero(n),
        };
        Block::trivial(&like, v, self.delta())
    }

    /// A trivial encryption of a clear `value` of type `ty` (public: anyone can read it); used
    /// for operations mixing a ciphertext with a clear operand.
    pub fn trivial(&self, value: i128, ty: IntegerType) -> IntegerResult<RadixCiphertext<T>> {
        let nb = ty.blocks(self.block_bits())?;
        let mut x = ty.encode(value)?;
        let m = self.message_modulus();
        let blocks = (0..nb)
            .map(|_| {
                let b = self.trivial_block(x % m);
                x /= m;
                b
            })
            .collect();
        Ok(RadixCiphertext { ty, blocks })
    }

    /// The pattern of `c mod 2^bits` as digits (for scalar operations; negative `c` wraps).
    pub(crate) fn digits_of(&self, c: i128, ty: IntegerType) -> Vec<u64> {
        let m = self.message_modulus() as u128;
        let mut x = (c as u128) & ty.mask();
        (0..ty.bits / self.block_bits())
            .map(|_| {
                let d = (x % m) as u64;
                x /= m;
                d
            })
            .collect()
    }

    /// Ids and shape of a radix ciphertext (from a client of this key, well-formed).
    pub(crate) fn check(&self, ct: &RadixCiphertext<T>) -> IntegerResult<()> {
        let nb = ct.ty.blocks(self.block_bits())?;
        if ct.blocks.len() != nb {
            return Err(IntegerError::Malformed(format!(
                "{} needs {nb} blocks, found {}",
                ct.ty,
                ct.blocks.len()
            )));
        }
        for b in &ct.blocks {
            self.check_block(b)?;
        }
        Ok(())
    }

    pub(crate) fn check_block(&self, b: &Block<T>) -> IntegerResult<()> {
        self.key.check(&b.ct)?;
        if b.degree >= self.plaintext_modulus() || b.noise_level > self.max_noise_level() {
            return Err(IntegerError::Malformed(format!(
                "block degree {} / noise level {} exceed {} / {}",
                b.degree,
                b.noise_level,
                self.plaintext_modulus() - 1,
                self.max_noise_level()
            )));
        }
        Ok(())
    }

    /// Both operands checked and of the same type.
    pub(crate) fn check_pair(
        &self,
        a: &RadixCiphertext<T>,
        b: &RadixCiphertext<T>,
    ) -> IntegerResult<()> {
        self.check(a)?;
        self.check(b)?;
        if a.ty != b.ty {
            return Err(IntegerError::TypeMismatch { lhs: a.ty, rhs: b.ty });
        }
        Ok(())
    }

    pub(crate) fn check_bool(&self, b: &BoolCiphertext<T>) -> IntegerResult<()> {
        self.check_block(&b.block)?;
        if b.block.degree > 1 {
            return Err(IntegerError::Malformed(format!(
                "encrypted boolean of degree {}",
                b.block.degree
            )));
        }
        Ok(())
    }

    /// Run one layer of bootstraps (each job its own table), batched: one key-switching batch,
    /// then one two-level PBS batch per distinct table, the batches in parallel. Outputs have
    /// noise level 1 and the degree each job states.
    pub(crate) fn bootstrap_many(&self, jobs: Vec<Job<'_, T>>) -> Vec<Block<T>> {
        self.bootstrap_layer(jobs, Vec::new()).0
    }

    /// Many-LUT jobs alone ([`Self::bootstrap_layer`]): one block per function of each job.
    pub(crate) fn bootstrap_many_lut(&self, jobs: Vec<ManyJob<'_, T>>) -> Vec<Vec<Block<T>>> {
        self.bootstrap_layer(Vec::new(), jobs).1
    }

    /// One layer of ordinary and many-LUT bootstraps: one key-switching batch for all inputs
    /// (then the modulus-switch noise reduction where the set has one), one batched blind
    /// rotation per distinct table, the batches in parallel. Ordinary outputs have the degree
    /// their job states; many-LUT outputs the degree their table gives on the input's degree
    /// ([`ManyLut::output_degree`]). All have noise level 1.
    pub(crate) fn bootstrap_layer(
        &self,
        jobs: Vec<Job<'_, T>>,
        many: Vec<ManyJob<'_, T>>,
    ) -> (Vec<Block<T>>, Vec<Vec<Block<T>>>) {
        if jobs.is_empty() && many.is_empty() {
            return (Vec::new(), Vec::new());
        }
        // Groups of inputs sharing a test vector; input index = job index, then many-job
        // index offset by jobs.len().
        let mut groups: Vec<(Table<'_, T>, Vec<usize>)> = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            match groups.iter_mut().find(|(t, _)| t.is(Table::One(j.lut))) {
                Some((_, idx)) => idx.push(i),
                None => groups.push((Table::One(j.lut), vec![i])),
            }
        }
        for (i, j) in many.iter().enumerate() {
            let i = jobs.len() + i;
            match groups.iter_mut().find(|(t, _)| t.is(Table::Many(j.lut))) {
                Some((_, idx)) => idx.push(i),
                None => groups.push((Table::Many(j.lut), vec![i])),
            }
        }
        let key = &self.key;
        let cfg = &self.batch;
        // Blind rotations: per input, its outputs (1 for an ordinary job, k for a many-LUT one).
        let pbs_groups = |inputs: &[Vec<T>]| -> Vec<Vec<Vec<T>>> {
            let run = |(table, idx): &(Table<'_, T>, Vec<usize>)| {
                let ins: Vec<&[T]> = idx.iter().map(|&i| inputs[i].as_slice()).collect();
                match table {
                    Table::One(lut) => {
                        let mut outs = vec![Vec::new(); idx.len()];
                        pbs_batch(&ins, &lut.tv, &key.bsk, cfg, &mut outs);
                        outs.into_iter().map(|o| vec![o]).collect::<Vec<_>>()
                    }
                    Table::Many(lut) => {
                        let f = lut.functions();
                        let mut outs = vec![Vec::new(); idx.len() * f];
                        many_lut_pbs_batch(&ins, lut, &key.bsk, cfg, &mut outs);
                        let mut it = outs.into_iter();
                        (0..idx.len()).map(|_| it.by_ref().take(f).collect()).collect()
                    }
                }
            };
            let results: Vec<Vec<Vec<Vec<T>>>> = if groups.len() == 1 {
                vec![run(&groups[0])]
            } else {
                groups.par_iter().map(run).collect()
            };
            let mut out = vec![Vec::new(); inputs.len()];
            for ((_, idx), res) in groups.iter().zip(results) {
                for (&i, v) in idx.iter().zip(res) {
                    out[i] = v;
                }
            }
            out
        };
        let ks = |inputs: &[&[T]]| -> Vec<Vec<T>> {
            let mut outs = vec![Vec::new(); inputs.len()];
            keyswitch_batch(&key.ksk, inputs, cfg.ks_tile, &mut outs);
            outs
        };
        let reduce = |mut v: Vec<Vec<T>>| -> Vec<Vec<T>> {
            if key.msnr.is_some() {
                v.par_iter_mut().for_each(|x| key.reduce_ms_noise(x));
            }
            v
        };
        let raw: Vec<&[T]> = jobs
            .iter()
            .map(|j| j.input.lwe.as_slice())
            .chain(many.iter().map(|j| j.input.lwe.as_slice()))
            .collect();
        let out: Vec<Vec<Vec<T>>> = match self.params().atomic_pattern {
            AtomicPattern::KsPbs => pbs_groups(&reduce(ks(&raw))),
            AtomicPattern::PbsKs => {
                let mid = pbs_groups(&reduce(raw.iter().map(|r| r.to_vec()).collect()));
                let shape: Vec<usize> = mid.iter().map(Vec::len).collect();
                let flat: Vec<&[T]> = mid.iter().flatten().map(|v| v.as_slice()).collect();
                let mut switched = ks(&flat).into_iter();
                shape.iter().map(|&k| switched.by_ref().take(k).collect()).collect()
            }
        };
        let (params_id, key_id) = (self.params().id(), key.key_id);
        let block = |v: Vec<T>, degree: u64| Block {
            ct: Ciphertext {
                params_id,
                key_id,
                encoding: Encoding::Integer,
                lwe: LweCiphertext::from_vec(v),
            },
            degree,
            noise_level: 1,
        };
        let mut out = out.into_iter();
        let single = jobs
            .iter()
            .map(|j| {
                block(out.next().and_then(|v| v.into_iter().next()).expect("one output"), j.degree)
            })
            .collect();
        let multi = many
            .iter()
            .map(|j| {
                let outs = out.next().expect("k outputs");
                outs.into_iter()
                    .enumerate()
                    .map(|(i, v)| block(v, j.lut.output_degree(i, j.input_degree)))
                    .collect()
            })
            .collect();
        (single, multi)
    }

    /// The digit/carry split `(x mod m, ⌊x/m⌋)` of a block of degree at most `max_value` as one
    /// many-LUT bootstrap, when many-LUT bootstrapping is on and both fit
    /// (`2·(max_value + 1) ≤ p`).
    pub(crate) fn digit_carry_lut(&self, max_value: u64) -> Option<ManyLut<T>> {
        let m = self.message_modulus();
        if !self.many_lut || ManyLut::<T>::capacity(self.plaintext_modulus(), max_value) < 2 {
            return None;
        }
        ManyLut::from_fns(self.params(), max_value, &[&|x| x % m, &|x| x / m]).ok()
    }

    /// `value mod m` of every block whose noise is above one bootstrap's, so that it can be
    /// packed again (blocks already at level ≤ 1 are kept).
    pub(crate) fn refresh(&self, blocks: &mut [Block<T>]) {
        let m = self.message_modulus();
        let ident = self.lut(|x| x % m);
        let idx: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].noise_level > 1).collect();
        let jobs = idx
            .iter()
            .map(|&i| Job { input: blocks[i].ct.clone(), lut: &ident, degree: blocks[i].degree })
            .collect();
        for (i, b) in idx.into_iter().zip(self.bootstrap_many(jobs)) {
            blocks[i] = b;
        }
    }

    /// An encrypted boolean ready to be packed (noise level ≤ 1).
    pub(crate) fn fresh_bool(&self, b: &BoolCiphertext<T>) -> Block<T> {
        let mut v = vec![b.block.clone()];
        self.refresh(&mut v);
        v.pop().expect("one block")
    }
}
