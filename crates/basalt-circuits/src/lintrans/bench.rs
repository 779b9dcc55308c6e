//! `basalt bench lintrans`: every strategy on the same transform, encrypted for real, counted
//! (kernel trace), timed (CPU time of the one worker thread) and checked against the
//! cleartext twin.
//!
//! Cases:
//! - [`Case::Dense`]: a dense `s×s` matrix over `s` slots (`s = 512` on a 128-bit `N = 2^15`
//!   ring at level 5, [`dense_params`]; the plain diagonal method needs 511 rotation keys, which
//!   is why the ring is `2^15` and not `2^16`: 511 keys of `LATTIGO_RESIDUAL` would be 16 GB);
//! - [`Case::C2s`]: a bootstrapping-sized transform, the product of three radix-2 FFT butterfly
//!   stages (strides 1, 2, 4; diagonals `{0, ±h}` each) over `2^15` slots, i.e. one
//!   CoeffsToSlots-like level with 15 non-zero diagonals, at the top (level 24) of
//!   `N16QP1546H192H32`.
//!
//! `quick` replaces both by small insecure toy rings (`N = 2^11`) for CI smoke tests.
//!
//! Each strategy runs once under the kernel recorder (counts, precision) and then `reps` times
//! untimed by the recorder; the record holds the median CPU time of the evaluating thread (the
//! bench runs in a one-thread pool, so all work is on that thread) and the median wall time.

use std::collections::BTreeMap;
use std::time::Instant;

use basalt_ckks::{Parameters, ParametersLiteral};
use num_complex::Complex64;
use serde::{Deserialize, Serialize};

use super::{
    Diagonals, GscOrder, Hoisting, LinearTransform, Strategy, rotate_slots, rotations_for,
};
use crate::accounting::{OpCounts, measure};
use crate::error::{CircuitError, Result};
use crate::testing::{Ctx, precision_bits, random_values, toy_params};

/// Which transform to benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    /// Dense `s×s` matrix over `s` slots (512 at full size).
    Dense,
    /// Three composed radix-2 butterfly stages over all slots (CoeffsToSlots-like level).
    C2s,
}

impl Case {
    /// Parse `dense` / `c2s`.
    pub fn parse(s: &str) -> Option<Case> {
        match s.trim().to_ascii_lowercase().as_str() {
            "dense" | "dense512" => Some(Case::Dense),
            "c2s" | "bootstrap" | "coeffs_to_slots" => Some(Case::C2s),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Case::Dense => "dense",
            Case::C2s => "c2s",
        }
    }
}

/// Options of [`run`].
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub cases: Vec<Case>,
    /// Toy rings (CI smoke test).
    pub quick: bool,
    /// Timed repetitions per strategy (after the counted run).
    pub reps: usize,
    /// Baby steps of the BSGS rows (default per case: 32 dense, 4 c2s; 8 and 4 when quick).
    pub n1: Option<usize>,
    /// Worker threads (1: the CPU time is the whole work).
    pub threads: usize,
    /// Run the dense case on this preset instead of [`dense_params`] (e.g. `LATTIGO_RESIDUAL`
    /// on a machine with the memory for 511 of its keys).
    pub dense_preset: Option<String>,
    /// Level of the dense case (default: the top of its parameters).
    pub dense_level: Option<usize>,
    /// Seeded rotation keys (half the memory; the `a` halves are regenerated at each use,
    /// which the CPU time then includes).
    pub seeded: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            cases: vec![Case::Dense, Case::C2s],
            quick: false,
            reps: 3,
            n1: None,
            threads: 1,
            dense_preset: None,
            dense_level: None,
            seeded: false,
        }
    }
}

/// One measured strategy.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LtRecord {
    pub bench: String,
    pub case: String,
    pub params: String,
    pub log_n: u32,
    pub slots: usize,
    pub level: usize,
    /// Key-switching digits at the transform's level.
    pub dnum: usize,
    pub diagonals: usize,
    /// `diagonal`, `bsgs` or `auto`.
    pub strategy: String,
    /// Resolved plan.
    pub n1: usize,
    pub n2: usize,
    pub hoisting: Hoisting,
    /// `bsc` (baby-step centric) or `gsc` (giant-step centric).
    pub order: String,
    pub max_partials: Option<usize>,
    pub rotations: u64,
    pub key_switches: u64,
    /// Forward plus inverse NTTs of one limb.
    pub ntts: u64,
    pub modmults: u64,
    /// Everything the trace counted.
    pub measured: OpCounts,
    /// `measured == LinearTransform::predicted_cost()`.
    pub matches_closed_form: bool,
    pub rotation_keys: usize,
    pub stored_plaintext_bytes: u64,
    /// Time to encode the diagonals (not part of the evaluation).
    pub prepare_ms: f64,
    /// Median CPU time of the evaluating thread over `reps` runs.
    pub thread_cpu_ms: f64,
    pub wall_ms: f64,
    pub reps: usize,
    pub threads: usize,
    pub seeded_keys: bool,
    /// `−log2` of the largest slot error against the cleartext twin.
    pub precision_bits: f64,
}

