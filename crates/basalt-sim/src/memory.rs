//! Off-chip traffic and the on-chip operand store.
//!
//! Traffic is attributed to a kind (keys, ciphertexts, plaintexts, intermediates) because the
//! papers argue in those terms: CraterLake Fig. 10a splits KSH / input / intermediate traffic,
//! HE-MxV Fig. 1 splits keys / partial sums / twiddles / inputs.
//!
//! Loads that carry an identity — a CKKS `KeyLoad` preceded by `Event::Key` (which relin/Galois
//! key), `CtLoad`/`CtStore { id }`, a TFHE `TfheKeyLoad` (one bsk and one ksk per program) — go
//! through [`Store`], an on-chip store of `memory.onchip_mib` with the machine's eviction policy
//! (Belady's MIN — CraterLake §6 — or LRU): a reuse that is still resident costs no HBM bytes.
//! Anonymous loads (closed-form generators, `PlainLoad`, hoisted rotations whose key switch is
//! not scoped, a batch's per-iteration `TfheKeyLoad { key: Ggsw }`) always stream from HBM and
//! occupy nothing, which is the old behaviour.

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
        // A load is a program input unless the trace stored it first (the schedule re-labels
        // reloaded results as intermediates); a store writes back a result.
        Kernel::CtLoad { n, limbs, polys, .. } => {
            Some((DataKind::Ciphertexts, polys as f64 * limbs as f64 * n as f64 * w))
        }
        Kernel::CtStore { n, limbs, polys, .. } => {
            Some((DataKind::Intermediates, polys as f64 * limbs as f64 * n as f64 * w))
        }
        Kernel::TfheKeyLoad { size, count, .. } => {
            Some((DataKind::Keys, size as f64 * count as f64 * w))
        }
        _ => None,
    }
}

