//! Homomorphic evaluation of a Chebyshev polynomial with depth `⌈log2(d+1)⌉` and an exact
//! output scale.
//!
//! # Algorithm
//! 1. `T_1 = αx + β`, the map of `[a, b]` onto `[−1, 1]`: free on `[−1, 1]`; otherwise one
//!    constant product and one rescale (**+1 level**, as in Lattigo). Folding `α` into the scale
//!    instead would be free but makes the scales of `T_{2^i}` drift by `α^{−2^i}`, which
//!    starves the leaf constants of precision (measured: 13.7 bits at degree 7 on `[−8, 8]`).
//! 2. Powers on demand, memoised: `T_{2k} = 2T_k² − 1`, `T_{a+b} = 2T_aT_b − T_{a−b}` with
//!    `a = 2^{⌈log2 k⌉−1}`, so `T_k` sits `⌈log2 k⌉` levels below the input. Only the powers a
//!    coefficient needs are built: an odd (even) polynomial never builds even (odd) baby steps.
//! 3. Baby-step giant-step recursion on coefficient vectors: a polynomial of degree
//!    `< 2^s` is a *leaf* `Σ c_k T_k` (constants multiplied one level above the target, one
//!    rescale); otherwise split at `m = 2^{⌊log2 d⌋}`: `p = q·T_m + r` (Chebyshev division:
//!    `q_0 = c_m`, `q_j = 2c_{m+j}`, `r_k = c_k − c_{2m−k}`), `q` evaluated one level higher,
//!    multiplied by `T_m`, rescaled, plus `r`.
//! 4. Scales (Lattigo's approach): every node is asked for an exact `(level, scale)`; `q` is
//!    asked for `S·q_{L+1}/scale(T_m)` so that `q·T_m` rescaled lands on `S`, and each leaf
//!    multiplies `T_k` by `c_k` at scale `S'·/scale(T_k)` with `S' = S·q_{L+1}`. The root is
//!    asked for the input's scale (or any target) at level `L_0 − ⌈log2(d+1)⌉`.
//! 5. Depth: a leaf constant costs a rescale, so a leaf must sit one level below its powers.
//!    A node becomes a leaf only if it has degree `< 2^s` *and* fits; otherwise it is split
//!    further (down to degree 1, which always fits because `T_1` is the input). The deep
//!    `q`-chains thus end in small leaves while the shallow `r` branches get full baby-step
//!    leaves; the planner picks the `s` with the fewest ciphertext products.
//!
//! # Source
//! Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, EUROCRYPT 2021, §4.2 (BSGS in the Chebyshev
//! basis, target scales); Paterson & Stockmeyer, SIAM J. Comput. 1973; Lattigo
//! `circuits/common/polynomial`.
//!
//! # Cost
//! Exactly `⌈log2(d+1)⌉` levels (`c` primes each with double-prime scaling), plus one if
//! `[a, b] ≠ [−1, 1]`; non-scalar products: the powers built plus one per split node.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;

use basalt_ckks::{Ciphertext, Evaluator, Parameters};

use super::Chebyshev;
use crate::error::{CircuitError, Result};

fn ceil_log2(k: usize) -> usize {
    if k <= 1 { 0 } else { (usize::BITS - (k - 1).leading_zeros()) as usize }
}

fn degree(c: &[f64]) -> Option<usize> {
    c.iter().rposition(|&x| x != 0.0)
}

/// `p = q·T_m + r` for `deg p < 2m`.
fn split(c: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
    let d = c.len() - 1;
    let mut q = vec![0.0; d - m + 1];
    q[0] = c[m];
    for j in 1..=d - m {
        q[j] = 2.0 * c[m + j];
    }
    let mut r = c[..m].to_vec();
    for (k, rk) in r.iter_mut().enumerate().skip(1) {
        if 2 * m - k <= d {
            *rk -= c[2 * m - k];
        }
    }
    (q, r)
}

/// Level plan of a polynomial evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolyPlan {
    /// Levels consumed (logical; `c` primes each).
    pub depth: usize,
    /// Baby steps are `T_0 … T_{2^log_split − 1}`.
    pub log_split: usize,
    /// Output level (limb index).
    pub out_level: usize,
    /// Ciphertext-ciphertext products (powers plus split nodes).
    pub products: usize,
}

