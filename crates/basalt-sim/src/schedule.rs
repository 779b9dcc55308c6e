//! Timing a trace on a machine: overlap compute with memory, account stalls, aggregate regions.
//!
//! # Model
//! The trace is cut into *windows* at region boundaries (`Enter`/`Exit`) and at barriers. A
//! window is a run of kernels the machine may overlap:
//!
//! * compute time — `Serial`: Σ (busy + fill) over its kernels; `Chained`: the busiest unit
//!   group's Σ busy plus the deepest pipeline fill (vector chaining, CraterLake §5.4; Strix's
//!   fully pipelined PBS cluster, §IV-B);
//! * memory time — Σ bytes / HBM bandwidth (loads are decoupled and prefetched within the
//!   window, CraterLake §6 / Osiris GSC); with `memory.key_share` keys and other data stream
//!   over disjoint channel groups (Strix §IV-A: 8 of 16 HBM channels carry the bsk);
//! * window time = max(compute, memory); the excess over compute is a *memory stall*.
//!
//! HBM is a second, in-order timeline: with `prefetch_windows = p` the loads of window w may
//! start as soon as window w − p started (double-buffering, CraterLake's decoupled data
//! orchestration §6, Osiris' next-key fetch under GSC §IV-E, Strix's bsk prefetch §IV-C); a
//! window then ends at max(its start + compute, the end of its loads). With p = 0 loads start
//! with their window. Loads issued ahead are held on chip, so at most `memory.prefetch_mib`
//! (default: the on-chip capacity) may arrive before their window starts; HBM latency, bank
//! activations and the on-chip store's banks are the unit models of [`crate::bandwidth`], each
//! off unless the machine file gives it. Barriers: with Osiris' `limb_interleaving = false` a BConv cannot overlap
//! the INTT before it or the NTT after it (Osiris §IV-B), so BConv kernels get a window of
//! their own. Without a KSHGen unit (or with `kshgen = false`) `KeyGen` kernels cost nothing
//! and their keys are loaded in full instead (`memory::kernel_traffic`). Without a BConv unit
//! (F1+, or `crb_chaining = false`) a base conversion is `N·from·to` products on the
//! multipliers and as many sums on the adders; with `crb_chaining = false` and
//! `schedule.rf_ports` every operand also crosses the register file, whose port time bounds
//! the window's compute (CraterLake §4.1, Table 4). With a crossbar network (residue-polynomial
//! tiling, F1+ and CraterLake's Table 4 "network" ablation, §4.3) the words the window moves
//! across the crossbar bound its compute the same way (`units::crossbar_words`).
//!
//! Identified loads and stores (see `memory`) first go through the on-chip store in a pre-pass
//! over the whole trace (Belady needs the future); a load that hits moves no HBM bytes, a
//! store moves bytes only when its result is evicted dirty (charged to the window that evicts
//! it). `KeyGen` of a seeded key still runs on a hit (conservative: the generated half is not
//! assumed to be kept).

use std::collections::{BTreeMap, HashMap};

use basalt_trace::{ElemOp, Event, Kernel, KernelKind, Trace};

use crate::SimError;
use crate::bandwidth::{self, Hbm};
use crate::machine::{Machine, Overlap};
use crate::memory::{Access, DataKind, Outcome, Store, Traffic, kernel_traffic};
use crate::report::{Costs, RegionStat, Report, UnitStat};
use crate::units;

/// Time `trace` on `machine`.
///
/// # Errors
/// [`SimError::NoUnitFor`] when the machine has no unit for a kernel kind,
/// [`SimError::TraceMismatch`] when a kernel exceeds the machine's ring degree or limb count,
/// [`SimError::BadTrace`] for unbalanced regions, [`SimError::DoesNotFit`] when the program's
/// keys and ciphertexts exceed on-chip plus off-chip capacity, [`SimError::UntimedBootstraps`]
/// when the trace stands for bootstraps it does not contain (time it with
/// [`crate::refresh::simulate_with_bootstrap`]).
pub fn simulate(machine: &Machine, trace: &Trace) -> Result<Report, SimError> {
    crate::refresh::check_marker_form(trace)?;
    let markers = crate::refresh::bootstrap_markers(trace);
    if markers > 0 {
        return Err(SimError::UntimedBootstraps { markers });
    }
    simulate_unmarked(machine, trace)
}