/// Read (a load that may hit) or write (a result that is allocated on chip, written back to
/// HBM only when evicted dirty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// HBM bytes one access caused: `loaded` on a read miss, `written` for the dirty operands it
/// evicted (or for itself when it is too large to keep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub loaded: u64,
    pub written: u64,
    pub hit: bool,
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

    /// Bytes loaded for the read-only access sequence `(id, bytes)`.
    pub fn misses(&self, accesses: &[(u64, u64)]) -> u64 {
        let seq: Vec<_> = accesses.iter().map(|&(id, b)| (id, b, Access::Read)).collect();
        self.run(&seq).iter().map(|o| o.loaded).sum()
    }

    /// The outcome of every access of `(id, bytes, read/write)`, in order. A write replaces
    /// the object (it may change size, e.g. after a rescale) and marks it dirty; evicting a
    /// dirty object writes it back. An object no later access reads is dead: its space is
    /// freed at its last use, without a write-back (the program's dataflow, which a compiler
    /// knows whatever the eviction policy, says it is never needed again). So the last result
    /// of a trace stays on chip too (the trace does not say that it is needed off chip).
    pub fn run(&self, accesses: &[(u64, u64, Access)]) -> Vec<Outcome> {
        // next_use[i] = index of the next *read* of the same id after i (Belady needs it; a
        // later write overwrites, so it is not a reuse).
        let mut next_use = vec![usize::MAX; accesses.len()];
        let mut next: HashMap<u64, usize> = HashMap::new();
        for (i, &(id, _, a)) in accesses.iter().enumerate().rev() {
            next_use[i] = next.get(&id).copied().unwrap_or(usize::MAX);
            match a {
                Access::Read => next.insert(id, i),
                Access::Write => next.remove(&id),
            };
        }
        // resident: id -> (bytes, last use index, next use index, dirty)
        let mut resident: HashMap<u64, (u64, usize, usize, bool)> = HashMap::new();
        let mut used = 0u64;
        let mut out = Vec::with_capacity(accesses.len());
        for (i, &(id, bytes, a)) in accesses.iter().enumerate() {
            let mut o = Outcome::default();
            // A read hits a resident copy at least as large (a key at fewer limbs is a subset
            // of the stored one); a larger request reloads the object at its new size.
            if a == Access::Read
                && let Some(e) = resident.get_mut(&id)
                && e.0 >= bytes
            {
                e.1 = i;
                e.2 = next_use[i];
                o.hit = true;
                out.push(o);
                if next_use[i] == usize::MAX {
                    // Last use: the space is free again (a compiler knows the dataflow).
                    used -= resident.remove(&id).expect("just hit").0;
                }
                continue;
            }
            if let Some(old) = resident.remove(&id) {
                used -= old.0; // overwritten: the old value is dead, no write-back
            }
            let dirty = a == Access::Write;
            if !dirty {
                o.loaded = bytes;
            }
            // A dead object (no later read) streams through: read once or dropped unwritten.
            let live = next_use[i] != usize::MAX;
            if !live || bytes > self.capacity {
                if dirty && live {
                    o.written = bytes;
                }
                out.push(o);
                continue;
            }
            while used + bytes > self.capacity {
                let victim = match self.policy {
                    Eviction::Belady => resident.iter().max_by_key(|(vid, e)| (e.2, **vid)),
                    Eviction::Lru => resident.iter().min_by_key(|(vid, e)| (e.1, **vid)),
                }
                .map(|(vid, _)| *vid)
                .expect("store is over capacity only while something is resident");
                let e = resident.remove(&victim).expect("victim is resident");
                used -= e.0;
                if e.3 {
                    o.written += e.0;
                }
            }
            resident.insert(id, (bytes, i, next_use[i], dirty));
            used += bytes;
            out.push(o);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn belady_beats_lru_on_a_cyclic_pattern() {
        // Capacity 2 objects, cyclic 1 2 3 1 2 3 1 2 3: LRU misses the first seven accesses
        // (the last 1 is dead: it streams through and leaves 2 and 3 resident).
        let seq: Vec<(u64, u64)> = [1, 2, 3, 1, 2, 3, 1, 2, 3].iter().map(|&i| (i, 10)).collect();
        assert_eq!(Store::new(Eviction::Lru, 20).misses(&seq), 70);
        // MIN: miss 1, 2, 3 (evict 2, used after 1), hit 1, miss 2 (evict 1), hit 3, miss 1
        // (dead), hit 2, hit 3.
        assert_eq!(Store::new(Eviction::Belady, 20).misses(&seq), 50);
    }

    #[test]
    fn oversized_operands_stream_and_hits_are_free() {
        let seq = [(1, 100), (1, 100), (2, 5), (2, 5)];
        assert_eq!(Store::new(Eviction::Lru, 50).misses(&seq), 205);
    }

    #[test]
    fn writes_stay_on_chip_until_evicted_dirty() {
        use Access::{Read, Write};
        let lru = Store::new(Eviction::Lru, 20);
        // Store 1, read it back (hit), then two more objects push it out: written back once
        // and reloaded for its last read.
        let (two, three) = ((2, 10, Read), (3, 10, Read));
        let seq = [(1, 10, Write), (1, 10, Read), two, three, (1, 10, Read), two, three];
        let o = lru.run(&seq);
        assert_eq!(o[0], Outcome { loaded: 0, written: 0, hit: false });
        assert!(o[1].hit);
        assert_eq!(o[2].loaded, 10);
        assert_eq!((o[3].loaded, o[3].written), (10, 10));
        assert_eq!(o[4].loaded, 10);
        assert!(o[5].hit && o[6].hit);
        // Without the last read the value dies at its first read: no write-back.
        let o = lru.run(&seq[..4]);
        assert_eq!(o.iter().map(|x| x.written).sum::<u64>(), 0);
        // Overwriting a dirty object kills the old value: no write-back for it.
        let seq = [(1, 10, Write), (1, 10, Write), two, three, (1, 10, Read), two, three];
        let o = lru.run(&seq);
        assert_eq!(o.iter().map(|x| x.written).sum::<u64>(), 10);
        // Too large to keep: written through if read later, dropped if dead.
        let o = lru.run(&[(9, 50, Write), (9, 50, Read)]);
        assert_eq!((o[0].written, o[1].loaded), (50, 50));
        assert_eq!(lru.run(&[(9, 50, Write)])[0].written, 0);
        // Belady does not count a later overwrite as a reuse: 1 is the victim, not 2.
        let min = Store::new(Eviction::Belady, 20);
        let o =
            min.run(&[(1, 10, Read), (2, 10, Read), (3, 10, Read), (2, 10, Read), (1, 10, Write)]);
        assert!(o[3].hit);
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
