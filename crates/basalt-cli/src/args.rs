//! Value parsers for the command line's numbers, so that a zero, negative or absurd value is a
//! clap error naming the option and its range, never a division by zero, a hang, a panic deep in
//! a library or an allocation the machine cannot make. Limits that depend on a preset (its
//! levels, its slots) are checked where the preset is known.

/// Threads: one at least; more than this many is a typo, not a machine.
pub const MAX_THREADS: usize = 1024;
/// A ring degree the NTT benchmark builds: 2^4 (the smallest `tfhe-ntt` plan) … 2^17
/// (CraterLake's largest ring).
pub const LOG_N: std::ops::RangeInclusive<u64> = 4..=17;
/// Slots, log2: at most half the largest ring.
pub const MAX_LOG_SLOTS: u32 = 16;
/// Repetitions, batch sizes, baby steps and partial sums: positive and below this.
pub const MAX_COUNT: usize = 1 << 20;
/// Recurrence steps / training iterations of a traced program.
pub const MAX_STEPS: u32 = 1 << 20;
/// A timing budget per measurement, in seconds.
pub const MAX_SECONDS: f64 = 3600.0;

fn integer<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.trim().parse::<T>().map_err(|_| format!("`{s}` is not a whole number"))
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(v: T, lo: T, hi: T) -> Result<T, String> {
    if v < lo || v > hi { Err(format!("{v} is outside {lo}..={hi}")) } else { Ok(v) }
}

/// A thread count in `1..=MAX_THREADS`.
pub fn threads(s: &str) -> Result<usize, String> {
    in_range(integer(s)?, 1, MAX_THREADS)
}

/// A positive count (repetitions, batch sizes, baby steps) up to [`MAX_COUNT`].
pub fn count(s: &str) -> Result<usize, String> {
    in_range(integer(s)?, 1, MAX_COUNT)
}

/// [`count`] as `u32` (partial sums, baby steps of a traced DFT).
pub fn count_u32(s: &str) -> Result<u32, String> {
    in_range(integer(s)?, 1, MAX_COUNT as u32)
}

/// log2 of a ring degree, in [`LOG_N`].
pub fn log_n(s: &str) -> Result<u32, String> {
    in_range(integer::<u64>(s)?, *LOG_N.start(), *LOG_N.end()).map(|v| v as u32)
}

/// log2 of a slot count, `0..=MAX_LOG_SLOTS` (the preset's own limit is checked with it).
pub fn log_slots(s: &str) -> Result<u32, String> {
    in_range(integer(s)?, 0, MAX_LOG_SLOTS)
}

/// Recurrence steps or iterations, `1..=MAX_STEPS`.
pub fn steps(s: &str) -> Result<u32, String> {
    in_range(integer(s)?, 1, MAX_STEPS)
}

/// Seconds of timed repetitions: positive, finite, at most an hour.
pub fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v.is_finite() && v > 0.0 && v <= MAX_SECONDS {
        Ok(v)
    } else {
        Err(format!("{s} is not a duration in (0, {MAX_SECONDS}] seconds"))
    }
}

/// Trials of a failure-rate measurement: `0..=2^32` (0 skips it).
pub fn trials(s: &str) -> Result<u64, String> {
    in_range(integer(s)?, 0, 1 << 32)
}

/// The memory the kernel says can be given to a new process without swapping
/// (`MemAvailable` of /proc/meminfo), in bytes; `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    basalt_ckks::progress::available_memory()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_negative_and_huge_values_are_refused() {
        assert!(threads("0").is_err() && threads("-1").is_err() && threads("99999").is_err());
        assert_eq!(threads("2"), Ok(2));
        assert!(count("0").is_err() && count("1e3").is_err() && count(" 7 ") == Ok(7));
        assert!(count_u32("0").is_err() && count_u32("4000000000").is_err());
        assert!(log_n("3").is_err() && log_n("40").is_err() && log_n("16") == Ok(16));
        assert!(log_slots("40").is_err() && log_slots("0") == Ok(0));
        assert!(steps("0").is_err() && steps("1000000000").is_err() && steps("150") == Ok(150));
        for bad in ["0", "-1", "nan", "inf", "1e9", "x"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert!(trials("-1").is_err() && trials("0") == Ok(0));
    }
}
