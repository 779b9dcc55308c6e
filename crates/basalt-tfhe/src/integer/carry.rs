//! Carry propagation.
//!
//! # Algorithm
//! *Single carry* (every block `v_i ≤ 2m − 2`, block 0 `≤ 2m − 1`): the carry out of block `i`
//! is 0 or 1 and depends on the carry in only when `v_i = m − 1`. One layer of bootstraps maps
//! each block to a state — *generate* (`v_i ≥ m`), *propagate* (`v_i = m − 1`) or *none* —
//! (block 0 directly to its carry, it has no carry in). The carry into block `i + 1` is the
//! prefix combination `s_i ∘ s_{i−1} ∘ … ∘ s_0` with `hi ∘ lo = (hi = propagate ? lo : hi)`,
//! an associative operator, so a Hillis–Steele scan resolves all carries in `⌈log2(B − 1)⌉`
//! layers of bivariate bootstraps (`hi·m + lo` packed in one block). A last layer writes
//! `(v_i + c_i) mod m`. Latency: `⌈log2(B−1)⌉ + 2` bootstraps for `B` blocks, instead of `B`
//! for a ripple.
//!
//! *Ripple* (the same single-carry input): block by block, `v_i + c_i ≤ 2m − 1` gives both the
//! digit `(v_i + c_i) mod m` and the carry out `[v_i + c_i ≥ m]`. With many-LUT bootstrapping
//! ([`crate::many_lut`]; `(2m)·2 ≤ p`, i.e. a carry modulus of at least 4, as on the 2+2 set)
//! the two come from one blind rotation: `B` bootstraps in `B` sequential steps; without it, two
//! bootstraps side by side per step, `2B − 1`. The scan costs
//! `B + Σ_d (B − 1 − d) + (B − 1)` (one less with many-LUT: block 0's digit and carry) in
//! `⌈log2(B − 1)⌉ + 2` layers (75 against 16 for 16 blocks; 76 against 31 without many-LUT):
//! with few threads the scan's extra work costs more than its shorter chain saves.
//! [`CarryPropagation::Auto`] picks the algorithm with fewer bootstrap rounds on the pool's
//! thread count (`Σ ⌈jobs/threads⌉` over the layers, [`carry_rounds_many_lut`] or
//! [`carry_rounds`]): the ripple up to about 4 threads for 32-bit operands, the scan above.
//!
//! *Full propagation* of blocks up to `p − 1`: one layer splits every block into digit
//! (`v mod m`) and carry (`⌊v / m⌋`) — one many-LUT bootstrap for a block up to `2m − 1`, two
//! above; adding carry `i − 1` to digit `i` gives blocks `≤ 2m − 2`, finished by the
//! single-carry scan.
//!
//! *Column sums* (products): many clean digits per position are added in groups that fit a
//! block (`Σ degree < p`, `Σ noise ≤ m + 1`), each group split into a digit for its column and a
//! carry for the next (one many-LUT bootstrap when the group's degree is at most `2m − 1`),
//! round after round (a Wallace tree over blocks), until every column fits the single-carry
//! scan.
//!
//! # Source
//! TFHE-rs `integer` (`propagate_single_carry_parallelized`, generate/propagate block states,
//! `full_propagate_parallelized`, `sum_ciphertexts_vec_parallelized`), re-derived here;
//! Hillis & Steele, "Data parallel algorithms" (CACM 1986) for the scan.

use crate::integer::radix::{Block, RadixCiphertext};
use crate::integer::server::{IntegerServer, Job, ManyJob};
use crate::torus::Torus;

/// How [`IntegerServer`] resolves the carries of a single-carry sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CarryPropagation {
    /// The algorithm with fewer bootstrap rounds on the current rayon pool
    /// ([`carry_rounds`]).
    #[default]
    Auto,
    /// Hillis–Steele prefix scan of generate/propagate states (shortest chain, most bootstraps).
    Scan,
    /// Block-by-block ripple (fewest bootstraps, longest chain).
    Ripple,
}