/// [`simulate`] without the marker check: the segments [`crate::refresh`] cut out.
pub(crate) fn simulate_unmarked(machine: &Machine, trace: &Trace) -> Result<Report, SimError> {
    let generated;
    let trace = if machine.switches.plaintext_generation == Some(true) {
        generated = generate_plaintexts(trace);
        &generated
    } else {
        trace
    };
    let mut s = State::new(machine);
    s.plan = plan_store(machine, trace)?;
    let barrier = machine.switches.limb_interleaving == Some(false);
    for ev in &trace.events {
        match ev {
            Event::Enter { name } => {
                s.flush();
                s.stack.push(name.clone());
            }
            Event::Exit => {
                s.flush();
                if s.stack.pop().is_none() {
                    return Err(SimError::BadTrace("region exit without enter".into()));
                }
            }
            // Markers are cut out by `refresh` before a trace reaches here.
            Event::Key { .. } | Event::Marker { .. } => {}
            Event::Kernel(k) => {
                let is_barrier = barrier && matches!(k, Kernel::BConv { .. });
                if is_barrier {
                    s.flush();
                }
                s.kernel(k)?;
                if is_barrier {
                    s.flush();
                }
            }
        }
    }
    s.flush();
    if !s.stack.is_empty() {
        return Err(SimError::BadTrace(format!("unclosed region `{}`", s.stack.join(";"))));
    }
    Ok(s.finish(trace))
}

/// `trace` with every plaintext generated on chip (`switches.plaintext_generation`): a
/// `PlainLoad` of `l` residues becomes the load of the one stored residue (in coefficient form)
/// and an `l`-residue forward NTT after reducing it modulo each prime (the reductions are
/// folded into the NTT's first stage, as OF-Limb does).
fn generate_plaintexts(trace: &Trace) -> Trace {
    let mut events = Vec::with_capacity(trace.events.len());
    for ev in &trace.events {
        match *ev {
            Event::Kernel(Kernel::PlainLoad { n, limbs }) => {
                events.push(Event::Kernel(Kernel::PlainLoad { n, limbs: 1 }));
                events.push(Event::Kernel(Kernel::Ntt { n, limbs }));
            }
            _ => events.push(ev.clone()),
        }
    }
    Trace { events }
}

/// What the on-chip store did with each kernel of the trace (by kernel index): `None` for
/// kernels that are not identified memory operations.
struct Plan {
    outcomes: Vec<Option<Outcome>>,
    /// CtLoads of objects the trace stored earlier (reloaded results = intermediates).
    reloads: Vec<bool>,
}

