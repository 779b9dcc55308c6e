//! Operation accounting: counts read from the kernel trace, in the units the papers use.
//!
//! A circuit runs under [`measure`] (`basalt_trace::record` around the real computation); the
//! kernels it executed are then summed into an [`OpCounts`]. The same struct holds the
//! closed-form predictions of [`crate::lintrans::cost`], and tests check both agree exactly.
//!
//! Definitions (one place):
//! - `rotations`: entries of the scheme's `Rotate` region (plain, hoisted or lazy);
//! - `key_switches`: key-material loads (one per inner product with a switching key);
//! - `ntt_limbs` / `intt_limbs`: forward / inverse NTTs of one limb of `n` words;
//! - `bconv_macs`: multiply-adds of fast base conversions;
//! - `mul_limbs`: element-wise `Mul`, `MulAcc` and `MulScalar` limbs (n products each);
//! - `modmults`: `n·mul_limbs + bconv_macs + (n/2)·log2(n)·(ntt_limbs + intt_limbs)` — every
//!   modular multiplication, one per butterfly (Osiris' hardware pays a second one for its
//!   on-the-fly twiddles; multiply the NTT term by two to compare with its counts);
//! - `plain_mults` and `plaintext_bytes`: plaintext–ciphertext products and the bytes of
//!   plaintext operand they consumed (8-byte words, all limbs the product touched);
//! - `key_bytes`: switching-key material read by the inner products, `2·β·(L+k)·n·8` per key
//!   switch (both halves; a seeded key regenerates its `a` half instead of reading it, which
//!   the trace shows as `KeyGen`).

use basalt_trace::{ElemOp, Event, Kernel, KernelKind, Trace, record};
use serde::{Deserialize, Serialize};

/// Operation counts of one circuit (measured or predicted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    pub rotations: u64,
    pub key_switches: u64,
    pub ntt_limbs: u64,
    pub intt_limbs: u64,
    pub bconv_macs: u64,
    pub automorph_limbs: u64,
    pub mul_limbs: u64,
    pub plain_mults: u64,
    pub plaintext_bytes: u64,
    pub key_bytes: u64,
    pub modmults: u64,
}

impl OpCounts {
    /// Sum the kernels of `trace` (ring degree `n`).
    pub fn from_trace(trace: &Trace, n: usize) -> OpCounts {
        let mut c = OpCounts {
            ntt_limbs: trace.count(KernelKind::Ntt),
            intt_limbs: trace.count(KernelKind::Intt),
            bconv_macs: trace.count(KernelKind::BConv),
            automorph_limbs: trace.count(KernelKind::Automorph),
            mul_limbs: [ElemOp::Mul, ElemOp::MulAcc, ElemOp::MulScalar]
                .iter()
                .map(|&op| trace.count(KernelKind::Elem(op)))
                .sum(),
            ..OpCounts::default()
        };
        for e in &trace.events {
            match e {
                Event::Enter { name } if name == "Rotate" => c.rotations += 1,
                Event::Kernel(k @ Kernel::KeyLoad { .. }) => {
                    c.key_switches += 1;
                    c.key_bytes += k.units() * n as u64 * 8;
                }
                Event::Kernel(Kernel::PlainLoad { limbs, .. }) => {
                    c.plain_mults += 1;
                    c.plaintext_bytes += *limbs as u64 * n as u64 * 8;
                }
                _ => {}
            }
        }
        c.finish(n)
    }

    /// Fill in `modmults` from the other counts.
    pub fn finish(mut self, n: usize) -> OpCounts {
        let log_n = n.trailing_zeros() as u64;
        self.modmults = n as u64 * self.mul_limbs
            + self.bconv_macs
            + (n as u64 / 2) * log_n * (self.ntt_limbs + self.intt_limbs);
        self
    }

    /// Component-wise `self + k·other` (`modmults` recomputed by the caller via `finish`).
    pub fn add_scaled(&mut self, other: &OpCounts, k: u64) {
        self.rotations += k * other.rotations;
        self.key_switches += k * other.key_switches;
        self.ntt_limbs += k * other.ntt_limbs;
        self.intt_limbs += k * other.intt_limbs;
        self.bconv_macs += k * other.bconv_macs;
        self.automorph_limbs += k * other.automorph_limbs;
        self.mul_limbs += k * other.mul_limbs;
        self.plain_mults += k * other.plain_mults;
        self.plaintext_bytes += k * other.plaintext_bytes;
        self.key_bytes += k * other.key_bytes;
        self.modmults += k * other.modmults;
    }
}

/// Run `f` under a kernel recorder and count what it executed (ring degree `n`).
pub fn measure<R>(n: usize, f: impl FnOnce() -> R) -> (R, OpCounts) {
    let (r, t) = record(f);
    (r, OpCounts::from_trace(&t, n))
}