#[derive(Clone, Copy)]
struct Planner {
    c: usize,
    top: usize,
    s: usize,
}

impl Planner {
    fn lvl(&self, k: usize) -> Option<usize> {
        self.top.checked_sub(self.c * ceil_log2(k))
    }
    /// A leaf of degree `< 2^s` whose powers all sit at least one level above `level`.
    fn leaf_fits(&self, coeffs: &[f64], level: usize) -> bool {
        let Some(d) = degree(coeffs) else { return true };
        d < (1 << self.s)
            && (1..=d)
                .filter(|&k| coeffs[k] != 0.0)
                .all(|k| self.lvl(k).is_some_and(|l| l >= level + self.c))
    }
    /// Split nodes of the evaluation of `coeffs` at `level` (powers used go to `powers`), or
    /// `None` if it does not fit.
    fn walk(&self, coeffs: &[f64], level: usize, powers: &mut Vec<usize>) -> Option<usize> {
        let Some(d) = degree(coeffs) else {
            return Some(0);
        };
        if self.leaf_fits(coeffs, level) {
            powers.extend((1..=d).filter(|&k| coeffs[k] != 0.0));
            return Some(0);
        }
        if d <= 1 {
            return None;
        }
        let m = 1usize << (usize::BITS - 1 - d.leading_zeros());
        if self.lvl(m)? < level + self.c {
            return None;
        }
        powers.push(m);
        let (q, r) = split(&coeffs[..=d], m);
        let mut n = 1 + self.walk(&q, level + self.c, powers)?;
        if degree(&r).is_some() {
            n += self.walk(&r, level, powers)?;
        }
        Some(n)
    }
}

/// Levels spent mapping `[a, b]` onto `[−1, 1]` (0 or 1).
pub fn map_levels(p: &Chebyshev) -> usize {
    usize::from(!(p.a == -1.0 && p.b == 1.0))
}

/// The powers built to have those in `powers`, `T_1` included (closure under the recurrence
/// `T_k = 2·T_a·T_b − T_{a−b}`).
fn power_closure(powers: &[usize]) -> std::collections::BTreeSet<usize> {
    let mut built = std::collections::BTreeSet::from([1usize]);
    let mut todo: Vec<usize> = powers.to_vec();
    while let Some(k) = todo.pop() {
        if built.insert(k) {
            let a = 1usize << (ceil_log2(k) - 1);
            todo.extend([a, k - a, a - (k - a)].into_iter().filter(|&x| x >= 1));
        }
    }
    built
}

/// Products needed to build the powers in `powers`.
fn power_products(powers: &[usize]) -> usize {
    power_closure(powers).len() - 1
}

/// Plan the evaluation of `p` on an input at `level`: the baby-step bound `2^s` with the
/// fewest ciphertext products among those that keep the depth optimal.
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] if the depth (see [`map_levels`]) is not left above the
/// base primes.
pub fn plan(params: &Parameters, level: usize, p: &Chebyshev) -> Result<PolyPlan> {
    let c = params.primes_per_rescale();
    let depth = p.depth() + map_levels(p);
    let base = params.base_primes();
    let available = (level + 1).saturating_sub(base) / c;
    if depth > available {
        return Err(CircuitError::NotEnoughLevels { needed: depth, available, level });
    }
    let out_level = level - c * depth;
    let top = level - c * map_levels(p);
    let mut best: Option<PolyPlan> = None;
    for s in 1..=p.depth().max(1) {
        let pl = Planner { c, top, s };
        let mut powers = Vec::new();
        if let Some(splits) = pl.walk(&p.coeffs, out_level, &mut powers) {
            let products = splits + power_products(&powers);
            if best.is_none_or(|b| products < b.products) {
                best = Some(PolyPlan { depth, log_split: s, out_level, products });
            }
        }
    }
    best.ok_or_else(|| CircuitError::Invalid("no split fits the depth (internal)".into()))
}

