//! Throughput mode: many independent ciphertexts, one per task.
//!
//! A single operation spreads its limbs over the pool; that has a fork-join point per kernel
//! (dozens per key switch) and leaves cores idle at every join. A server with many
//! ciphertexts does better with one ciphertext per task and no splitting inside the task
//! ([`basalt_math::parallel::sequential`]): no join until the batch ends, each core working on
//! its own operands. The batch calls below do that over the current rayon pool (install one
//! with `ThreadPool::install` to choose the core count). Each result is bit for bit the one the
//! single-ciphertext call returns: the schedule changes, the arithmetic does not.
//!
//! One [`Evaluator`] serves any number of threads at once: it is `Sync` (its keys and tables
//! are read-only after construction) and every operation takes `&self`. Trace recording is
//! per thread: record single-ciphertext calls, not batches.

use rayon::prelude::*;

use super::Evaluator;
use crate::ciphertext::Ciphertext;
use crate::error::Result;

impl Evaluator {
    /// `f(self, item)` for every item, one item per task on the current rayon pool, each task
    /// with the kernels' inner parallelism off. Results in input order; the first error (in
    /// input order) is returned if any item fails.
    ///
    /// # Errors
    /// Whatever `f` returns for an item.
    pub fn map_batch<T: Sync, R: Send>(
        &self,
        items: &[T],
        f: impl Fn(&Evaluator, &T) -> Result<R> + Sync,
    ) -> Result<Vec<R>> {
        items
            .par_iter()
            .with_max_len(1)
            .map(|x| basalt_math::parallel::sequential(|| f(self, x)))
            .collect()
    }

    /// [`Evaluator::mul_relin`] of every pair.
    ///
    /// # Errors
    /// As [`Evaluator::mul_relin`], for the first pair that fails.
    pub fn mul_relin_batch(&self, pairs: &[(&Ciphertext, &Ciphertext)]) -> Result<Vec<Ciphertext>> {
        self.map_batch(pairs, |ev, (a, b)| ev.mul_relin(a, b))
    }

    /// [`Evaluator::rescale`] of every ciphertext.
    ///
    /// # Errors
    /// As [`Evaluator::rescale`], for the first ciphertext that fails.
    pub fn rescale_batch(&self, cts: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
        self.map_batch(cts, |ev, c| ev.rescale(c))
    }

    /// [`Evaluator::rotate`] of every ciphertext by `k`.
    ///
    /// # Errors
    /// As [`Evaluator::rotate`] (a missing key names `k`).
    pub fn rotate_batch(&self, cts: &[Ciphertext], k: i64) -> Result<Vec<Ciphertext>> {
        self.map_batch(cts, |ev, c| ev.rotate(c, k))
    }

    /// [`Evaluator::rotate_hoisted`] of every ciphertext by every step of `ks`.
    ///
    /// # Errors
    /// As [`Evaluator::rotate_hoisted`].
    pub fn rotate_hoisted_batch(
        &self,
        cts: &[Ciphertext],
        ks: &[i64],
    ) -> Result<Vec<Vec<Ciphertext>>> {
        self.map_batch(cts, |ev, c| ev.rotate_hoisted(c, ks))
    }
}

/// Compile-time proof that one evaluator can be shared across threads.
const _: fn() = || {
    fn sync_and_send<T: Sync + Send>() {}
    sync_and_send::<Evaluator>();
};
