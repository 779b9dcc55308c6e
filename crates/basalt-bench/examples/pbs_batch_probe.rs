//! Core-level batch sweep of the batched KS + PBS (and the batched key switch alone), with a
//! hash of the outputs so that two builds can be compared bit for bit.
//!
//! ```text
//! cargo run --release -p basalt-bench --example pbs_batch_probe -- \
//!     [--set TFHERS_2_2_KS_PBS] [--count 64] [--threads 1] [--batches 1,2,4,6,8,10,12,16] \
//!     [--rounds 3] [--ks] [--stages]
//! cargo run --release -p basalt-bench --example pbs_batch_probe -- --micro
//! ```
//!
//! `--ks` adds the batched key switch alone, `--stages` the per-stage times of one PBS, and
//! `--micro` times the blind rotation's kernels one by one at N = 2048 (thread CPU µs per call,
//! cache-hot): the FFT plan's forward and inverse transforms alone, and the library's forward
//! (rotation, digit extraction and twist, then the transform), inverse (transform, then untwist
//! and rounding) and two-row multiply-add around them.
//!
//! Keys and ciphertexts come from a fixed seed (the hash is reproducible run to run). Every
//! round runs each batch size once, in an order rotated by one per round, so a slow phase of a
//! shared machine hits every size alike; the medians are printed as JSON lines: wall ms per
//! PBS and process CPU ms per PBS (all threads).

use std::time::Instant;

use basalt_tfhe::batch::{BatchConfig, keyswitch_batch};
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{ClientKey, Lut, TfheParams};