/// The level of every Chebyshev power an evaluation of `p` on an input at `level` builds
/// ([`plan`]'s split; `T_1` included): [`PolyEvaluator`] keeps each until the evaluation
/// ends, so these ciphertexts are alive together at its end. `T_k` sits at the level its
/// recurrence leaves it, `⌈log2 k⌉` rescales below `T_1`. What a memory estimate counts.
///
/// # Errors
/// As [`plan`].
pub fn power_levels(params: &Parameters, level: usize, p: &Chebyshev) -> Result<Vec<usize>> {
    let pl = plan(params, level, p)?;
    let c = params.primes_per_rescale();
    let planner = Planner { c, top: level - c * map_levels(p), s: pl.log_split };
    let mut powers = Vec::new();
    planner
        .walk(&p.coeffs, pl.out_level, &mut powers)
        .ok_or_else(|| CircuitError::Invalid("no split fits the depth (internal)".into()))?;
    Ok(power_closure(&powers)
        .into_iter()
        .map(|k| planner.lvl(k).expect("a planned power fits the depth"))
        .collect())
}

thread_local! {
    static MERGED_RESCALES: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every polynomial evaluated inside it (on this thread) merging each
/// relinearised product's rescale into its ModDown, as [`evaluate_with`]`(.., true)` does.
///
/// Why a scope rather than a flag: an accelerator that fuses ModDown and Rescale in every
/// HMult (Osiris §V, after MAD) runs whole programs — the comparison's composite polynomials,
/// ReLU's sign, a sigmoid — whose polynomial evaluations sit deep inside circuits that take no
/// such option. The Chebyshev power steps `2·T_a·T_b − T_{a−b}` change the product before
/// its rescale, so a rewrite of the recorded trace cannot fuse them; evaluating them with
/// [`Evaluator::mul_relin_rescale`] does (same levels and scales, the result within rounding).
/// Nested scopes are fine; the previous state is restored when `f` returns or unwinds.
pub fn with_merged_rescales<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            MERGED_RESCALES.with(|m| m.set(self.0));
        }
    }
    let _restore = Restore(MERGED_RESCALES.with(|m| m.replace(true)));
    f()
}

/// Whether this thread is inside [`with_merged_rescales`].
pub fn merged_rescales() -> bool {
    MERGED_RESCALES.with(Cell::get)
}

/// Evaluates polynomials on one input, keeping the Chebyshev powers it has built.
pub struct PolyEvaluator<'a> {
    eval: &'a Evaluator,
    c: usize,
    powers: BTreeMap<usize, Ciphertext>,
    planner: Option<Planner>,
    /// Rescale each relinearised product inside its ModDown ([`Evaluator::mul_relin_rescale`]).
    merge: bool,
}

impl<'a> PolyEvaluator<'a> {
    /// Map `ct` from `[a, b]` to `[−1, 1]` (one level unless `[a, b] = [−1, 1]`) and keep it
    /// as `T_1`, at the input's scale.
    ///
    /// # Errors
    /// Scheme errors (no level left for the map).
    pub fn new(eval: &'a Evaluator, ct: &Ciphertext, a: f64, b: f64) -> Result<Self> {
        let c = eval.params().primes_per_rescale();
        let merge = merged_rescales();
        let mut pe = PolyEvaluator { eval, c, powers: BTreeMap::new(), planner: None, merge };
        let t1 = if a == -1.0 && b == 1.0 {
            ct.clone()
        } else {
            let (alpha, beta) = (2.0 / (b - a), -(a + b) / (b - a));
            let t = eval.mul_const_scaled(ct, alpha, pe.drop_factor(ct.level()))?;
            let t = eval.add_const(&t, beta.into())?;
            let mut t = eval.rescale(&t)?;
            t.set_scale(ct.scale());
            t
        };
        pe.powers.insert(1, t1);
        Ok(pe)
    }

    fn drop_to(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        Ok(self.eval.drop_level(ct, ct.level() - level)?)
    }

