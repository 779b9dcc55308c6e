//! Radix-integer benchmarks (`integer_bench` example): add, mul and comparisons of 8- to 64-bit
//! encrypted integers on explicit rayon pools, one JSON record per measurement, named as the
//! TFHE-rs peer bench names its lines (`uint8_add`, `uint32_mul`, …) so the two can be laid
//! side by side.
//!
//! Every measured result is decrypted once and checked against wrapping arithmetic, so a
//! benchmark of a wrong operation fails instead of reporting a time.

use std::time::Instant;

use serde::Serialize;

use basalt_tfhe::integer::{CarryPropagation, IntegerClient, IntegerType, RadixCiphertext};
use basalt_tfhe::params::TfheParams;
use basalt_tfhe::random::Csprng;

/// An operation measured on two fresh (clean) operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Mul,
    /// `a < b` (an encrypted boolean).
    Lt,
    /// `a == b`.
    Eq,
}

impl IntOp {
    pub fn name(self) -> &'static str {
        match self {
            IntOp::Add => "add",
            IntOp::Mul => "mul",
            IntOp::Lt => "lt",
            IntOp::Eq => "eq",
        }
    }

    pub fn parse(s: &str) -> Option<IntOp> {
        [IntOp::Add, IntOp::Mul, IntOp::Lt, IntOp::Eq].into_iter().find(|o| o.name() == s)
    }
}

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct IntegerBenchRecord {
    pub library: String,
    pub set: String,
    /// `uint{bits}_{op}`.
    pub bench: String,
    pub bits: u32,
    pub threads: usize,
    /// Carry propagation the additions ran with on this pool (`Scan` or `Ripple`).
    pub carry: String,
    pub reps: usize,
    pub median_ms: f64,
    pub min_ms: f64,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct IntegerBenchOptions {
    pub threads: Vec<usize>,
    pub bits: Vec<u32>,
    pub ops: Vec<IntOp>,
    pub reps: usize,
    /// Carry propagation (default: chosen by thread count).
    pub carry: CarryPropagation,
}

impl Default for IntegerBenchOptions {
    fn default() -> Self {
        IntegerBenchOptions {
            threads: vec![1, 2],
            bits: vec![8, 16, 32, 64],
            ops: vec![IntOp::Add, IntOp::Mul, IntOp::Lt, IntOp::Eq],
            reps: 5,
            carry: CarryPropagation::Auto,
        }
    }
}

/// All measurements on `params`; `sink` sees each record as soon as it is made.
pub fn run_integer_bench(
    params: &TfheParams,
    opts: &IntegerBenchOptions,
    sink: &mut dyn FnMut(&IntegerBenchRecord),
) -> Result<Vec<IntegerBenchRecord>, String> {
    let e = |x: basalt_tfhe::integer::IntegerError| x.to_string();
    let mut rng = Csprng::from_os();
    let ck = IntegerClient::<u64>::with_rng(params, &mut rng).map_err(e)?;
    let mut sk = ck.server_with(&mut rng);
    sk.set_carry_propagation(opts.carry);
    let block_bits = params.message_modulus.trailing_zeros() as usize;
    let mut out = Vec::new();
    for &t in &opts.threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t.max(1))
            .build()
            .map_err(|x| x.to_string())?;
        for &bits in &opts.bits {
            let ty = IntegerType::unsigned(bits);
            let mask = ty.mask() as i128;
            let (a, b) = ((rng.next_u64() as i128) & mask, (rng.next_u64() as i128) & mask);
            let ca = ck.encrypt_with(a, ty, &mut rng).map_err(e)?;
            let cb = ck.encrypt_with(b, ty, &mut rng).map_err(e)?;
            let carry = opts.carry.resolve(bits as usize / block_bits, t.max(1));
            for &op in &opts.ops {
                let run = || -> Result<i128, String> {
                    let dec = |c: &RadixCiphertext<u64>| ck.decrypt(c).map_err(e);
                    match op {
                        IntOp::Add => dec(&sk.add(&ca, &cb).map_err(e)?),
                        IntOp::Mul => dec(&sk.mul(&ca, &cb).map_err(e)?),
                        IntOp::Lt => {
                            Ok(ck.decrypt_bool(&sk.lt(&ca, &cb).map_err(e)?).map_err(e)? as i128)
                        }
                        IntOp::Eq => {
                            Ok(ck.decrypt_bool(&sk.eq(&ca, &cb).map_err(e)?).map_err(e)? as i128)
                        }
                    }
                };
                let want = match op {
                    IntOp::Add => a.wrapping_add(b) & mask,
                    IntOp::Mul => a.wrapping_mul(b) & mask,
                    IntOp::Lt => (a < b) as i128,
                    IntOp::Eq => (a == b) as i128,
                };
                // Warm-up and check (decryption is outside the timed calls).
                let got = pool.install(run)?;
                if got != want {
                    return Err(format!("uint{bits} {}: got {got}, want {want}", op.name()));
                }
                let mut times: Vec<f64> = (0..opts.reps.max(1))
                    .map(|_| {
                        pool.install(|| {
                            let t0 = Instant::now();
                            let r = match op {
                                IntOp::Add => sk.add(&ca, &cb).map(drop),
                                IntOp::Mul => sk.mul(&ca, &cb).map(drop),
                                IntOp::Lt => sk.lt(&ca, &cb).map(drop),
                                IntOp::Eq => sk.eq(&ca, &cb).map(drop),
                            };
                            r.map(|_| t0.elapsed().as_secs_f64() * 1e3).map_err(e)
                        })
                    })
                    .collect::<Result<_, _>>()?;
                times.sort_by(|x, y| x.total_cmp(y));
                let rec = IntegerBenchRecord {
                    library: "basalt".into(),
                    set: params.name.clone(),
                    bench: format!("uint{bits}_{}", op.name()),
                    bits,
                    threads: t,
                    carry: format!("{carry:?}"),
                    reps: times.len(),
                    median_ms: times[times.len() / 2],
                    min_ms: times[0],
                };
                sink(&rec);
                out.push(rec);
            }
        }
    }
    Ok(out)
}