impl CarryPropagation {
    /// The algorithm this choice runs for `blocks` blocks on `threads` threads: `Scan` or
    /// `Ripple` (ties go to the ripple, which bootstraps less).
    pub fn resolve(self, blocks: usize, threads: usize) -> CarryPropagation {
        self.resolve_with(blocks, threads, false)
    }

    /// [`CarryPropagation::resolve`] with the costs of many-LUT bootstrapping when `many_lut`
    /// ([`carry_rounds_many_lut`]).
    pub fn resolve_with(self, blocks: usize, threads: usize, many_lut: bool) -> CarryPropagation {
        match self {
            CarryPropagation::Auto => {
                let (scan, ripple) = if many_lut {
                    carry_rounds_many_lut(blocks, threads)
                } else {
                    carry_rounds(blocks, threads)
                };
                if ripple <= scan { CarryPropagation::Ripple } else { CarryPropagation::Scan }
            }
            c => c,
        }
    }
}

/// Bootstrap rounds (`Σ ⌈jobs / threads⌉` over the layers, the latency in bootstraps when
/// every bootstrap of a round runs on its own thread) of a single-carry propagation over
/// `blocks` blocks that all may carry, with `threads` threads: `(scan, ripple)`.
pub fn carry_rounds(blocks: usize, threads: usize) -> (usize, usize) {
    let t = threads.max(1);
    let rounds = |jobs: usize| jobs.div_ceil(t);
    if blocks <= 1 {
        return (usize::from(blocks == 1), usize::from(blocks == 1));
    }
    let states = blocks - 1;
    // Scan: block 0's digit and carry plus the other states, the scan rounds, the last digits.
    let mut scan = rounds(1 + states) + rounds(blocks - 1);
    let mut d = 1;
    while d < states {
        scan += rounds(states - d);
        d *= 2;
    }
    // Ripple: digit and carry of every block but the last, then the last digit.
    let ripple = (blocks - 1) * rounds(2) + 1;
    (scan, ripple)
}

/// [`carry_rounds`] when digit and carry share a blind rotation ([`crate::many_lut`]): the
/// ripple's steps are one bootstrap each, and block 0's digit and carry are one job of the
/// scan's first layer.
pub fn carry_rounds_many_lut(blocks: usize, threads: usize) -> (usize, usize) {
    let t = threads.max(1);
    let rounds = |jobs: usize| jobs.div_ceil(t);
    if blocks <= 1 {
        return (usize::from(blocks == 1), usize::from(blocks == 1));
    }
    let states = blocks - 1;
    let mut scan = rounds(states) + rounds(blocks - 1);
    let mut d = 1;
    while d < states {
        scan += rounds(states - d);
        d *= 2;
    }
    (scan, blocks)
}

/// Block states of the carry scan.
const NONE: u64 = 0;
const GENERATE: u64 = 1;
const PROPAGATE: u64 = 2;

impl<T: Torus> IntegerServer<T> {
    /// Whether `blocks` can go straight into [`propagate_single_carry`](Self::propagate_single_carry).
    pub(crate) fn fits_single_carry(&self, blocks: &[Block<T>]) -> bool {
        let m = self.message_modulus();
        blocks.iter().enumerate().all(|(i, b)| {
            let dmax = if i == 0 { 2 * m - 1 } else { 2 * m - 2 };
            b.degree <= dmax && b.noise_level < self.max_noise_level()
        })
    }

    /// Clean blocks from blocks whose carries are at most one per block (see module doc).
    pub(crate) fn propagate_single_carry(&self, blocks: Vec<Block<T>>) -> Vec<Block<T>> {
        debug_assert!(self.fits_single_carry(&blocks));
        let m = self.message_modulus();
        if blocks.iter().all(|b| b.degree < m && b.noise_level <= 1) {
            return blocks;
        }
        match self.carry.resolve_with(blocks.len(), rayon::current_num_threads(), self.many_lut) {
            CarryPropagation::Ripple => self.ripple_single_carry(blocks),
            _ => self.scan_single_carry(blocks),
        }
    }