    /// `T_k` at `level` (borrowed when it already sits there; otherwise only the kept limbs
    /// are copied).
    fn power_at(&self, k: usize, level: usize) -> Result<Cow<'_, Ciphertext>> {
        let t = &self.powers[&k];
        Ok(if t.level() == level { Cow::Borrowed(t) } else { Cow::Owned(self.drop_to(t, level)?) })
    }

    fn drop_factor(&self, level: usize) -> f64 {
        self.eval.params().q()[level + 1 - self.c..=level].iter().map(|&q| q as f64).product()
    }

    /// Build `T_k` (and the powers it needs) if it is not there yet.
    fn ensure_power(&mut self, k: usize) -> Result<()> {
        if self.powers.contains_key(&k) {
            return Ok(());
        }
        let a = 1usize << (ceil_log2(k) - 1);
        let b = k - a;
        self.ensure_power(a)?;
        self.ensure_power(b)?;
        if a != b {
            self.ensure_power(a - b)?;
        }
        // T_k = 2·T_a·T_b − T_{a−b} (T_0 = 1).
        let lp = self.powers[&a].level().min(self.powers[&b].level());
        let out = if self.merge {
            let (ta, tb) = (self.power_at(a, lp)?, self.power_at(b, lp)?);
            let scale = ta.scale() * tb.scale();
            let neg = if a == b {
                None
            } else {
                let tc = self.power_at(a - b, lp)?;
                let mut neg = self.eval.mul_const_scaled(&tc, -1.0, scale / tc.scale())?;
                neg.set_scale(scale);
                Some(neg)
            };
            let one = if a == b { -1.0 } else { 0.0 };
            self.eval.mul_relin_rescale(&ta, &tb, true, neg.as_ref(), one)?
        } else {
            let prod = {
                let (ta, tb) = (self.power_at(a, lp)?, self.power_at(b, lp)?);
                self.eval.mul_relin(&ta, &tb)?
            };
            let mut two = self.eval.add(&prod, &prod)?;
            if a == b {
                two = self.eval.add_const(&two, (-1.0).into())?;
            } else {
                let tc = self.power_at(a - b, lp)?;
                let mut neg = self.eval.mul_const_scaled(&tc, -1.0, two.scale() / tc.scale())?;
                neg.set_scale(two.scale());
                self.eval.add_assign(&mut two, &neg)?;
            }
            self.eval.rescale(&two)?
        };
        self.powers.insert(k, out);
        Ok(())
    }

    fn leaf(&mut self, coeffs: &[f64], level: usize, scale: f64) -> Result<Ciphertext> {
        let terms: Vec<usize> = (1..coeffs.len()).filter(|&k| coeffs[k] != 0.0).collect();
        self.ensure_power(1)?;
        if terms.is_empty() {
            let t1 = self.power_at(1, level)?;
            let mut z = self.eval.mul_const_scaled(&t1, 0.0, scale / t1.scale())?;
            z.set_scale(scale);
            return Ok(self.eval.add_const(&z, coeffs[0].into())?);
        }
        for &k in &terms {
            self.ensure_power(k)?;
        }
        // Σ c_k·T_k one level above the target, accumulated in place (no intermediate
        // ciphertexts, no copies of the dropped limbs), then one rescale.
        let up = level + self.c;
        let s_up = scale * self.drop_factor(up);
        let mut acc = self.eval.zero_like(&self.powers[&terms[0]], up, s_up)?;
        for k in terms {
            let t = &self.powers[&k];
            self.eval.mul_const_add_assign(&mut acc, t, coeffs[k], s_up / t.scale())?;
        }
        if coeffs[0] != 0.0 {
            acc = self.eval.add_const(&acc, coeffs[0].into())?;
        }
        let mut out = self.eval.rescale(&acc)?;
        out.set_scale(scale);
        Ok(out)
    }

    fn node(&mut self, coeffs: &[f64], level: usize, scale: f64) -> Result<Ciphertext> {
        let d = degree(coeffs).unwrap_or(0);
        let pl = self.planner.expect("planned before evaluation");
        if d == 0 || pl.leaf_fits(coeffs, level) {
            return self.leaf(&coeffs[..=d], level, scale);
        }
        let m = 1usize << (usize::BITS - 1 - d.leading_zeros());
        let (q, r) = split(&coeffs[..=d], m);
        self.ensure_power(m)?;
        let tm_scale = self.powers[&m].scale();
        let up = level + self.c;
        let q_ct = self.node(&q, up, scale * self.drop_factor(up) / tm_scale)?;
        let tm = self.power_at(m, up)?;
        let mut out = if self.merge {
            self.eval.mul_relin_rescale(&q_ct, &tm, false, None, 0.0)?
        } else {
            self.eval.rescale(&self.eval.mul_relin(&q_ct, &tm)?)?
        };
        drop(tm);
        out.set_scale(scale);
        if degree(&r).is_some() {
            let r_ct = self.node(&r, level, scale)?;
            self.eval.add_assign(&mut out, &r_ct)?;
        }
        Ok(out)
    }
}

