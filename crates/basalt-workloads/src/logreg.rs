//! CraterLake's logistic-regression benchmark (§8, HELR \[36\]): mini-batch training by
//! Nesterov accelerated gradient on encrypted data over many iterations, bootstrapping the
//! weights whenever they run out of levels.
//!
//! # What the paper states \[P\]
//! "Logistic regression uses the HELR algorithm \[36\] … We compute many batches of logistic
//! regression training with 256 features, and 256 samples per batch, starting at computational
//! depth L=38. This benchmark is different from the one reported in F1, as it performs
//! multiple logistic regression iterations" and so needs "frequent bootstrapping" (§8); every
//! bootstrapped benchmark uses the packed-bootstrapping row's algorithm.
//!
//! # Our reading \[GAP\] (data/papers/craterlake/readings.toml)
//! - **One iteration per batch**: the iteration is [`basalt_circuits::helr`]'s (gradient per
//!   data ciphertext, summed; rotate-and-sum over the samples; NAG step), 5 levels.
//! - **Packing**: a ciphertext holds 2^15 slots = 128 samples of 256 features (HELR's and FAB's
//!   block layout), so a batch of 256 samples is 2 data ciphertexts; each arrives from the
//!   client (read from memory) at the level its iteration needs, as the LSTM's inputs do.
//! - **Start**: "L=38" counts 28-bit residues, so the weights start at 38 residues = the base
//!   2 + 18 two-residue levels: 3 iterations before the first bootstrap.
//! - **Bootstrap**: both NAG vectors `w⁺` and `v⁺` must survive an iteration boundary; they
//!   are real, so one bootstrap refreshes both packed as `w⁺ + i·v⁺` (the last NAG products
//!   set the bootstrap's input scale at no extra level) and one conjugation splits them again.
//!   The bootstrap is the packed-bootstrapping row's, at all 2^15 slots (the weights
//!   replicated in each of the 128 blocks): §8 says the original LogReg "used partially packed
//!   ciphertexts" for its older bootstrapping, and that with this one "using fully packed
//!   ciphertexts is more efficient". On `CRATERLAKE_80_BOOT` the 10 levels a bootstrap leaves
//!   hold 2 iterations.
//!
//! The data and initial weights are whatever the caller encrypts; neither the kernel stream
//! nor the time depends on them.

use basalt_circuits::helr::{self, Helr};
use basalt_circuits::{CircuitError, Result};
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::{Trace, record};

/// Levels of one iteration: the gradient (4) and the NAG step (1).
pub const ITERATION_LEVELS: usize = 5;

/// CraterLake's batch (§8): 256 samples of 256 features.
pub const BATCH: usize = 256;

/// One HELR training run's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogReg {
    /// Block layout and step constants of one iteration.
    pub helr: Helr,
    /// Data ciphertexts per batch.
    pub cts: usize,
}

/// Where one iteration runs: the level of `v` (and of the batch's data) entering it, and
/// whether the weights are bootstrapped after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    pub level: usize,
    pub refresh: bool,
}

impl LogReg {
    /// CraterLake's benchmark on `slots`-slot ciphertexts: [`BATCH`] samples of 256 features
    /// (`Helr::fab`'s block and step constants), `BATCH / (slots / 256)` data ciphertexts.
    ///
    /// # Panics
    /// If `slots` is not a power of two between 256 and `256 · BATCH`.
    pub fn craterlake(slots: usize) -> LogReg {
        assert!(slots.is_power_of_two() && (256..=256 * BATCH).contains(&slots), "{slots}");
        let helr = Helr { log_samples: slots.trailing_zeros() - 8, ..Helr::fab() };
        LogReg { helr, cts: BATCH / (slots >> 8) }
    }

    /// Slots of every ciphertext.
    pub fn slots(&self) -> usize {
        1 << (self.helr.log_features + self.helr.log_samples)
    }