    /// The ripple (see module doc): step `i` bootstraps `v_i + c_i` to its digit and its carry
    /// out; a carry known to be 0 (a block that cannot reach `m`) costs nothing.
    fn ripple_single_carry(&self, blocks: Vec<Block<T>>) -> Vec<Block<T>> {
        let m = self.message_modulus();
        let nb = blocks.len();
        let digit = self.lut(|x| x % m);
        let carry = self.lut(|x| (x >= m) as u64);
        // v_i + c_i ≤ 2m − 1: digit and carry from one blind rotation.
        let both = self.digit_carry_lut(2 * m - 1);
        let mut out = Vec::with_capacity(nb);
        let mut carry_in: Option<Block<T>> = None;
        for (i, b) in blocks.into_iter().enumerate() {
            let s = match &carry_in {
                Some(c) => b.add(c),
                None => b,
            };
            if s.degree < m && s.noise_level <= 1 {
                out.push(s);
                carry_in = None;
                continue;
            }
            let carries = i + 1 < nb && s.degree >= m;
            if let Some(lut) = both.as_ref().filter(|l| carries && s.degree <= l.max_value()) {
                let job = ManyJob { input: s.ct, input_degree: s.degree, lut };
                let mut r = self.bootstrap_many_lut(vec![job]).pop().expect("one job").into_iter();
                out.push(r.next().expect("digit"));
                carry_in = r.next();
                continue;
            }
            let mut jobs =
                vec![Job { input: s.ct.clone(), lut: &digit, degree: s.degree.min(m - 1) }];
            if carries {
                jobs.push(Job { input: s.ct, lut: &carry, degree: 1 });
            }
            let mut r = self.bootstrap_many(jobs).into_iter();
            out.push(r.next().expect("digit"));
            carry_in = r.next();
        }
        out
    }

    /// The Hillis–Steele scan (see module doc).
    fn scan_single_carry(&self, blocks: Vec<Block<T>>) -> Vec<Block<T>> {
        let m = self.message_modulus();
        let nb = blocks.len();
        let digit = self.lut(|x| x % m);
        let carry0 = self.lut(|x| (x >= m) as u64);
        let state = self.lut(|x| match x {
            _ if x >= m => GENERATE,
            _ if x == m - 1 => PROPAGATE,
            _ => NONE,
        });
        // Layer 1: block 0's digit, block 0's carry (one many-LUT bootstrap when it fits), the
        // other blocks' states (the top block's carry out is dropped: arithmetic is mod 2^bits).
        let both = self.digit_carry_lut(2 * m - 1);
        let b0 = &blocks[0];
        let many0 =
            both.as_ref().filter(|l| nb > 1 && b0.degree >= m && b0.degree <= l.max_value());
        let mut jobs = Vec::new();
        let mut many = Vec::new();
        match many0 {
            Some(lut) => many.push(ManyJob { input: b0.ct.clone(), input_degree: b0.degree, lut }),
            None => jobs.push(Job { input: b0.ct.clone(), lut: &digit, degree: m - 1 }),
        }
        let mut has_state = vec![false; nb.saturating_sub(1)];
        for (i, b) in blocks.iter().enumerate().take(nb - 1) {
            // A block below m − 1 can neither generate nor propagate: its state is a known 0
            // (block 0 below m cannot carry).
            if i == 0 && many0.is_some() {
                has_state[0] = true;
            } else if b.degree >= m - 1 {
                let lut = if i == 0 { &carry0 } else { &state };
                jobs.push(Job { input: b.ct.clone(), lut, degree: 2 });
                has_state[i] = true;
            }
        }
        let (single, multi) = self.bootstrap_layer(jobs, many);
        let mut out = single.into_iter();
        let mut multi = multi.into_iter().next().map(Vec::into_iter);
        let first = match multi.as_mut() {
            Some(r) => r.next().expect("block 0 digit"),
            None => out.next().expect("block 0 digit"),
        };
        let mut states: Vec<Block<T>> = has_state
            .iter()
            .enumerate()
            .map(|(i, &h)| match (i, multi.as_mut()) {
                (0, Some(r)) => r.next().expect("block 0 carry"),
                _ if h => out.next().expect("state"),
                _ => self.trivial_block(NONE),
            })
            .collect();
        if let Some(s0) = states.first_mut().filter(|s| s.degree > 1) {
            s0.degree = 1;
        }
        // Hillis–Steele scan: after the round of distance d, states[i] combines blocks
        // i−2d+1 ..= i; states below d are final (carries 0/1).
        let combine = self.lut2(|hi, lo| if hi == PROPAGATE { lo } else { hi });
        let mut d = 1;
        while d < states.len() {
            let idx: Vec<usize> = (d..states.len()).collect();
            let jobs = idx
                .iter()
                .map(|&i| Job {
                    input: self.pack(&states[i], &states[i - d]),
                    lut: &combine,
                    degree: if i < 2 * d { 1 } else { 2 },
                })
                .collect();
            for (i, b) in idx.into_iter().zip(self.bootstrap_many(jobs)) {
                states[i] = b;
            }
            d *= 2;
        }
        // Last layer: digit of v_i + carry_in.
        let jobs = (1..nb)
            .map(|i| Job { input: blocks[i].add(&states[i - 1]).ct, lut: &digit, degree: m - 1 })
            .collect();
        std::iter::once(first).chain(self.bootstrap_many(jobs)).collect()
    }

