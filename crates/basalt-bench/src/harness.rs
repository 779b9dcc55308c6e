//! The measurement harness every suite uses.
//!
//! What it guarantees, and why each point matters on a machine that is also doing other work:
//!
//! - **Pools built once.** [`Pools`] builds one rayon pool per thread count at start and
//!   starts its threads before any timing; a measurement never pays for spawning threads or
//!   for a new thread's first allocations.
//! - **Warm-up to a steady state.** [`measure`] runs the operation until `warmup` has passed
//!   (at least once), then times repetitions until `min_time` has passed (at least
//!   `min_reps`). The first, cold run is reported apart (`cold_ms`, `cold_faults`).
//! - **Page faults reported apart.** Every repetition records the process's minor page
//!   faults (`getrusage`); a steady state has none. A run that faults is touching fresh
//!   pages (the allocator handed memory back to the kernel and asked for it again): the
//!   record says so instead of hiding it in the time.
//! - **A fixed allocator.** [`fix_allocator_thresholds`] pins glibc's mmap and trim
//!   thresholds. By default glibc adapts them to the largest block freed so far and hands
//!   freed memory back to the kernel; with two or more threads that makes every key switch at
//!   N = 2^16 fault in tens of MB of fresh pages (a 2-thread mul + relinearise on
//!   `LATTIGO_RESIDUAL`: ~11,800 minor faults per operation, against none on one thread), and
//!   how many depends on what the process freed before: on the order the thread counts run in.
//!   Pinned, the steady state has no faults at any thread count. A server gets the same with
//!   `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864`.
//! - **Thread counts interleaved.** [`measure_interleaved`] times the same operation in
//!   every pool round by round, rotating the order each round, so a slow phase of the
//!   machine (another process, a frequency change) lands on every thread count alike and
//!   the speed-up is a ratio of the same conditions.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long to warm up and to measure.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: Duration,
    pub min_time: Duration,
    pub min_reps: usize,
    pub max_reps: usize,
}

impl Timing {
    /// The suites' default: 0.5 s warm-up, 1 s of at least 5 repetitions.
    pub fn standard() -> Timing {
        Timing {
            warmup: Duration::from_millis(500),
            min_time: Duration::from_secs(1),
            min_reps: 5,
            max_reps: 10_000,
        }
    }

    /// For toy rings in tests: a few repetitions, no time floor.
    pub fn quick() -> Timing {
        Timing { warmup: Duration::ZERO, min_time: Duration::ZERO, min_reps: 3, max_reps: 3 }
    }

    /// Exactly `reps` timed repetitions after one warm-up run (long operations: bootstrap).
    pub fn reps(reps: usize) -> Timing {
        Timing {
            warmup: Duration::ZERO,
            min_time: Duration::ZERO,
            min_reps: reps.max(1),
            max_reps: reps.max(1),
        }
    }
}

/// Summary of repeated runs.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub mean_ms: f64,
    /// Median absolute deviation of the wall times: the noise of this measurement.
    pub mad_ms: f64,
    /// CPU time of the calling thread, median (equals the wall time single-threaded on an
    /// idle machine; below it when another process takes the core).
    pub thread_cpu_median_ms: f64,
    pub samples: usize,
    /// Minor page faults per timed repetition (median); 0 in a steady state.
    pub faults_per_rep: u64,
    /// The first (cold) run, not counted above.
    pub cold_ms: f64,
    pub cold_faults: u64,
}

/// CPU time consumed by the calling thread, in milliseconds.
pub fn thread_cpu_ms() -> f64 {
    basalt_math::bench::thread_cpu_ms()
}

fn rusage() -> libc::rusage {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid, writable rusage; RUSAGE_SELF is always supported. On failure
    // the struct stays zeroed.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    r
}

/// Minor page faults of the whole process so far (every thread).
pub fn minor_faults() -> u64 {
    rusage().ru_minflt as u64
}

