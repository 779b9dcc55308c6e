//! Small unit models of the memory system beyond a peak bandwidth, each off unless the machine
//! file gives its parameters (`[memory]`), so a machine without them times exactly as before:
//!
//! * **HBM latency** (`hbm_latency_ns`): a window's loads arrive `latency` after the channel
//!   sends them. The latency delays the data, not the channel (requests are pipelined), so it
//!   costs a window only when nothing hides it: prefetch ahead of the window, or compute longer
//!   than the stream.
//! * **HBM banks** (`hbm_banks`, `hbm_row_bytes`, `hbm_row_cycle_ns`): every load opens
//!   ⌈bytes / row⌉ DRAM rows; each activation occupies its bank for the row cycle tRC, and the
//!   banks activate in parallel, so a stream is bounded by `rows · tRC / banks` as well as by
//!   `bytes / bandwidth`. Large contiguous residue polynomials keep every bank busy and reach
//!   the peak; small scattered loads (one-limb plaintexts of a small ring) do not.
//! * **SRAM banking** (`sram_banks`, `sram_bank_bytes_per_cycle`): every operand a kernel
//!   loads or stores passes the on-chip store's banks, `banks × width` bytes per cycle, which
//!   bounds the window's compute like the register-file ports do.
//! * **Prefetch bounded by capacity** (`prefetch_mib`, default the on-chip capacity): loads
//!   issued ahead of their window (`schedule.prefetch_windows`) must be held until it starts,
//!   so at most the prefetch buffer's bytes may arrive early.

use crate::machine::Machine;

/// The HBM parameters of a machine in cycles and bytes, as the schedule applies them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hbm {
    /// Peak bytes per cycle over all channels.
    pub bytes_per_cycle: f64,
    /// Cycles from a request leaving the channel to its data arriving.
    pub latency_cycles: f64,
    /// (banks, row bytes, row cycle in cycles) when the bank model is on.
    pub banks: Option<(f64, f64, f64)>,
    /// Bytes that may arrive before the window that reads them starts.
    pub prefetch_bytes: f64,
}

impl Hbm {
    /// The HBM model of `m`.
    pub fn of(m: &Machine) -> Hbm {
        let hz = m.hz();
        let mem = &m.memory;
        let banks = match (mem.hbm_banks, mem.hbm_row_bytes, mem.hbm_row_cycle_ns) {
            (Some(b), Some(r), Some(t)) => Some((f64::from(b), f64::from(r), t * 1e-9 * hz)),
            _ => None,
        };
        Hbm {
            bytes_per_cycle: mem.hbm_gbps * 1e9 / hz,
            latency_cycles: mem.hbm_latency_ns.unwrap_or(0.0) * 1e-9 * hz,
            banks,
            prefetch_bytes: mem.prefetch_mib.unwrap_or(mem.onchip_mib) * 1024.0 * 1024.0,
        }
    }

    /// Row-activation cycles a load of `bytes` (one contiguous object) puts on the banks
    /// together: `⌈bytes / row⌉ · tRC / banks`; 0 without the bank model.
    pub fn activation_cycles(&self, bytes: f64) -> f64 {
        match self.banks {
            Some((banks, row, trc)) if bytes > 0.0 => (bytes / row).ceil() * trc / banks,
            _ => 0.0,
        }
    }

    /// Channel time of a window's stream: the transfer at `share` of the peak, or the banks'
    /// activations, whichever is longer.
    pub fn stream_cycles(&self, bytes: f64, share: f64, activations: f64) -> f64 {
        (bytes / (self.bytes_per_cycle * share)).max(activations)
    }

    /// The earliest cycle a window starting at `window_start` may start loading `stream`
    /// cycles' worth of data: no earlier than `earliest` (prefetch depth, channel order) and,
    /// when the stream is larger than the prefetch buffer, no more than the buffer's transfer
    /// time ahead of the window (bytes that arrive early must be held).
    pub fn load_start(&self, earliest: f64, window_start: f64, stream: f64) -> f64 {
        let ahead = self.prefetch_bytes / self.bytes_per_cycle;
        if earliest >= window_start || stream <= ahead {
            earliest
        } else {
            earliest.max(window_start - ahead)
        }
    }
}