/// The `N = 2^15` ring of the dense case: `log Q = 60 + 5·40`, three 61-bit special primes,
/// dnum 2 (`log QP = 443 ≤ 881`, 128-bit by the HE Standard table, dense ternary secret).
///
/// # Errors
/// Parameter validation.
pub fn dense_params() -> Result<Parameters> {
    let mut lit = ParametersLiteral::toy(15, 60, 40, 5, 61, 3, 2);
    lit.name = "N15_L5_D2_W40 (bench)".into();
    lit.allow_insecure = false;
    lit.provenance.source = "basalt bench lintrans".into();
    Ok(Parameters::new(lit).map_err(basalt_ckks::CkksError::from)?)
}

/// A radix-2 butterfly stage of stride `h` over `slots` slots, halved so that it is a
/// contraction: `y_t = (x_t + w·x_{t+h})/2` in the upper half of each `2h` block,
/// `y_t = (x_{t−h} − w·x_t)/2` in the lower half, `w = exp(−iπ(t mod h)/h)`.
/// Diagonals `{0, h, −h}`.
pub fn butterfly_stage(slots: usize, h: usize) -> BTreeMap<usize, Vec<Complex64>> {
    let zero = Complex64::new(0.0, 0.0);
    let mut d0 = vec![zero; slots];
    let mut dp = vec![zero; slots];
    let mut dm = vec![zero; slots];
    for t in 0..slots {
        let w = Complex64::from_polar(1.0, -std::f64::consts::PI * (t % h) as f64 / h as f64);
        if (t / h).is_multiple_of(2) {
            d0[t] = Complex64::new(0.5, 0.0);
            dp[t] = 0.5 * w;
        } else {
            dm[t] = Complex64::new(0.5, 0.0);
            d0[t] = -0.5 * w;
        }
    }
    let mut m = BTreeMap::new();
    m.insert(0, d0);
    m.insert(h % slots, dp);
    m.insert((slots - h % slots) % slots, dm);
    m
}

/// The diagonals of `A·B` from those of `A` and `B`: `C_{a+b} += d^A_a ⊙ rot_a(d^B_b)`.
pub fn compose(
    a: &BTreeMap<usize, Vec<Complex64>>,
    b: &BTreeMap<usize, Vec<Complex64>>,
    slots: usize,
) -> BTreeMap<usize, Vec<Complex64>> {
    let mut c: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
    for (&ka, da) in a {
        for (&kb, db) in b {
            let r = rotate_slots(db, ka as i64);
            let e =
                c.entry((ka + kb) % slots).or_insert_with(|| vec![Complex64::new(0.0, 0.0); slots]);
            e.iter_mut().zip(da.iter().zip(&r)).for_each(|(o, (x, y))| *o += x * y);
        }
    }
    c
}

/// The product of butterfly stages with the given strides (applied first to last).
///
/// # Errors
/// [`CircuitError::Invalid`] for a stride that is zero or not below the slots; empty matrix.
pub fn fft_like(slots: usize, strides: &[usize]) -> Result<Diagonals> {
    let mut acc: Option<BTreeMap<usize, Vec<Complex64>>> = None;
    for &h in strides {
        if h == 0 || h >= slots {
            return Err(CircuitError::Invalid(format!("stride {h} must be in 1..{slots}")));
        }
        let s = butterfly_stage(slots, h);
        acc = Some(match acc {
            None => s,
            Some(prev) => compose(&s, &prev, slots),
        });
    }
    let map = acc.ok_or(CircuitError::EmptyMatrix)?;
    Diagonals::from_map(slots, map.into_iter().map(|(k, v)| (k as i64, v)).collect())
}

struct Setup {
    case: Case,
    params: Parameters,
    label: String,
    slots: usize,
    level: usize,
    diags: Diagonals,
    n1: usize,
}