fn list(s: &str) -> Vec<usize> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn cpu_ms() -> f64 {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct, and getrusage only
    // writes into it.
    let r = unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        r
    };
    let t = |v: libc::timeval| v.tv_sec as f64 * 1e3 + v.tv_usec as f64 * 1e-3;
    t(r.ru_utime) + t(r.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn fnv(h: &mut u64, words: &[u64]) {
    for &w in words {
        *h = (*h ^ w).wrapping_mul(0x100_0000_01b3);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut set = "TFHERS_2_2_KS_PBS".to_string();
    let (mut count, mut threads, mut rounds) = (64usize, 1usize, 3usize);
    let mut batches = vec![1, 2, 4, 6, 8, 10, 12, 16];
    let (mut ks, mut stages, mut micro_only) = (false, false, false);
    let mut ks_tile = None;
    let mut i = 0;
    while i < args.len() {
        let next = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--set" => set = next,
            "--count" => count = next.parse().expect("--count N"),
            "--threads" => threads = next.parse().expect("--threads T"),
            "--rounds" => rounds = next.parse().expect("--rounds R"),
            "--batches" => batches = list(&next),
            "--ks-tile" => ks_tile = Some(next.parse().expect("--ks-tile T")),
            "--ks" => {
                ks = true;
                i += 1;
                continue;
            }
            "--micro" => {
                micro_only = true;
                i += 1;
                continue;
            }
            "--stages" => {
                stages = true;
                i += 1;
                continue;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    if micro_only {
        micro();
        return;
    }
    let params = TfheParams::preset(&set, false).expect("a secure preset");
    assert_eq!(params.torus_bits, 64, "64-bit sets only");
    let mut rng = Csprng::from_seed(2026);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).expect("keys");
    let sk = ck.server_key_with(&mut rng);
    let p = params.plaintext_modulus();
    let lut = Lut::from_fn(&params, |x| (5 * x + 3) % p);
    let cts: Vec<_> =
        (0..count).map(|i| ck.encrypt_with(i as u64 % p, &mut rng).expect("encrypt")).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
    // Bit-for-bit check: every batch size gives the same outputs.
    let mut hash = None;
    for &b in &batches {
        let cfg = BatchConfig { core_batch: Some(b), ..BatchConfig::default() };
        let out = pool.install(|| sk.apply_lut_batch(&cts, &lut, &cfg).expect("valid"));
        for (o, c) in out.iter().zip(0..) {
            assert_eq!(ck.decrypt(o).expect("decrypt"), (5 * (c % p) + 3) % p);
        }
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for o in &out {
            fnv(&mut h, o.lwe().as_slice());
        }
        assert!(hash.is_none_or(|x| x == h), "batch {b} differs");
        hash = Some(h);
    }
    println!(
        "{{\"set\":\"{set}\",\"count\":{count},\"threads\":{threads},\"hash\":\"{:016x}\",\
         \"default_batch\":{}}}",
        hash.unwrap_or(0),
        basalt_tfhe::batch::core_batch_of::<u64>(sk.bsk(), &BatchConfig::default())
    );
    if stages {
        for r in basalt_bench::tfhe::stage_times(&sk) {
            println!("{}", serde_json::to_string(&r).expect("record serialises"));
        }
    }
    let base = BatchConfig {
        ks_tile: ks_tile.unwrap_or(BatchConfig::default().ks_tile),
        ..BatchConfig::default()
    };
    let mut runs: Vec<(String, BatchConfig)> = batches
        .iter()
        .map(|&b| (format!("{b}"), BatchConfig { core_batch: Some(b), ..base }))
        .collect();
    runs.push(("default".into(), base));
    let mut wall = vec![Vec::new(); runs.len()];
    let mut cpu = vec![Vec::new(); runs.len()];
    let mut ks_wall = Vec::new();
    let mut ks_cpu = Vec::new();
    for r in 0..rounds {
        for s in 0..runs.len() {
            let j = (s + r) % runs.len();
            let cfg = runs[j].1;
            let (c0, t0) = (cpu_ms(), Instant::now());
            let out = pool.install(|| sk.apply_lut_batch(&cts, &lut, &cfg).expect("valid"));
            wall[j].push(t0.elapsed().as_secs_f64() * 1e3 / count as f64);
            cpu[j].push((cpu_ms() - c0) / count as f64);
            drop(out);
        }
        if ks {
            let inputs: Vec<&[u64]> = cts.iter().map(|c| c.lwe().as_slice()).collect();
            let mut outs = vec![Vec::new(); count];
            let (c0, t0) = (cpu_ms(), Instant::now());
            pool.install(|| keyswitch_batch(sk.ksk(), &inputs, base.ks_tile, &mut outs));
            ks_wall.push(t0.elapsed().as_secs_f64() * 1e3 / count as f64);
            ks_cpu.push((cpu_ms() - c0) / count as f64);
        }
    }
    for ((name, _), (w, c)) in runs.iter().zip(wall.into_iter().zip(cpu)) {
        println!(
            "{{\"batch\":\"{name}\",\"wall_ms_per_pbs\":{:.3},\"cpu_ms_per_pbs\":{:.3},\
             \"pbs_per_s\":{:.1}}}",
            median(w.clone()),
            median(c),
            1e3 / median(w)
        );
    }
    if ks {
        println!(
            "{{\"ks_tile\":{},\"wall_ms_per_ks\":{:.3},\"cpu_ms_per_ks\":{:.3}}}",
            base.ks_tile,
            median(ks_wall),
            median(ks_cpu)
        );
    }
}

/// Kernel by kernel at N = 2048 (µs per call, cache-hot): the plan's transforms alone and the
/// library's calls around them.
fn micro() {
    use basalt_tfhe::decompose::StreamingDecomposer;
    use basalt_tfhe::external_product::mul_acc2;
    use basalt_tfhe::fft::NegacyclicFft;
    use dyn_stack::PodStack;
    use tfhe_fft::c64;
    use tfhe_fft::ordered::FftAlgo;
    use tfhe_fft::unordered::{Method, Plan};
    let n = 2048;
    let m = n / 2;
    let fft = NegacyclicFft::new(n);
    let plan = Plan::new(m, Method::UserProvided { base_algo: FftAlgo::Dif4, base_n: 256 });
    let mut mem = fft.new_scratch();
    let stack = PodStack::new(&mut mem);
    let mut rng = Csprng::from_seed(3);
    let mut acc = vec![0u64; n];
    rng.fill_uniform(&mut acc);
    let mut buf: Vec<c64> = (0..m).map(|i| c64::new(i as f64, -(i as f64))).collect();
    let b2 = buf.clone();
    let mut b3 = buf.clone();
    let lv = StreamingDecomposer::new(23, 1).digit_level::<u64>(1);
    let reps = 20000;
    let only = std::env::var("MICRO_ONLY").unwrap_or_default();
    let time = |name: &str, f: &mut dyn FnMut()| {
        if !only.is_empty() && only != name {
            return;
        }
        for _ in 0..reps / 10 {
            f();
        }
        let mut v = Vec::new();
        for _ in 0..5 {
            let t = basalt_bench::harness::thread_cpu_ms();
            for _ in 0..reps {
                f();
            }
            v.push((basalt_bench::harness::thread_cpu_ms() - t) * 1e3 / reps as f64);
        }
        println!("{{\"kernel\":\"{name}\",\"us\":{:.3}}}", median(v));
    };
    time("plan.fwd", &mut || plan.fwd(&mut buf, stack));
    time("plan.inv", &mut || plan.inv(&mut buf, stack));
    let mut t = 0;
    time("forward_digits_rotated", &mut || {
        t = (t + 37) % (2 * n);
        fft.forward_digits_rotated(&mut buf, &acc, t, lv, stack)
    });
    time("backward_add", &mut || fft.backward_add(&mut acc, &mut buf, stack));
    time("mul_acc2", &mut || mul_acc2(&mut b3, [(&buf, &b2), (&b2, &buf)], true, [&[]; 2]));
}