    /// The iterations of a run of `iterations` from weights at `start` whose bootstraps end at
    /// `refreshed`: each as deep as the levels allow, a bootstrap after any iteration that
    /// leaves too few for the next (none after the last).
    ///
    /// # Errors
    /// [`CircuitError::NotEnoughLevels`] if `start` or `refreshed` holds no iteration.
    pub fn schedule(
        &self,
        params: &Parameters,
        start: usize,
        refreshed: usize,
        iterations: usize,
    ) -> Result<Vec<Iteration>> {
        let (c, base) = (params.primes_per_rescale(), params.base_primes());
        let left = |level: usize| (level + 1).saturating_sub(base) / c;
        for level in [start, refreshed] {
            if left(level) < ITERATION_LEVELS {
                return Err(CircuitError::NotEnoughLevels {
                    needed: ITERATION_LEVELS,
                    available: left(level),
                    level,
                });
            }
        }
        let mut level = start;
        let mut out = Vec::with_capacity(iterations);
        for i in 0..iterations {
            let after = level - ITERATION_LEVELS * c;
            let refresh = i + 1 < iterations && left(after) < ITERATION_LEVELS;
            out.push(Iteration { level, refresh });
            level = if refresh { refreshed } else { after };
        }
        Ok(out)
    }

    /// Every rotation step (the conjugation key is also needed).
    pub fn rotations(&self) -> Vec<i64> {
        self.helr.rotations()
    }

    /// Train over `batches` (`batches[i]`: the [`LogReg::cts`] data ciphertexts of iteration
    /// `i`, at `schedule[i].level`) from `(v, w)` at `schedule[0].level`; `refresh`
    /// bootstraps a ciphertext at `boot_scale` (any level) to the refreshed level, keeping its
    /// scale. Returns `w⁺` of the last iteration, the model. Symbolic ciphertexts and a marker
    /// `refresh` run the same code on shapes (trace mode).
    ///
    /// The evaluator records the loads of the weights, of each data ciphertext when its
    /// iteration first reads it, and of every intermediate.
    ///
    /// # Errors
    /// Level or scale mismatches, missing keys, the refresh's errors.
    pub fn evaluate(
        &self,
        eval: &Evaluator,
        schedule: &[Iteration],
        batches: &[Vec<Ciphertext>],
        (v, w): (&Ciphertext, &Ciphertext),
        boot_scale: f64,
        refresh: &mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>,
    ) -> Result<Ciphertext> {
        let (mut v, mut w) = (v.clone(), w.clone());
        let working = v.scale();
        for (it, batch) in schedule.iter().zip(batches) {
            (v, w) = self.step(eval, *it, batch, (&v, &w), (boot_scale, working), refresh)?;
        }
        Ok(w)
    }

    /// One iteration of [`LogReg::evaluate`]: from `(v, w)` at `it.level` over the data
    /// ciphertexts `batch` to the next `(v, w)` (bootstrapped if `it.refresh`, then raised
    /// towards the `working` scale of the weights). A caller that streams the batches (or
    /// reports progress) runs this once per [`Iteration`] of the schedule. It is
    /// [`LogReg::step_in_shares`] with the whole batch as one share.
    ///
    /// # Errors
    /// As [`LogReg::evaluate`]; an empty batch.
    pub fn step(
        &self,
        eval: &Evaluator,
        it: Iteration,
        batch: &[Ciphertext],
        (v, w): (&Ciphertext, &Ciphertext),
        (boot_scale, working): (f64, f64),
        refresh: &mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>,
    ) -> Result<(Ciphertext, Ciphertext)> {
        self.step_in_shares(eval, it, batch, 1, (v, w), (boot_scale, working), refresh)
    }