/// Run every identified access of `trace` through the machine's on-chip store.
fn plan_store(m: &Machine, trace: &Trace) -> Result<Plan, SimError> {
    // Identity namespaces: a key at a given limb count, a TFHE key of a given shape, an object.
    #[derive(Hash, PartialEq, Eq)]
    enum Obj {
        Key(u64, u32, u32),
        Tfhe(basalt_trace::TfheKey, u32, u64),
        Ct(u64),
    }
    let mut ids: HashMap<Obj, u64> = HashMap::new();
    let mut accesses = Vec::new();
    let mut at = Vec::new(); // kernel index of each access
    let mut reloads = Vec::new();
    let mut stored = std::collections::HashSet::new();
    let mut key = None;
    let mut idx = 0usize;
    let mut largest_anonymous = 0.0f64;
    for ev in &trace.events {
        let k = match ev {
            Event::Key { key: id } => {
                key = Some(*id);
                continue;
            }
            Event::Kernel(k) => k,
            _ => continue,
        };
        let obj = match *k {
            Kernel::KeyLoad { limbs, digits, .. } => key.take().map(|id| {
                // With `key_subsets` the key is one object at any size (the store hits a
                // resident copy at least as large).
                let shape = if m.memory.key_subsets { (0, 0) } else { (limbs, digits) };
                (Obj::Key(id.as_u64(), shape.0, shape.1), Access::Read)
            }),
            // One GGSW per blind-rotation iteration: iteration i's key is not iteration j's,
            // so it is streamed without an identity the store could hit.
            Kernel::TfheKeyLoad { key: basalt_trace::TfheKey::Ggsw, .. } => None,
            Kernel::TfheKeyLoad { key, size, count } => {
                Some((Obj::Tfhe(key, size, count), Access::Read))
            }
            Kernel::CtLoad { id, .. } => Some((Obj::Ct(id), Access::Read)),
            Kernel::CtStore { id, .. } => Some((Obj::Ct(id), Access::Write)),
            _ => None,
        };
        reloads.push(matches!(*k, Kernel::CtLoad { id, .. } if stored.contains(&id)));
        if let Kernel::CtStore { id, .. } = *k {
            stored.insert(id);
        }
        if let Some((o, a)) = obj {
            units::check_fits(m, k)?;
            let bytes = kernel_traffic(m, k).map_or(0.0, |t| t.1).round() as u64;
            let next = ids.len() as u64;
            let id = *ids.entry(o).or_insert(next);
            accesses.push((id, bytes, a));
            at.push(idx);
        } else if let Some((_, bytes)) = kernel_traffic(m, k) {
            largest_anonymous = largest_anonymous.max(bytes);
        }
        idx += 1;
    }
    check_footprint(m, &accesses, largest_anonymous)?;
    let capacity = (m.memory.onchip_mib * 1024.0 * 1024.0) as u64;
    let mut outcomes = vec![None; idx];
    for (i, o) in Store::new(m.memory.eviction, capacity).run(&accesses).into_iter().enumerate() {
        outcomes[at[i]] = Some(o);
    }
    if m.memory.warm {
        // Each input's first load finds it resident: no HBM bytes, a hit.
        for i in trace_input_loads(trace) {
            if let Some(Some(o)) = outcomes.get_mut(i) {
                o.loaded = 0;
                o.hit = true;
            }
        }
    }
    Ok(Plan { outcomes, reloads })
}

/// Kernel indices of the program's input loads: the first `CtLoad` of each object the trace
/// neither stored nor loaded before (as [`Trace::input_loads`]).
fn trace_input_loads(trace: &Trace) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (i, k) in trace.kernels().enumerate() {
        match *k {
            Kernel::CtLoad { id, .. } if seen.insert(id) => out.push(i),
            Kernel::CtStore { id, .. } => {
                seen.insert(id);
            }
            _ => {}
        }
    }
    out
}

/// Refuse a program that no memory of the machine can hold: every identified object (key,
/// ciphertext) lives somewhere from its first to its last use, and an anonymous stream needs at
/// least its largest load stored, so the largest sum of the objects live at one access plus
/// that load is a lower bound on the footprint. Checked only when the machine states its
/// off-chip capacity (`memory.hbm_gib`).
fn check_footprint(
    m: &Machine,
    accesses: &[(u64, u64, Access)],
    largest_anonymous: f64,
) -> Result<(), SimError> {
    let Some(hbm_gib) = m.memory.hbm_gib else { return Ok(()) };
    // id -> (largest size, first access, last access)
    let mut life: HashMap<u64, (u64, usize, usize)> = HashMap::new();
    for (i, &(id, bytes, _)) in accesses.iter().enumerate() {
        let e = life.entry(id).or_insert((0, i, i));
        e.0 = e.0.max(bytes);
        e.2 = i;
    }
    // Sweep: an object's bytes count from its first access through its last one.
    let mut delta = vec![0i128; accesses.len() + 1];
    for &(bytes, first, last) in life.values() {
        delta[first] += bytes as i128;
        delta[last + 1] -= bytes as i128;
    }
    let (mut live, mut peak) = (0i128, 0i128);
    for d in delta {
        live += d;
        peak = peak.max(live);
    }
    let need = peak as f64 + largest_anonymous;
    let mib = 1024.0 * 1024.0;
    if need > m.memory.onchip_mib * mib + hbm_gib * 1024.0 * mib {
        return Err(SimError::DoesNotFit {
            machine: m.name.clone(),
            need_mib: need / mib,
            onchip_mib: m.memory.onchip_mib,
            hbm_gib,
        });
    }
    Ok(())
}