/// Reset the process's peak resident set (Linux: `/proc/self/clear_refs`), so that
/// [`peak_rss_bytes`] reports the peak of what follows. Returns false where it cannot.
pub fn reset_peak_rss() -> bool {
    // Hand memory already freed back to the kernel first (the pinned thresholds keep it
    // mapped), so the new peak starts from what is live.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap memory; no live allocation is touched.
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Peak resident set of the process since start or the last [`reset_peak_rss`]
/// (`VmHWM`; `getrusage`'s `ru_maxrss`, which never resets, where /proc is missing).
pub fn peak_rss_bytes() -> u64 {
    if let Ok(s) = std::fs::read_to_string("/proc/self/status")
        && let Some(kb) = s
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    {
        return kb * 1024;
    }
    rusage().ru_maxrss as u64 * 1024
}

/// Current resident set (`VmRSS`), 0 where /proc is missing.
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Pin glibc's allocation thresholds (see the module doc): blocks up to 32 MiB come from the
/// heap, and up to 1 GiB of freed memory stays mapped for reuse. Returns false where the C
/// library is not glibc (nothing is changed there).
pub fn fix_allocator_thresholds() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes allocator parameters; called before the benchmark
        // allocates its working memory, with values inside glibc's documented ranges
        // (M_MMAP_THRESHOLD ≤ 32 MiB on 64-bit).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) == 1
                && libc::mallopt(libc::M_TOP_PAD, 64 << 20) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// One timed run: wall, calling-thread CPU, minor faults.
fn sample(f: &mut impl FnMut()) -> (f64, f64, u64) {
    let (fl, c, t) = (minor_faults(), thread_cpu_ms(), Instant::now());
    f();
    let wall = t.elapsed().as_secs_f64() * 1e3;
    (wall, thread_cpu_ms() - c, minor_faults() - fl)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn summarise(cold: (f64, f64, u64), runs: &[(f64, f64, u64)]) -> Stats {
    let mut wall: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let mut cpu: Vec<f64> = runs.iter().map(|r| r.1).collect();
    let mut faults: Vec<u64> = runs.iter().map(|r| r.2).collect();
    faults.sort_unstable();
    let med = median(&mut wall);
    let mut dev: Vec<f64> = wall.iter().map(|w| (w - med).abs()).collect();
    Stats {
        median_ms: med,
        min_ms: wall.first().copied().unwrap_or(0.0),
        mean_ms: wall.iter().sum::<f64>() / wall.len().max(1) as f64,
        mad_ms: median(&mut dev),
        thread_cpu_median_ms: median(&mut cpu),
        samples: runs.len(),
        faults_per_rep: faults.get(faults.len() / 2).copied().unwrap_or(0),
        cold_ms: cold.0,
        cold_faults: cold.2,
    }
}

/// Warm `f` up, then time it (see the module doc) on the calling thread.
pub fn measure(timing: Timing, mut f: impl FnMut()) -> Stats {
    let cold = sample(&mut f);
    let start = Instant::now();
    while start.elapsed() < timing.warmup {
        f();
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while (start.elapsed() < timing.min_time || runs.len() < timing.min_reps)
        && runs.len() < timing.max_reps.max(1)
    {
        runs.push(sample(&mut f));
    }
    summarise(cold, &runs)
}

/// [`measure`] with one warm-up run and at least `min_time` of at least 3 repetitions (the
/// calibration's kernels).
pub fn measure_for(min_time: Duration, f: impl FnMut()) -> Stats {
    measure(Timing { warmup: Duration::ZERO, min_time, min_reps: 3, max_reps: 10_000 }, f)
}

/// One rayon pool per thread count, built and started once.
pub struct Pools {
    pools: BTreeMap<usize, rayon::ThreadPool>,
}

impl Pools {
    /// Pools for `threads` (duplicates and 0 dropped); every pool's threads are started and
    /// have run a task before this returns.
    ///
    /// # Panics
    /// If the operating system refuses to start a thread.
    pub fn new(threads: &[usize]) -> Pools {
        let mut pools = BTreeMap::new();
        for &t in threads {
            let t = t.max(1);
            pools.entry(t).or_insert_with(|| {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .thread_name(move |i| format!("bench-{t}t-{i}"))
                    .build()
                    .expect("rayon pool");
                p.broadcast(|_| ());
                p
            });
        }
        Pools { pools }
    }

    /// The pool of `threads` threads.
    ///
    /// # Panics
    /// If no pool of that size was built.
    pub fn get(&self, threads: usize) -> &rayon::ThreadPool {
        &self.pools[&threads.max(1)]
    }

    /// The largest pool.
    ///
    /// # Panics
    /// If no pool was built.
    pub fn largest(&self) -> &rayon::ThreadPool {
        self.pools.values().next_back().expect("at least one pool")
    }

    /// Thread counts, ascending.
    pub fn threads(&self) -> Vec<usize> {
        self.pools.keys().copied().collect()
    }

    /// Run `f` in the pool of `threads` threads.
    pub fn install<R: Send>(&self, threads: usize, f: impl FnOnce() -> R + Send) -> R {
        self.get(threads).install(f)
    }
}

/// Run `f` inside a fresh rayon pool of `threads` threads (one-off use; measurements use
/// [`Pools`]).
///
/// # Panics
/// If the operating system refuses to start a thread.
pub fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("rayon pool").install(f)
}

/// Time `f` in every pool of `pools`, interleaved: each pool is warmed up, then every round
/// runs `f` once per pool, the order of the pools rotated by one each round. Returns the
/// statistics per thread count, ascending.
pub fn measure_interleaved(
    pools: &Pools,
    timing: Timing,
    f: impl Fn() + Sync,
) -> Vec<(usize, Stats)> {
    let ts = pools.threads();
    let mut colds = Vec::new();
    for &t in &ts {
        colds.push(pools.install(t, || {
            let cold = sample(&mut || f());
            let start = Instant::now();
            while start.elapsed() < timing.warmup {
                f();
            }
            cold
        }));
    }
    let mut runs: Vec<Vec<(f64, f64, u64)>> = vec![Vec::new(); ts.len()];
    let start = Instant::now();
    let mut round = 0;
    // The time floor applies to the whole interleaved run, scaled by the pool count.
    let floor = timing.min_time * ts.len() as u32;
    while (start.elapsed() < floor || round < timing.min_reps) && round < timing.max_reps.max(1) {
        for k in 0..ts.len() {
            let i = (k + round) % ts.len();
            runs[i].push(pools.install(ts[i], || sample(&mut || f())));
        }
        round += 1;
    }
    ts.iter().zip(colds).zip(&runs).map(|((&t, c), r)| (t, summarise(c, r))).collect()
}

/// Time several implementations of the same operation alternately on the calling thread
/// (A B A B …, the order rotated each round), so a slow phase of a shared machine lands on
/// all of them alike: each is warmed up, then every round runs each once, until `min_time`
/// (scaled by the count) and `min_reps` rounds have passed. Returns one [`Stats`] per closure.
pub fn measure_alternating(timing: Timing, fs: &mut [&mut dyn FnMut()]) -> Vec<Stats> {
    let mut colds = Vec::new();
    for f in fs.iter_mut() {
        colds.push(sample(&mut || f()));
        let start = Instant::now();
        while start.elapsed() < timing.warmup {
            f();
        }
    }
    let k = fs.len();
    let mut runs: Vec<Vec<(f64, f64, u64)>> = vec![Vec::new(); k];
    let floor = timing.min_time * k as u32;
    let (start, mut round) = (Instant::now(), 0);
    while (start.elapsed() < floor || round < timing.min_reps) && round < timing.max_reps.max(1) {
        for j in 0..k {
            let i = (j + round) % k;
            runs[i].push(sample(&mut || fs[i]()));
        }
        round += 1;
    }
    colds.into_iter().zip(&runs).map(|(c, r)| summarise(c, r)).collect()
}

/// The machine a record was measured on.
pub fn machine() -> serde_json::Value {
    serde_json::json!({
        "cpu": cpu_name(),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "avx512ifma": avx512ifma(),
        "load_average": load_average(),
    })
}

/// The CPU's model name from /proc/cpuinfo.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default()
}

/// The 1-minute load average when the record was made: a quiet machine reads below its
/// core count minus the threads the benchmark uses.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
}