    /// One iteration as FAB-2 distributes it (FAB §4.9): the batch cut into `shares`
    /// contiguous shares ([`shares`]), the partial gradient of each share
    /// ([`LogReg::partial_gradient`]), the partials summed in share order and the NAG update
    /// with its bootstrap on one node ([`LogReg::update`]). Run in one process this is the
    /// reference a distributed run must match bit for bit; ciphertext addition is exact
    /// modular arithmetic, so every share count gives the same bytes as [`LogReg::step`].
    ///
    /// # Errors
    /// As [`LogReg::step`]; `shares` = 0.
    #[allow(clippy::too_many_arguments)]
    pub fn step_in_shares(
        &self,
        eval: &Evaluator,
        it: Iteration,
        batch: &[Ciphertext],
        shares: usize,
        (v, w): (&Ciphertext, &Ciphertext),
        (boot_scale, working): (f64, f64),
        refresh: &mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let _r = basalt_trace::region("HelrIteration");
        let partials = self::shares(batch.len(), shares)?
            .into_iter()
            .map(|r| self.partial_gradient(eval, &batch[r], v))
            .collect::<Result<Vec<_>>>()?;
        self.update(eval, it, &partials, (v, w), (boot_scale, working), refresh)
    }

    /// The encrypted gradient of one share of a mini-batch: HELR's gradient of each data
    /// ciphertext at the weights `v`, summed in order. A worker of FAB-2 computes this on its
    /// share.
    ///
    /// # Errors
    /// Level or scale mismatches, missing keys; an empty share.
    pub fn partial_gradient(
        &self,
        eval: &Evaluator,
        share: &[Ciphertext],
        v: &Ciphertext,
    ) -> Result<Ciphertext> {
        let mut g: Option<Ciphertext> = None;
        for z in share {
            let gz = helr::gradient(eval, z, v, &self.helr)?;
            g = Some(match g {
                None => gz,
                Some(sum) => eval.add(&sum, &gz)?,
            });
        }
        g.ok_or_else(|| CircuitError::Invalid("a batch without data".into()))
    }

    /// What the gathering node does: the `partials` summed in the order given, then the NAG
    /// step from `(v, w)` (bootstrapped through `refresh` if `it.refresh`, then raised
    /// towards the `working` scale).
    ///
    /// # Errors
    /// No partials; level or scale mismatches, missing keys, the refresh's errors.
    pub fn update(
        &self,
        eval: &Evaluator,
        it: Iteration,
        partials: &[Ciphertext],
        (v, w): (&Ciphertext, &Ciphertext),
        (boot_scale, working): (f64, f64),
        refresh: &mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let (first, rest) = partials
            .split_first()
            .ok_or_else(|| CircuitError::Invalid("no partial gradient to sum".into()))?;
        let mut g = first.clone();
        for p in rest {
            g = eval.add(&g, p)?;
        }
        let w_in = helr::scaled_to(eval, w, 1.0, g.level(), g.scale())?;
        let target = if it.refresh { boot_scale } else { g.scale() };
        let (w_next, v_next) = helr::update_to(eval, &g, v, &w_in, &self.helr, target)?;
        if it.refresh {
            let (w, v) = self.refresh_both(eval, &w_next, &v_next, working, refresh)?;
            Ok((v, w))
        } else {
            Ok((v_next, w_next))
        }
    }

    /// One bootstrap for both NAG vectors: `w⁺` (one level above `v⁺`) brought to `v⁺`'s
    /// level and scale, `w⁺ + i·v⁺` refreshed, then `w = (y + ȳ)/2` and `v = −i·(y − ȳ)/2`
    /// (the halving is scale bookkeeping), raised by an integer towards the `working` scale.
    fn refresh_both(
        &self,
        eval: &Evaluator,
        w: &Ciphertext,
        v: &Ciphertext,
        working: f64,
        refresh: &mut dyn FnMut(&Ciphertext) -> Result<Ciphertext>,
    ) -> Result<(Ciphertext, Ciphertext)> {
        let w = helr::scaled_to(eval, w, 1.0, v.level(), v.scale())?;
        let y = refresh(&eval.add(&w, &eval.mul_by_i(v, false)?)?)?;
        let y_bar = eval.conjugate(&y)?;
        let half = 2.0 * y.scale();
        let raise = (working / half).round().max(1.0);
        let part = |ct: Ciphertext| -> Result<Ciphertext> {
            let mut ct = if raise > 1.0 { eval.mul_integer(&ct, raise as i64)? } else { ct };
            ct.set_scale(half * raise);
            Ok(ct)
        };
        let w = part(eval.add(&y, &y_bar)?)?;
        let v = part(eval.mul_by_i(&eval.sub(&y, &y_bar)?, true)?)?;
        Ok((w, v))
    }