struct State<'m> {
    m: &'m Machine,
    plan: Plan,
    /// Index of the next kernel (into `plan`).
    next_kernel: usize,
    onchip_hits: u64,
    onchip_hit_bytes: f64,
    bytes_per_cycle: f64,
    /// Latency, banks and prefetch buffer of the HBM ([`crate::bandwidth`]).
    hbm: Hbm,
    stack: Vec<String>,
    /// Unit index per kernel kind (routing depends only on the kind).
    route: HashMap<KernelKind, usize>,
    // current window
    busy: Vec<f64>,
    serial: f64,
    fill: f64,
    /// Register-file port cycles of the window (unchained machines only).
    rf: f64,
    /// Words the window moves into and out of the clusters over a residue-tiled crossbar.
    net_in: f64,
    net_out: f64,
    key_bytes: f64,
    ksk_bytes: f64,
    other_bytes: f64,
    /// Row-activation cycles of the window's HBM stream (bank model).
    activations: f64,
    /// Bytes the window's loads and stores move through the on-chip store's banks.
    sram_bytes: f64,
    kernels: u64,
    // timelines
    hbm_free: f64,
    starts: Vec<f64>,
    /// Starts of the windows that loaded something.
    load_starts: Vec<f64>,
    /// End of every window so far, and the latest of them (windows may overlap).
    ends: Vec<f64>,
    latest_end: f64,
    /// Where the union of the windows' compute intervals ends so far.
    compute_covered: f64,
    /// When each unit group finishes the windows given to it so far (in order).
    unit_free: Vec<f64>,
    // totals
    unit_busy: Vec<f64>,
    cycles: f64,
    compute: f64,
    stall: f64,
    traffic: Traffic,
    regions: BTreeMap<String, RegionStat>,
    skipped_keygen: u64,
}

/// The busiest shared resource of a chained window: each named pool carries the Σ busy of
/// the units naming it (`Unit::pools`), a unit without pools is a pool of its own. Without
/// pools this is the busiest unit.
fn busiest_pool(units: &[crate::machine::Unit], busy: &[f64]) -> f64 {
    let mut pools: HashMap<&str, f64> = HashMap::new();
    let mut max = 0.0_f64;
    for (u, &b) in units.iter().zip(busy) {
        if u.pools.is_empty() {
            max = max.max(b);
        }
        for p in &u.pools {
            *pools.entry(p.as_str()).or_default() += b;
        }
    }
    pools.values().fold(max, |m, &b| m.max(b))
}

