//! Thread-CPU timing and output fingerprints of the key-switching operations, for performance
//! work that must stay bit-identical.
//!
//! ```text
//! cargo run --release -p basalt-ckks --example op_probe -- gen /tmp/probe [PRESET]
//! cargo run --release -p basalt-ckks --example op_probe -- run /tmp/probe [REPS] [OPS]
//! ```
//!
//! `gen` makes keys (relinearization, rotations 1..=8) and two ciphertexts at the top level and
//! stores them, so that later runs of changed code see the same inputs (key generation is
//! randomised). `run` loads them into a one-thread pool, times each operation (`mul_relin`,
//! `rescale`, `rotate`, `hoisted8`; default all) by the thread's CPU clock, which load on the
//! other core disturbs far less than wall time, counts minor page faults, and prints a SHA3
//! fingerprint of each result: equal fingerprints before and after a change mean bit-identical
//! outputs.

use std::path::Path;

use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::*;
use sha3::{Digest, Sha3_256};

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
}

/// CPU seconds consumed by the calling thread.
fn thread_cpu() -> f64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: CLOCK_THREAD_CPUTIME_ID (3) with a valid, writable timespec of the C layout.
    unsafe { clock_gettime(3, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

/// Minor page faults of the calling thread (`ru_minflt` of `RUSAGE_THREAD`).
fn minor_faults() -> i64 {
    let mut ru = [0i64; 18];
    // SAFETY: RUSAGE_THREAD (1); `struct rusage` is 18 longs on x86-64 Linux.
    unsafe { getrusage(1, &mut ru) };
    ru[8]
}

fn fingerprint(cts: &[Ciphertext]) -> String {
    let mut h = Sha3_256::new();
    for ct in cts {
        for p in ct.polys() {
            for v in p.data() {
                h.update(v.to_le_bytes());
            }
        }
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn generate(dir: &Path, preset: &str) -> Result<()> {
    std::fs::create_dir_all(dir).expect("create dir");
    let params = Parameters::preset(preset)?;
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let rots: Vec<i64> = (1..=8).collect();
    let keys = kg.gen_evaluation_keys(&sk, &rots, false, false);
    let enc = Encoder::new(&params);
    let slots = params.max_slots();
    let level = params.max_level();
    for (name, f) in [("a", 7.0), ("b", 5.0)] {
        let v: Vec<Complex64> =
            (0..slots).map(|i| Complex64::new((f * i as f64 / slots as f64).sin(), 0.25)).collect();
        let pt = enc.encode(&v, slots, level, params.default_scale())?;
        let ct = encrypt_sk(&params, &pt, &sk)?;
        std::fs::write(dir.join(format!("{name}.ct")), ct.to_bytes()?).expect("write");
    }
    std::fs::write(dir.join("keys.bin"), keys.to_bytes()?).expect("write");
    std::fs::write(dir.join("preset"), preset).expect("write");
    Ok(())
}

fn run(dir: &Path, reps: usize, ops: &[String]) -> Result<()> {
    let read = |f: &str| std::fs::read(dir.join(f)).expect("run `gen` first");
    let preset = String::from_utf8(read("preset")).expect("utf8");
    let params = Parameters::preset(&preset)?;
    let keys = EvaluationKeys::from_bytes(&params, &read("keys.bin"))?;
    let eval = Evaluator::new(&params, keys)?;
    let a = Ciphertext::from_bytes(&params, &read("a.ct"))?;
    let b = Ciphertext::from_bytes(&params, &read("b.ct"))?;
    let ab = eval.mul_relin(&a, &b)?;
    let rots: Vec<i64> = (1..=8).collect();
    eprintln!("loaded"); // a profiler attaching now sees only the operations
    for op in ops {
        let mut f: Box<dyn FnMut() -> Result<Vec<Ciphertext>>> = match op.as_str() {
            "mul_relin" => Box::new(|| Ok(vec![eval.mul_relin(&a, &b)?])),
            "rescale" => Box::new(|| Ok(vec![eval.rescale(&ab)?])),
            "rotate" => Box::new(|| Ok(vec![eval.rotate(&a, 1)?])),
            "hoisted8" => Box::new(|| eval.rotate_hoisted(&a, &rots)),
            other => panic!("unknown op {other}"),
        };
        let print = f()?;
        let fp = fingerprint(&print);
        drop(print);
        let (mut cpu, mut wall, mut faults) = (vec![], vec![], vec![]);
        for _ in 0..reps {
            let (c0, f0, w0) = (thread_cpu(), minor_faults(), std::time::Instant::now());
            drop(f()?);
            wall.push(w0.elapsed().as_secs_f64() * 1e3);
            cpu.push((thread_cpu() - c0) * 1e3);
            faults.push(minor_faults() - f0);
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        faults.sort();
        println!(
            "{op:10} cpu_med {:8.1} ms  cpu_min {:8.1}  wall_med {:8.1}  faults {:6}  fp {fp}",
            med(&mut cpu),
            cpu[0],
            med(&mut wall),
            faults[faults.len() / 2]
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = Path::new(args.get(1).map(String::as_str).unwrap_or("/tmp/probe"));
    match args.first().map(String::as_str) {
        Some("gen") => generate(dir, args.get(2).map(String::as_str).unwrap_or("N16QP1546H192H32")),
        Some("run") => {
            let reps = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(7);
            let ops: Vec<String> =
                args.get(3).map(|s| s.split(',').map(String::from).collect()).unwrap_or_else(
                    || ["mul_relin", "rescale", "rotate", "hoisted8"].map(String::from).to_vec(),
                );
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
            pool.install(|| run(dir, reps, &ops))
        }
        _ => {
            eprintln!("usage: op_probe gen DIR [PRESET] | run DIR [REPS] [OPS]");
            std::process::exit(2)
        }
    }
}
