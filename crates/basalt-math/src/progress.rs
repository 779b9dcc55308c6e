//! The hook of long operations: progress reports, cancellation, and the memory check before
//! a large allocation.
//!
//! Key generation (CKKS evaluation keys, TFHE bootstrapping keys) takes seconds to minutes and
//! gigabytes; a caller should see how far it is and be able to stop it (Ctrl-C from Python).
//! The hook lives at the bottom of the stack so that both schemes, which cannot depend on each
//! other, report to the same observer: a [`Progress`] is told of each stage and each finished
//! step and may answer [`Cancelled`], and the operation stops between steps, leaving nothing
//! half-made. Each scheme turns [`Cancelled`] and a [`memory_refusal`] into its own error.

/// An operation was stopped by its [`Progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// Observer of a long operation. Every method has a default that does nothing, so an
/// implementation overrides only what it shows.
pub trait Progress: Sync {
    /// A stage named `name` of `total` steps begins.
    fn stage(&self, _name: &str, _total: u64) {}
    /// `done` of the current stage's steps are finished. `Err(Cancelled)` stops the
    /// operation before its next step.
    fn step(&self, _done: u64) -> Result<(), Cancelled> {
        Ok(())
    }
}

/// No report, never cancelled.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {}

/// The memory the kernel says a new allocation can get without swapping (`MemAvailable` of
/// /proc/meminfo), in bytes; `None` where it cannot be read (then nothing is refused).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `bytes` for a person: `1.5 GiB`, `312.0 MiB`, `900 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// The share of the available memory keys may take: key generation's transient buffers, the
/// evaluator and the caller's own data need the rest (a policy, not a measurement).
pub const KEY_MEMORY_SHARE: (u64, u64) = (3, 4);

/// Why `need` bytes are refused: more than [`KEY_MEMORY_SHARE`] of the available memory and
/// not `force`d. Returns the need and the available memory, each for a person, for the
/// caller's error; `None` when the need fits, is forced, or the memory cannot be read.
pub fn memory_refusal(need: u64, force: bool) -> Option<(String, String)> {
    let (num, den) = KEY_MEMORY_SHARE;
    match available_memory() {
        Some(avail) if need > avail / den * num && !force => {
            Some((human_bytes(need), human_bytes(avail)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_for_a_person() {
        assert_eq!(human_bytes(900), "900 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    /// A need far beyond the machine is refused unless forced; a small one passes.
    #[test]
    fn needs_beyond_available_memory_are_refused() {
        let Some(avail) = available_memory() else { return };
        assert!(memory_refusal(avail.saturating_mul(4), false).is_some());
        assert!(memory_refusal(avail.saturating_mul(4), true).is_none());
        assert!(memory_refusal(1024, false).is_none());
    }
}