impl<'m> State<'m> {
    fn new(m: &'m Machine) -> State<'m> {
        State {
            m,
            plan: Plan { outcomes: Vec::new(), reloads: Vec::new() },
            next_kernel: 0,
            onchip_hits: 0,
            onchip_hit_bytes: 0.0,
            bytes_per_cycle: m.memory.hbm_gbps * 1e9 / m.hz(),
            hbm: Hbm::of(m),
            stack: Vec::new(),
            route: HashMap::new(),
            busy: vec![0.0; m.units.len()],
            serial: 0.0,
            fill: 0.0,
            rf: 0.0,
            net_in: 0.0,
            net_out: 0.0,
            key_bytes: 0.0,
            ksk_bytes: 0.0,
            other_bytes: 0.0,
            activations: 0.0,
            sram_bytes: 0.0,
            kernels: 0,
            hbm_free: 0.0,
            starts: Vec::new(),
            load_starts: Vec::new(),
            ends: Vec::new(),
            latest_end: 0.0,
            compute_covered: 0.0,
            unit_free: vec![0.0; m.units.len()],
            unit_busy: vec![0.0; m.units.len()],
            cycles: 0.0,
            compute: 0.0,
            stall: 0.0,
            traffic: Traffic::default(),
            regions: BTreeMap::new(),
            skipped_keygen: 0,
        }
    }

    fn kernel(&mut self, k: &Kernel) -> Result<(), SimError> {
        self.kernels += 1;
        let i = self.next_kernel;
        self.next_kernel += 1;
        if let Some((kind, bytes)) = kernel_traffic(self.m, k) {
            // Loads still have to fit the machine (a key for N = 2^17 on a 2^16 machine).
            units::check_fits(self.m, k)?;
            let kind = if self.plan.reloads.get(i) == Some(&true) {
                DataKind::Intermediates
            } else {
                kind
            };
            // Identified operations cost what the store says; anonymous loads stream in full.
            let (loaded, written) = match self.plan.outcomes.get(i).copied().flatten() {
                Some(o) => {
                    if o.hit {
                        self.onchip_hits += 1;
                        self.onchip_hit_bytes += bytes;
                    }
                    (o.loaded as f64, o.written as f64)
                }
                None => (bytes, 0.0),
            };
            self.traffic.add(kind, loaded);
            self.traffic.add(DataKind::Intermediates, written);
            self.activations +=
                self.hbm.activation_cycles(loaded) + self.hbm.activation_cycles(written);
            // The operand passes the on-chip store's banks, and so does what HBM delivers.
            self.sram_bytes += bytes + loaded;
            let ksk = matches!(k, Kernel::TfheKeyLoad { key: basalt_trace::TfheKey::Ksk, .. });
            if ksk && self.m.memory.ksk_share.is_some() {
                self.ksk_bytes += loaded;
                self.other_bytes += written;
            } else if kind == DataKind::Keys {
                self.key_bytes += loaded;
                self.other_bytes += written;
            } else {
                self.other_bytes += loaded + written;
            }
            return Ok(());
        }
        if matches!(k, Kernel::KeyGen { .. }) && !self.m.kshgen_enabled() {
            self.skipped_keygen += 1;
            return Ok(());
        }
        if let Some((ports, lanes)) = self.m.rf_ports() {
            self.rf += units::rf_port_cycles(k, lanes) / ports as f64;
        }
        if let Some(x) = self.m.crossbar() {
            let (i, o) = units::crossbar_words(k, &x, self.m.word_bits as f64 / 8.0);
            self.net_in += i;
            self.net_out += o;
        }
        if let Kernel::BConv { n, from, to } = *k
            && !self.m.has_bconv_unit()
        {
            // No CRB: N·from·to products on the multipliers, as many sums on the adders.
            units::check_fits(self.m, k)?;
            for op in [ElemOp::Mul, ElemOp::Add] {
                self.charge(&Kernel::Elem { n, limbs: from * to, op })?;
            }
            return Ok(());
        }
        let bconv_busy = self.charge(k)?;
        if let Kernel::BConv { n, from, to } = *k
            && self.m.switches.modchange_lockstep == Some(true)
        {
            self.hold_ntt_units(n, from, to, bconv_busy)?;
        }
        Ok(())
    }

    /// Osiris' ModChange macro-pipeline (`switches.modchange_lockstep`): the INTT of the `from`
    /// limbs and the NTT of the `to` limbs run in lockstep with the BConv array, so the NTT
    /// units are held for the array's whole `busy` period, not only for the limbs they
    /// transform (those are charged by their own kernels; this adds the idle remainder, e.g.
    /// `N/p · (β − α)` of the INTT stage in a ModUp, §IV-B/§IV-C).
    fn hold_ntt_units(&mut self, n: u32, from: u32, to: u32, busy: f64) -> Result<(), SimError> {
        let transforms = Kernel::Ntt { n, limbs: from + to };
        let idx = self.m.unit_index_for(&transforms)?;
        let charged = units::cost(self.m, &self.m.units[idx], &transforms)?.busy;
        self.busy[idx] += (busy - charged).max(0.0);
        Ok(())
    }

    /// Add `k`'s cost to the unit that executes it; returns that busy time.
    fn charge(&mut self, k: &Kernel) -> Result<f64, SimError> {
        let idx = match self.route.get(&k.kind()) {
            Some(&i) => i,
            None => {
                let i = self.m.unit_index_for(k)?;
                self.route.insert(k.kind(), i);
                i
            }
        };
        let c = units::cost(self.m, &self.m.units[idx], k)?;
        self.busy[idx] += c.busy;
        self.serial += c.busy + c.fill;
        self.fill = self.fill.max(c.fill);
        Ok(c.busy)
    }

    fn flush(&mut self) {
        if self.kernels == 0 {
            return;
        }
        // A window starts when the one `o + 1` before it has ended (and not before its
        // predecessor started); with o = 0, when the previous window ends.
        let o = match self.m.overlap() {
            Overlap::Serial => 0,
            Overlap::Chained => self.m.schedule.overlap_windows as usize,
        };
        let start = match self.ends.len().checked_sub(o + 1) {
            Some(i) => self.ends[i].max(self.starts.last().copied().unwrap_or(0.0)),
            None => self.starts.last().copied().unwrap_or(0.0),
        };
        // Data movement that bounds compute: register-file ports, crossbar words, the on-chip
        // store's banks.
        let moves = match self.m.crossbar() {
            Some(x) => self.rf.max(self.net_in.max(self.net_out) / x.words_per_cycle as f64),
            None => self.rf,
        }
        .max(bandwidth::sram_cycles(self.m, self.sram_bytes));
        let (compute_start, compute_end) = if o == 0 {
            let compute = match self.m.overlap() {
                Overlap::Serial => self.serial,
                Overlap::Chained => busiest_pool(&self.m.units, &self.busy) + self.fill,
            }
            .max(moves);
            (start, start + compute)
        } else {
            // Overlapping windows: each unit works through its windows in order; compute ends
            // when the last unit finishes its share, plus the deepest pipeline fill. (Pools,
            // register-file ports and the crossbar are not shared across overlapping windows.)
            let (mut first, mut last) = (f64::INFINITY, start);
            for (free, &b) in self.unit_free.iter_mut().zip(&self.busy) {
                if b > 0.0 {
                    first = first.min(free.max(start));
                    *free = free.max(start) + b;
                    last = last.max(*free);
                }
            }
            (first.min(last), (last + self.fill).max(start + moves))
        };
        let p = self.m.schedule.prefetch_windows as usize;
        // Loads of this window may start when the window `p` before it started (or at time 0
        // for the first windows); with p = 0, when this window starts.
        let earlier =
            if self.m.schedule.prefetch_loading_windows { &self.load_starts } else { &self.starts };
        let earliest = match p {
            0 => start,
            _ => earlier.len().checked_sub(p).map_or(0.0, |i| earlier[i]),
        };
        // With `key_share` (and `ksk_share`), keys (TFHE key-switching keys) and everything
        // else stream over disjoint channel groups.
        let bpc = self.bytes_per_cycle;
        let (ks, kk) = (self.m.memory.key_share, self.m.memory.ksk_share.unwrap_or(0.0));
        let rest = 1.0 - ks.unwrap_or(0.0) - kk;
        let mut mem = match ks {
            Some(k) => (self.key_bytes / (bpc * k)).max(self.other_bytes / (bpc * rest)),
            None => (self.key_bytes + self.other_bytes) / (bpc * rest),
        };
        if kk > 0.0 {
            mem = mem.max(self.ksk_bytes / (bpc * kk));
        }
        // The banks' row activations bound the stream as well as its bytes.
        mem = mem.max(self.activations);
        let mut end = compute_end;
        if mem > 0.0 {
            self.load_starts.push(start);
            let load_start = self.hbm.load_start(self.hbm_free.max(earliest), start, mem);
            self.hbm_free = load_start + mem;
            // The channel is free again after the transfer; the data lands a latency later.
            end = end.max(self.hbm_free + self.hbm.latency_cycles);
        }
        self.starts.push(start);
        self.ends.push(end);
        // Exclusive time: what this window adds beyond every earlier window's end. Its compute
        // share is the part of its compute interval no earlier window's compute covered (with
        // overlapping windows a unit may work while an earlier window waits for memory), capped
        // at the exclusive time; the rest is memory stall. Without overlap: stall = time −
        // compute, as before. (With overlap, compute that ran under an earlier window's stall
        // is not moved out of that stall: the stall is an upper bound.)
        let before = self.latest_end;
        self.latest_end = before.max(end);
        let time = (end - before).max(0.0);
        let covered = (compute_end - compute_start.max(self.compute_covered)).max(0.0);
        self.compute_covered = self.compute_covered.max(compute_end);
        let compute = covered.min(time);
        let stall = time - compute;
        self.cycles += time;
        self.compute += compute;
        self.stall += stall;
        let path = if self.stack.is_empty() { "(top)".to_string() } else { self.stack.join(";") };
        let r = self.regions.entry(path).or_default();
        r.cycles += time;
        r.stall_cycles += stall;
        r.kernels += self.kernels;
        for (t, b) in self.unit_busy.iter_mut().zip(self.busy.iter_mut()) {
            *t += *b;
            *b = 0.0;
        }
        self.serial = 0.0;
        self.fill = 0.0;
        self.rf = 0.0;
        self.net_in = 0.0;
        self.net_out = 0.0;
        self.key_bytes = 0.0;
        self.ksk_bytes = 0.0;
        self.other_bytes = 0.0;
        self.activations = 0.0;
        self.sram_bytes = 0.0;
        self.kernels = 0;
    }

    fn finish(self, trace: &Trace) -> Report {
        let m = self.m;
        let hz = m.hz();
        let seconds = self.cycles / hz;
        let units: Vec<UnitStat> = m
            .units
            .iter()
            .zip(&self.unit_busy)
            .map(|(u, &busy)| UnitStat {
                name: u.name.clone(),
                class: u.class,
                count: u.count,
                busy_cycles: busy,
                utilisation: if self.cycles > 0.0 { busy / self.cycles } else { 0.0 },
                energy_j: m.unit_energy_j(u, busy),
            })
            .collect();
        let mut costs = Costs { paper: m.paper.clone(), ..Costs::default() };
        let mut any = false;
        for e in units.iter().filter_map(|u| u.energy_j) {
            costs.units_j += e;
            any = true;
        }
        for p in m.components.iter().filter_map(|c| c.power_w) {
            costs.components_j += p * seconds;
            any = true;
        }
        if let Some(pj) = m.memory.hbm_pj_per_byte {
            costs.hbm_j = Some(pj * 1e-12 * self.traffic.total());
            any = true;
        }
        let energy = costs.units_j + costs.components_j + costs.hbm_j.unwrap_or(0.0);
        let mut area = None;
        for u in &m.units {
            match m.unit_area_mm2(u) {
                Some(a) => *area.get_or_insert(0.0) += a,
                None => costs.no_area.push(u.name.clone()),
            }
            if m.unit_energy_j(u, 0.0).is_none() {
                costs.no_power.push(u.name.clone());
            }
        }
        for c in &m.components {
            match c.area_mm2 {
                Some(a) => *area.get_or_insert(0.0) += a,
                None => costs.no_area.push(c.name.clone()),
            }
            if c.power_w.is_none() {
                costs.no_power.push(c.name.clone());
            }
        }
        costs.area_mm2 = area;
        costs.datapath_area_mm2 = m.datapath_area_mm2();
        if any && seconds > 0.0 {
            costs.power_w = Some(energy / seconds);
        }
        costs.peak_power_w = any.then(|| m.peak_power_w());
        Report {
            machine: m.name.clone(),
            clock_ghz: m.clock_ghz,
            cycles: self.cycles,
            seconds,
            compute_cycles: self.compute,
            stall_cycles: self.stall,
            units,
            traffic: self.traffic,
            regions: self.regions,
            kernel_units: trace.counts().into_iter().map(|(k, v)| (format!("{k:?}"), v)).collect(),
            skipped_keygen: self.skipped_keygen,
            onchip_hits: self.onchip_hits,
            onchip_hit_bytes: self.onchip_hit_bytes,
            energy_j: any.then_some(energy),
            costs,
        }
    }
}

#[cfg(test)]
mod tests;