/// Cycles the on-chip store's banks need to move `bytes` (`sram_banks × width` bytes per
/// cycle); 0 when the machine gives no banking.
pub fn sram_cycles(m: &Machine, bytes: f64) -> f64 {
    match (m.memory.sram_banks, m.memory.sram_bank_bytes_per_cycle) {
        (Some(b), Some(w)) => bytes / (f64::from(b) * w),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::tests::minimal;

    fn hbm(m: &Machine) -> Hbm {
        Hbm::of(m)
    }

    /// Without the new fields nothing changes: no latency, no activations, prefetch bounded only
    /// by the on-chip capacity.
    #[test]
    fn absent_parameters_leave_the_peak_model() {
        let m = minimal();
        let h = hbm(&m);
        assert_eq!(h.latency_cycles, 0.0);
        assert_eq!(h.activation_cycles(1e6), 0.0);
        assert_eq!(h.stream_cycles(1e6, 1.0, 0.0), 1e6 / h.bytes_per_cycle);
        assert_eq!(h.prefetch_bytes, m.memory.onchip_mib * 1048576.0);
        assert_eq!(sram_cycles(&m, 1e6), 0.0);
    }

    /// HBM2-like banks: 1 KiB rows, tRC 48 cycles at 1 GHz, 64 banks. A large stream is
    /// bandwidth-bound; the same bytes in 64-byte pieces are activation-bound.
    #[test]
    fn banks_bound_small_scattered_loads_only() {
        let mut m = minimal();
        m.memory.hbm_banks = Some(64);
        m.memory.hbm_row_bytes = Some(1024);
        m.memory.hbm_row_cycle_ns = Some(48.0 / m.clock_ghz);
        let h = hbm(&m);
        let big = 1 << 20;
        let act = h.activation_cycles(f64::from(big));
        assert!((act - 1024.0 * 48.0 / 64.0).abs() < 1e-9);
        let transfer = f64::from(big) / h.bytes_per_cycle;
        assert_eq!(h.stream_cycles(f64::from(big), 1.0, act), transfer.max(act));
        // 16384 loads of 64 bytes: one row each.
        let small: f64 = (0..16384).map(|_| h.activation_cycles(64.0)).sum();
        assert!((small - 16384.0 * 48.0 / 64.0).abs() < 1e-6);
        assert!(small > act, "scattered loads open more rows");
        // Half the channels (a key share) halve the bandwidth, not the banks' rate.
        assert_eq!(h.stream_cycles(f64::from(big), 0.5, 0.0), 2.0 * transfer);
    }

    #[test]
    fn latency_is_in_cycles_of_the_machine_clock() {
        let mut m = minimal();
        m.memory.hbm_latency_ns = Some(100.0);
        assert!((hbm(&m).latency_cycles - 100.0 * m.clock_ghz).abs() < 1e-9);
    }

    /// Prefetch: a stream that fits the buffer may start as early as the prefetch depth allows;
    /// a larger one starts at most a buffer's transfer time before its window.
    #[test]
    fn prefetch_is_bounded_by_the_buffer() {
        let mut m = minimal();
        m.memory.prefetch_mib = Some(1.0);
        let h = hbm(&m);
        let ahead = 1048576.0 / h.bytes_per_cycle;
        assert_eq!(h.load_start(0.0, 10.0 * ahead, 0.5 * ahead), 0.0);
        assert_eq!(h.load_start(0.0, 10.0 * ahead, 3.0 * ahead), 9.0 * ahead);
        // Never earlier than the channel allows, and no bound when not prefetching.
        assert_eq!(h.load_start(9.5 * ahead, 10.0 * ahead, 3.0 * ahead), 9.5 * ahead);
        assert_eq!(h.load_start(10.0 * ahead, 10.0 * ahead, 3.0 * ahead), 10.0 * ahead);
    }

    #[test]
    fn sram_banks_set_the_on_chip_rate() {
        let mut m = minimal();
        m.memory.sram_banks = Some(32);
        m.memory.sram_bank_bytes_per_cycle = Some(64.0);
        assert_eq!(sram_cycles(&m, 2048.0 * 10.0), 10.0);
    }
}