fn setup(case: Case, o: &BenchOptions) -> Result<Setup> {
    let (params, label, slots, level, diags, n1) = match (case, o.quick) {
        (Case::Dense, false) => {
            let (p, label) = match &o.dense_preset {
                None => (dense_params()?, "N15_L5_D2_W40".to_string()),
                Some(name) => {
                    (Parameters::preset(name).map_err(basalt_ckks::CkksError::from)?, name.clone())
                }
            };
            let s = 512;
            let m = crate::testing::random_matrix(s, s, 1.0 / (s as f64).sqrt(), 42);
            let level = o.dense_level.unwrap_or(p.max_level());
            if level == 0 || level > p.max_level() {
                return Err(CircuitError::Invalid(format!(
                    "dense case level {level} must be in 1..={} for {label}",
                    p.max_level()
                )));
            }
            (p, label, s, level, Diagonals::from_dense_real(&m, s)?, 32)
        }
        (Case::Dense, true) if o.dense_preset.is_some() || o.dense_level.is_some() => {
            return Err(CircuitError::Invalid(
                "--quick uses its own toy ring: drop the dense preset/level".into(),
            ));
        }
        (Case::Dense, true) => {
            let p = toy_params(11, 3, 40, 2);
            let s = 64;
            let m = crate::testing::random_matrix(s, s, 1.0 / (s as f64).sqrt(), 42);
            (p, "TOY_N11_L3_D2".to_string(), s, 3, Diagonals::from_dense_real(&m, s)?, 8)
        }
        (Case::C2s, false) => {
            let p = Parameters::preset("N16QP1546H192H32").map_err(basalt_ckks::CkksError::from)?;
            let s = p.max_slots();
            let level = p.max_level();
            (p, "N16QP1546H192H32".to_string(), s, level, fft_like(s, &[1, 2, 4])?, 4)
        }
        (Case::C2s, true) => {
            let p = toy_params(11, 3, 40, 2);
            let s = 256;
            (p, "TOY_N11_L3_D2".to_string(), s, 3, fft_like(s, &[1, 2, 4])?, 4)
        }
    };
    Ok(Setup { case, params, label, slots, level, diags, n1: o.n1.unwrap_or(n1) })
}