    /// Blocks → clean blocks (every digit `< m`, noise level ≤ 1), bootstrapping only what the
    /// bounds require.
    pub(crate) fn clean_blocks(&self, mut blocks: Vec<Block<T>>) -> Vec<Block<T>> {
        let m = self.message_modulus();
        if blocks.iter().all(|b| b.degree < m) {
            self.refresh(&mut blocks);
            return blocks;
        }
        if self.fits_single_carry(&blocks) {
            return self.propagate_single_carry(blocks);
        }
        // Split every block holding a carry into digit and carry, then one carry per block.
        let nb = blocks.len();
        let digit = self.lut(|x| x % m);
        let carry = self.lut(|x| x / m);
        // Blocks of degree up to 2m − 1 split with one many-LUT bootstrap.
        let both = self.digit_carry_lut(2 * m - 1);
        let mut jobs = Vec::new();
        let mut plan = Vec::new();
        let mut many = Vec::new();
        let mut many_plan = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            if b.degree >= m {
                let split = i + 1 < nb;
                if let Some(lut) = both.as_ref().filter(|l| split && b.degree <= l.max_value()) {
                    many.push(ManyJob { input: b.ct.clone(), input_degree: b.degree, lut });
                    many_plan.push(i);
                    continue;
                }
                jobs.push(Job { input: b.ct.clone(), lut: &digit, degree: m - 1 });
                plan.push((i, false));
                if split {
                    jobs.push(Job { input: b.ct.clone(), lut: &carry, degree: b.degree / m });
                    plan.push((i, true));
                }
            }
        }
        let mut carries: Vec<Option<Block<T>>> = vec![None; nb];
        let (single, multi) = self.bootstrap_layer(jobs, many);
        for ((i, is_carry), b) in plan.into_iter().zip(single) {
            if is_carry {
                carries[i] = Some(b);
            } else {
                blocks[i] = b;
            }
        }
        for (i, outs) in many_plan.into_iter().zip(multi) {
            let mut r = outs.into_iter();
            blocks[i] = r.next().expect("digit");
            carries[i] = r.next();
        }
        // Every block is now a digit; noisy ones are refreshed so that digit + carry stays
        // within the scan's noise budget.
        self.refresh(&mut blocks);
        let summed: Vec<Block<T>> = (0..nb)
            .map(|i| match (i > 0).then(|| carries[i - 1].as_ref()).flatten() {
                Some(c) => blocks[i].add(c),
                None => blocks[i].clone(),
            })
            .collect();
        // With carry_modulus = message_modulus this fits the single-carry scan at once; larger
        // carry spaces take another split.
        self.clean_blocks(summed)
    }

    /// A copy of `ct` with clean blocks ([`RadixCiphertext::is_clean`]).
    pub fn clean(&self, ct: &RadixCiphertext<T>) -> RadixCiphertext<T> {
        if ct.is_clean(self.message_modulus()) {
            return ct.clone();
        }
        RadixCiphertext { ty: ct.ty, blocks: self.clean_blocks(ct.blocks.clone()) }
    }

    /// Sum of many clean digits per position (column `i` weighs `m^i`; positions past the last
    /// are dropped, arithmetic mod `m^B`), returned clean.
    pub(crate) fn sum_columns(&self, mut cols: Vec<Vec<Block<T>>>) -> Vec<Block<T>> {
        let m = self.message_modulus();
        let p = self.plaintext_modulus();
        let max_noise = self.max_noise_level();
        let nb = cols.len();
        let digit = self.lut(|x| x % m);
        let carry = self.lut(|x| x / m);
        // Groups of degree up to 2m − 1 split with one many-LUT bootstrap.
        let both = self.digit_carry_lut(2 * m - 1);
        let fits = |i: usize, col: &[Block<T>]| {
            let deg: u64 = col.iter().map(|b| b.degree).sum();
            let noise: u64 = col.iter().map(|b| b.noise_level).sum();
            deg <= if i == 0 { 2 * m - 1 } else { 2 * m - 2 } && noise < max_noise
        };
        while !cols.iter().enumerate().all(|(i, c)| fits(i, c)) {
            let mut next: Vec<Vec<Block<T>>> = vec![Vec::new(); nb];
            let mut jobs = Vec::new();
            let mut plan = Vec::new(); // target column of each job's output
            let mut many = Vec::new();
            let mut many_plan = Vec::new(); // column of each many-LUT job's digit
            for (i, col) in cols.iter().enumerate() {
                if fits(i, col) {
                    next[i].extend(col.iter().cloned());
                    continue;
                }
                // Greedy groups that fit one block.
                let mut groups: Vec<Vec<&Block<T>>> = Vec::new();
                let (mut deg, mut noise) = (0, 0);
                for b in col {
                    let open = groups
                        .last()
                        .is_some_and(|_| deg + b.degree < p && noise + b.noise_level <= max_noise);
                    if !open {
                        groups.push(Vec::new());
                        deg = 0;
                        noise = 0;
                    }
                    deg += b.degree;
                    noise += b.noise_level;
                    groups.last_mut().expect("group").push(b);
                }
                for g in groups {
                    let deg: u64 = g.iter().map(|b| b.degree).sum();
                    if g.len() == 1 && deg < m && g[0].noise_level <= 1 {
                        next[i].push(g[0].clone());
                        continue;
                    }
                    let mut s = g[0].clone();
                    for b in &g[1..] {
                        s = s.add(b);
                    }
                    let split = deg >= m && i + 1 < nb;
                    if let Some(lut) = both.as_ref().filter(|l| split && deg <= l.max_value()) {
                        many.push(ManyJob { input: s.ct, input_degree: deg, lut });
                        many_plan.push(i);
                        continue;
                    }
                    jobs.push(Job { input: s.ct.clone(), lut: &digit, degree: deg.min(m - 1) });
                    plan.push(i);
                    if deg >= m && i + 1 < nb {
                        jobs.push(Job { input: s.ct, lut: &carry, degree: deg / m });
                        plan.push(i + 1);
                    }
                }
            }
            let (single, multi) = self.bootstrap_layer(jobs, many);
            for (i, b) in plan.into_iter().zip(single) {
                next[i].push(b);
            }
            for (i, outs) in many_plan.into_iter().zip(multi) {
                let mut r = outs.into_iter();
                next[i].push(r.next().expect("digit"));
                next[i + 1].push(r.next().expect("carry"));
            }
            cols = next;
        }
        let blocks = cols
            .into_iter()
            .map(|col| {
                let mut it = col.into_iter();
                match it.next() {
                    None => self.trivial_block(0),
                    Some(first) => it.fold(first, |acc, b| acc.add(&b)),
                }
            })
            .collect();
        self.propagate_single_carry(blocks)
    }
}