    /// The cleartext twin: `iterations` NAG steps over `batches` (each a list of samples of
    /// `2^log_features` label-folded features `z_k = y_k·x_k`) from `(v, w)`; returns `w⁺`.
    pub fn train_plain(&self, batches: &[Vec<Vec<f64>>], v: &[f64], w: &[f64]) -> Vec<f64> {
        let [c0, c1, c3] = helr::SIGMOID3;
        let (mut v, mut w) = (v.to_vec(), w.to_vec());
        for batch in batches {
            let mut g = vec![0.0; v.len()];
            for z in batch {
                let ip: f64 = z.iter().zip(&v).map(|(a, b)| a * b).sum();
                let s = self.helr.gamma * (c0 + c1 * ip + c3 * ip * ip * ip);
                g.iter_mut().zip(z).for_each(|(gi, zi)| *gi += s * zi);
            }
            let w_next: Vec<f64> = v.iter().zip(&g).map(|(a, b)| a + b).collect();
            let eta = self.helr.eta;
            v = w_next.iter().zip(&w).map(|(a, b)| (1.0 - eta) * a + eta * b).collect();
            w = w_next;
        }
        w
    }
}

/// The shares of a mini-batch of `n` data ciphertexts over `k` workers: contiguous ranges in
/// batch order, the first `n mod k` one ciphertext longer, none empty (at most `n` shares).
///
/// # Errors
/// `k` = 0 or `n` = 0.
pub fn shares(n: usize, k: usize) -> Result<Vec<std::ops::Range<usize>>> {
    if k == 0 || n == 0 {
        return Err(CircuitError::Invalid(format!(
            "cannot share {n} data ciphertexts over {k} workers"
        )));
    }
    let k = k.min(n);
    let (base, extra) = (n / k, n % k);
    let mut start = 0;
    Ok((0..k)
        .map(|j| {
            let len = base + usize::from(j < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect())
}

/// Record a run of `iterations` of `lr` at `params` in trace mode, from weights at `start`
/// (a level index), each bootstrap a marker ([`basalt_trace::Marker::Bootstrap`])
/// ending at `refreshed` with the input's scale, the bootstrap taking inputs up to
/// `boot_scale`; `seeded` keys as for the other workloads. Returns the trace and the
/// bootstraps.
///
/// # Errors
/// A chain too short for one iteration; scheme errors.
pub fn record_logreg(
    params: &Parameters,
    lr: &LogReg,
    (start, iterations): (usize, usize),
    (refreshed, boot_scale): (usize, f64),
    seeded: bool,
) -> Result<(Trace, usize)> {
    let schedule = lr.schedule(params, start, refreshed, iterations)?;
    let keys =
        KeyGenerator::new(params).gen_symbolic_evaluation_keys(&lr.rotations(), true, seeded);
    let eval = Evaluator::new(params, keys)?;
    let shape = |level: usize| -> Result<Ciphertext> {
        let mut ct = Ciphertext::symbolic(params, level)?;
        ct.set_slots(lr.slots());
        Ok(ct)
    };
    let batches = schedule
        .iter()
        .map(|it| (0..lr.cts).map(|_| shape(it.level)).collect())
        .collect::<Result<Vec<_>>>()?;
    let (v, w) = (shape(start)?, shape(start)?);
    let mut bootstraps = 0;
    let mut marker = |ct: &Ciphertext| -> Result<Ciphertext> {
        basalt_trace::mark(basalt_trace::Marker::Bootstrap);
        bootstraps += 1;
        let mut out = shape(refreshed)?;
        out.set_scale(ct.scale());
        Ok(out)
    };
    let (out, t) =
        record(|| lr.evaluate(&eval, &schedule, &batches, (&v, &w), boot_scale, &mut marker));
    out?;
    Ok((t, bootstraps))
}