/// `p(x)` slot-wise, output at scale `target_scale` (default: the input's scale) and level
/// `ct.level() − ⌈log2(d+1)⌉` (times the primes per rescale). Inside [`with_merged_rescales`]
/// its products rescale within their ModDown ([`evaluate_with`]).
///
/// # Example
/// ```
/// use basalt_circuits::polynomial::{Chebyshev, evaluate};
/// use basalt_circuits::testing::{Ctx, toy_params};
/// let params = toy_params(10, 4, 40, 5); // insecure toy ring
/// let ctx = Ctx::new(&params, &[])?;
/// let p = Chebyshev::interpolate(|x| (2.0 * x).sin(), -1.0, 1.0, 15)?;
/// let ct = ctx.encrypt_real(&[0.25, -0.5], 2, 4)?;
/// let y = evaluate(&ctx.eval, &ct, &p, None)?;
/// assert_eq!((y.level(), y.scale()), (0, ct.scale())); // 4 = ⌈log2 16⌉ levels, exact scale
/// let have = ctx.decrypt(&y)?;
/// assert!((have[1].re - (-1.0f64).sin()).abs() < 1e-5);
/// # Ok::<(), basalt_circuits::CircuitError>(())
/// ```
///
/// # Errors
/// [`CircuitError::NotEnoughLevels`] before any work if the input has fewer levels left than
/// the depth; [`CircuitError::Ckks`] (e.g. a missing relinearization key).
pub fn evaluate(
    eval: &Evaluator,
    ct: &Ciphertext,
    p: &Chebyshev,
    target_scale: Option<f64>,
) -> Result<Ciphertext> {
    evaluate_with(eval, ct, p, target_scale, false)
}

/// [`evaluate`], with each relinearised product's rescale merged into its ModDown when
/// `merge_rescale` or inside [`with_merged_rescales`] ([`Evaluator::mul_relin_rescale`]; same
/// levels and scales, the result within rounding of the unmerged one).
///
/// # Errors
/// As [`evaluate`].
pub fn evaluate_with(
    eval: &Evaluator,
    ct: &Ciphertext,
    p: &Chebyshev,
    target_scale: Option<f64>,
    merge_rescale: bool,
) -> Result<Ciphertext> {
    let pl = plan(eval.params(), ct.level(), p)?;
    let mut pe = PolyEvaluator::new(eval, ct, p.a, p.b)?;
    pe.merge = merge_rescale || merged_rescales();
    let c = eval.params().primes_per_rescale();
    pe.planner = Some(Planner { c, top: ct.level() - c * map_levels(p), s: pl.log_split });
    let scale = target_scale.unwrap_or(ct.scale());
    let out = pe.node(&p.coeffs, pl.out_level, scale)?;
    debug_assert_eq!(out.level(), pl.out_level);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bsgs_plan_halves_the_products_at_optimal_depth() {
        let params = crate::testing::toy_params(10, 8, 40, 3);
        let p = Chebyshev::interpolate(|x| (3.0 * x).sin() + 0.1 * x * x, -1.0, 1.0, 63).unwrap();
        let pl = plan(&params, 8, &p).unwrap();
        // s = 1 (pure recursive splitting) needs 31 splits + 5 powers = 36 products.
        assert_eq!((pl.depth, pl.out_level, pl.products), (6, 2, 18), "{pl:?}");
        let odd = Chebyshev::interpolate(|x| (3.0 * x).sin(), -1.0, 1.0, 63).unwrap().into_odd();
        assert_eq!(plan(&params, 8, &odd).unwrap().products, 17);
    }

    #[test]
    fn chebyshev_division_is_exact() {
        let p = Chebyshev::new(-1.0, 1.0, vec![0.3, -0.2, 0.5, 0.1, -0.7, 0.25, 0.05]).unwrap();
        let (q, r) = split(&p.coeffs, 4);
        let qp = Chebyshev::new(-1.0, 1.0, q).unwrap();
        let rp = Chebyshev::new(-1.0, 1.0, r).unwrap();
        for i in 0..21 {
            let x = -1.0 + i as f64 * 0.1;
            let t4 = (4.0 * x.acos()).cos();
            let want = p.evaluate_plain(x);
            assert!((qp.evaluate_plain(x) * t4 + rp.evaluate_plain(x) - want).abs() < 1e-12);
        }
    }
}
