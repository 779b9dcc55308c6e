//! Off-chip traffic and the on-chip operand store.
//!
//! Traffic is attributed to a kind (keys, ciphertexts, plaintexts, intermediates) because the
//! papers argue in those terms: CraterLake Fig. 10a splits KSH / input / intermediate traffic,
//! HE-MxV Fig. 1 splits keys / partial sums / twiddles / inputs.
//!
//! Today's trace IR names only key and plaintext loads (`KeyLoad`, `PlainLoad`), without an
//! identity, so every load misses. [`Store`] implements the two eviction policies the papers use
//! (Belady's MIN — CraterLake §6 — and LRU) over identified accesses, ready for the proposed
//! `CtLoad/CtStore { id, .. }` kernels.

use std::collections::HashMap;

use basalt_trace::Kernel;
use serde::Serialize;

use crate::machine::{Eviction, Machine};

/// What a transfer carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataKind {
    Keys,
    Ciphertexts,
    Plaintexts,
    Intermediates,
}

/// Bytes moved between HBM and chip, by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Traffic {
    pub keys: f64,
    pub ciphertexts: f64,
    pub plaintexts: f64,
    pub intermediates: f64,
}

impl Traffic {
    pub fn add(&mut self, kind: DataKind, bytes: f64) {
        match kind {
            DataKind::Keys => self.keys += bytes,
            DataKind::Ciphertexts => self.ciphertexts += bytes,
            DataKind::Plaintexts => self.plaintexts += bytes,
            DataKind::Intermediates => self.intermediates += bytes,
        }
    }

    pub fn total(&self) -> f64 {
        self.keys + self.ciphertexts + self.plaintexts + self.intermediates
    }
}

/// Off-chip bytes a kernel moves, if it is a memory kernel.
///
/// A key-switching key has `digits × 2 × limbs` residue polynomials. When it is `seeded` and
/// the machine regenerates the uniform half on chip (CraterLake KSHGen), only half is loaded;
/// without a generator the whole key streams in (the CraterLake "no KSHGen" ablation).
pub fn kernel_traffic(m: &Machine, k: &Kernel) -> Option<(DataKind, f64)> {
    let w = m.bytes_per_word();
    match *k {
        Kernel::KeyLoad { n, limbs, digits, seeded } => {
            let halves = if seeded && m.kshgen_enabled() { 1.0 } else { 2.0 };
            Some((DataKind::Keys, halves * digits as f64 * limbs as f64 * n as f64 * w))
        }
        Kernel::PlainLoad { n, limbs } => Some((DataKind::Plaintexts, limbs as f64 * n as f64 * w)),
        _ => None,
    }
}

/// An on-chip store of `capacity` bytes with an eviction policy, fed identified accesses.
/// Returns bytes that had to be loaded (misses). Operands larger than the store stream
/// through without being cached.
pub struct Store {
    policy: Eviction,
    capacity: u64,
}

impl Store {
    pub fn new(policy: Eviction, capacity: u64) -> Store {
        Store { policy, capacity }
    }

    /// Bytes loaded for the access sequence `(id, bytes)`.
    pub fn misses(&self, accesses: &[(u64, u64)]) -> u64 {
        // next_use[i] = index of the next access to the same id after i (Belady needs it).
        let mut next_use = vec![usize::MAX; accesses.len()];
        let mut last: HashMap<u64, usize> = HashMap::new();
        for (i, (id, _)) in accesses.iter().enumerate().rev() {
            next_use[i] = last.get(id).copied().unwrap_or(usize::MAX);
            last.insert(*id, i);
        }
        // resident: id -> (bytes, last use index, next use index)
        let mut resident: HashMap<u64, (u64, usize, usize)> = HashMap::new();
        let mut used = 0u64;
        let mut loaded = 0u64;
        for (i, &(id, bytes)) in accesses.iter().enumerate() {
            if let Some(e) = resident.get_mut(&id) {
                e.1 = i;
                e.2 = next_use[i];
                continue;
            }
            loaded += bytes;
            if bytes > self.capacity {
                continue;
            }
            while used + bytes > self.capacity {
                let victim = match self.policy {
                    Eviction::Belady => resident.iter().max_by_key(|(vid, e)| (e.2, **vid)),
                    Eviction::Lru => resident.iter().min_by_key(|(vid, e)| (e.1, **vid)),
                }
                .map(|(vid, _)| *vid)
                .expect("store is over capacity only while something is resident");
                used -= resident.remove(&victim).map_or(0, |e| e.0);
            }
            resident.insert(id, (bytes, i, next_use[i]));
            used += bytes;
        }
        loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn belady_beats_lru_on_a_cyclic_pattern() {
        // Capacity 2 objects, cyclic 1 2 3 1 2 3: LRU misses all six accesses.
        let seq: Vec<(u64, u64)> = [1, 2, 3, 1, 2, 3].iter().map(|&i| (i, 10)).collect();
        assert_eq!(Store::new(Eviction::Lru, 20).misses(&seq), 60);
        // MIN: miss 1, miss 2, miss 3 (evict 2, used after 1), hit 1, miss 2 (evict 1), hit 3.
        assert_eq!(Store::new(Eviction::Belady, 20).misses(&seq), 40);
    }

    #[test]
    fn oversized_operands_stream_and_hits_are_free() {
        let seq = [(1, 100), (1, 100), (2, 5), (2, 5)];
        assert_eq!(Store::new(Eviction::Lru, 50).misses(&seq), 205);
    }

    #[test]
    fn seeded_keys_halve_only_with_kshgen() {
        let mut m = crate::machine::tests::minimal();
        let k = Kernel::KeyLoad { n: 1 << 16, limbs: 120, digits: 1, seeded: true };
        let full = kernel_traffic(&m, &k).unwrap().1;
        m.switches.kshgen = Some(true);
        m.units.push(crate::units::tests::unit(crate::machine::UnitClass::Kshgen, 1, 2048));
        let half = kernel_traffic(&m, &k).unwrap().1;
        assert_eq!(full, 2.0 * half);
        // 120 residues × 64K × 3.5 B = 26.25 MiB: CraterLake's streamed half-KSH at L = 60.
        m.dram_bytes_per_word = Some(3.5);
        let b = kernel_traffic(&m, &k).unwrap().1;
        assert_eq!(b, 26.25 * 1024.0 * 1024.0);
    }
}