fn avx512ifma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_reports_cold_run_apart_and_counts_reps() {
        let mut calls = 0;
        let s = measure(Timing::quick(), || calls += 1);
        assert_eq!(s.samples, 3);
        assert_eq!(calls, 4, "one cold run + three timed");
        assert!(s.min_ms <= s.median_ms && s.median_ms >= 0.0);
    }

    #[test]
    fn alternating_runs_every_closure_as_often() {
        let (mut a, mut b) = (0, 0);
        let s = measure_alternating(Timing::quick(), &mut [&mut || a += 1, &mut || b += 1]);
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|x| x.samples == 3));
        assert_eq!((a, b), (4, 4), "one cold run + three timed each");
    }

    #[test]
    fn interleaved_runs_every_pool() {
        let pools = Pools::new(&[2, 1, 2]);
        assert_eq!(pools.threads(), vec![1, 2]);
        let r = measure_interleaved(&pools, Timing::quick(), || {
            std::hint::black_box(rayon::current_num_threads());
        });
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|(_, s)| s.samples == 3));
    }

    /// One test, run in order: the fault counter is process-wide, so the two halves must not
    /// overlap (other tests of this binary allocate little; the bounds leave room for them).
    #[test]
    fn fresh_pages_fault_and_pinned_thresholds_reuse_freed_memory() {
        // 64 MiB touched once per run from a fresh mapping (above any mmap threshold): every
        // page faults.
        let s = measure(Timing::quick(), || {
            // calloc of a size this large maps fresh zero pages without touching them.
            let mut v = vec![0u8; 64 << 20];
            for i in (0..v.len()).step_by(4096) {
                v[i] = 1;
            }
            std::hint::black_box(&v);
        });
        assert!(s.faults_per_rep >= 8192, "{s:?}");
        // A 16 MiB block freed and allocated again does not fault once the thresholds are
        // pinned (glibc only).
        if !fix_allocator_thresholds() {
            return;
        }
        let touch = || {
            let mut v = vec![1u8; 16 << 20];
            v[12345] = 2;
            std::hint::black_box(&v);
        };
        touch();
        let s = measure(Timing::quick(), touch);
        assert!(s.faults_per_rep < 256, "16 MiB = 4096 pages; {s:?}");
    }

    #[test]
    fn peak_rss_is_at_least_current() {
        let now = rss_bytes();
        assert!(now > 0 && peak_rss_bytes() >= now);
    }
}