/// The strategies of one case: the diagonal method (no / single hoisting), BSGS with `n1` baby
/// steps in both orders and all hoistings (giant-step centric with at most 64 partial sums,
/// so no regrouping), and the automatic plan under Osiris' bound (4 partials) and under 64.
pub fn strategies(n1: usize) -> Vec<Strategy> {
    let mut v = vec![
        Strategy::Diagonal { hoisting: Hoisting::None },
        Strategy::Diagonal { hoisting: Hoisting::Single },
    ];
    for order in
        [GscOrder::BabyStepCentric, GscOrder::GiantStepCentric { max_partials: 64, of_limb: true }]
    {
        for hoisting in [Hoisting::None, Hoisting::Single, Hoisting::Double] {
            v.push(Strategy::Bsgs { n1, hoisting, order });
        }
    }
    v.push(Strategy::Auto { max_partials: 4 });
    v.push(Strategy::Auto { max_partials: 64 });
    v
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Run the cases, calling `sink` with each record as soon as it is measured.
///
/// # Errors
/// [`CircuitError::Invalid`] for zero repetitions or threads, a bad `n1`; scheme errors.
pub fn run(o: &BenchOptions, sink: &mut (dyn FnMut(&LtRecord) + Send)) -> Result<()> {
    if o.reps == 0 {
        return Err(CircuitError::Invalid("reps must be at least 1".into()));
    }
    if o.threads == 0 {
        return Err(CircuitError::Invalid("threads must be at least 1".into()));
    }
    if o.cases.is_empty() {
        return Err(CircuitError::Invalid("no case to run (dense, c2s)".into()));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.threads)
        .build()
        .map_err(|e| CircuitError::Invalid(format!("thread pool: {e}")))?;
    for &case in &o.cases {
        let s = setup(case, o)?;
        pool.install(|| run_case(&s, o, sink))?;
    }
    Ok(())
}

fn run_case(s: &Setup, o: &BenchOptions, sink: &mut (dyn FnMut(&LtRecord) + Send)) -> Result<()> {
    let strategies = strategies(s.n1);
    let mut rots: Vec<i64> = Vec::new();
    for &st in &strategies {
        rots.extend(rotations_for(&s.params, &s.diags, st, s.level)?);
    }
    rots.sort_unstable();
    rots.dedup();
    let ctx = Ctx::with_keys(&s.params, &rots, o.seeded)?;
    let x = random_values(s.slots, 7, false);
    let want = s.diags.evaluate_plain(&x)?;
    let ct = ctx.encrypt(&x, s.slots, s.level)?;
    for st in strategies {
        let t0 = Instant::now();
        let lt = LinearTransform::new(&s.params, s.diags.clone(), st, s.level)?;
        let prepare_ms = t0.elapsed().as_secs_f64() * 1e3;
        let (out, measured) = measure(s.params.n(), || lt.evaluate(&ctx.eval, &ct));
        let bits = precision_bits(&want, &ctx.decrypt(&out?)?);
        let (mut cpu, mut wall) = (Vec::new(), Vec::new());
        for _ in 0..o.reps {
            let (t, c) = (Instant::now(), basalt_math::bench::thread_cpu_ms());
            let y = lt.evaluate(&ctx.eval, &ct)?;
            cpu.push(basalt_math::bench::thread_cpu_ms() - c);
            wall.push(t.elapsed().as_secs_f64() * 1e3);
            drop(y);
        }
        let plan = lt.plan();
        let (strategy, max_partials) = match st {
            Strategy::Diagonal { .. } => ("diagonal", None),
            Strategy::Bsgs { order: GscOrder::GiantStepCentric { max_partials, .. }, .. } => {
                ("bsgs", Some(max_partials))
            }
            Strategy::Bsgs { .. } => ("bsgs", None),
            Strategy::Auto { max_partials } => ("auto", Some(max_partials)),
        };
        let order = match plan.order {
            GscOrder::BabyStepCentric => "bsc",
            GscOrder::GiantStepCentric { .. } => "gsc",
        };
        let rec = LtRecord {
            bench: "lintrans".into(),
            case: s.case.name().into(),
            params: s.label.clone(),
            log_n: s.params.log_n(),
            slots: s.slots,
            level: s.level,
            dnum: s.params.dnum_at(s.level),
            diagonals: s.diags.len(),
            strategy: strategy.into(),
            n1: plan.n1,
            n2: lt.split_n2(),
            hoisting: plan.hoisting,
            order: order.into(),
            max_partials,
            rotations: measured.rotations,
            key_switches: measured.key_switches,
            ntts: measured.ntt_limbs + measured.intt_limbs,
            modmults: measured.modmults,
            measured,
            matches_closed_form: measured == lt.predicted_cost(),
            rotation_keys: lt.rotations().len(),
            stored_plaintext_bytes: lt.stored_plaintext_bytes(),
            prepare_ms,
            thread_cpu_ms: median(cpu),
            wall_ms: median(wall),
            reps: o.reps,
            threads: rayon::current_num_threads(),
            seeded_keys: o.seeded,
            precision_bits: bits,
        };
        sink(&rec);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composed_stages_equal_stage_by_stage_application() {
        let slots = 32;
        let x = random_values(slots, 3, false);
        let d = fft_like(slots, &[1, 2, 4]).unwrap();
        assert_eq!(d.len(), 15, "offsets −7..7");
        let mut y = x.clone();
        for h in [1, 2, 4] {
            let st = Diagonals::from_map(
                slots,
                butterfly_stage(slots, h).into_iter().map(|(k, v)| (k as i64, v)).collect(),
            )
            .unwrap();
            y = st.evaluate_plain(&y).unwrap();
        }
        let z = d.evaluate_plain(&x).unwrap();
        assert!(precision_bits(&y, &z) > 45.0);
        // A single stage is a (scaled) FFT butterfly: with x = e_0 + e_1 the stride-1 stage
        // gives (x_0 + x_1)/2 and (x_0 − x_1)/2.
        let mut e = vec![Complex64::new(0.0, 0.0); slots];
        e[0] = Complex64::new(1.0, 0.0);
        e[1] = Complex64::new(3.0, 0.0);
        let st = Diagonals::from_map(
            slots,
            butterfly_stage(slots, 1).into_iter().map(|(k, v)| (k as i64, v)).collect(),
        )
        .unwrap();
        let y = st.evaluate_plain(&e).unwrap();
        assert!((y[0] - Complex64::new(2.0, 0.0)).norm() < 1e-12);
        assert!((y[1] - Complex64::new(-1.0, 0.0)).norm() < 1e-12);
        assert!(fft_like(slots, &[0]).is_err());
        assert!(fft_like(slots, &[]).is_err());
    }

    #[test]
    fn dense_bench_params_are_secure() {
        let p = dense_params().unwrap();
        assert_eq!((p.log_n(), p.max_level(), p.dnum()), (15, 5, 2));
    }
}
