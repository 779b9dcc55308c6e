//! A machine is data (STYLE.md §4, after Timeloop/Accelergy): a TOML file names the clock, the unit
//! instances with their counts and lanes, the memories, and the paper's switches. Model code knows
//! unit *classes* (`units/`), never machines.
//!
//! Loading is strict: unknown keys are rejected (`deny_unknown_fields`), every number that a model
//! divides by must be positive, and every unit and memory must say where its numbers come from
//! (`source`), so that a constant fitted to a paper row names that row.

use std::path::Path;

use basalt_trace::Kernel;
use serde::{Deserialize, Serialize};

use crate::SimError;
pub use crate::selector::Selector;

/// The machine-file schema version this build reads.
pub const SCHEMA_VERSION: u32 = 1;

/// One accelerator configuration (one `data/machines/*.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub schema_version: u32,
    pub name: String,
    /// Paper key (`osiris`, `fab`, `mxv`, `craterlake`, `strix`) or `none`.
    pub paper: String,
    #[serde(default)]
    pub description: String,
    pub clock_ghz: f64,
    pub clock_source: String,
    /// Datapath word width (bits) of one residue / torus element.
    pub word_bits: u32,
    /// Bytes one word occupies in DRAM; defaults to `word_bits / 8` (densely packed).
    #[serde(default)]
    pub dram_bytes_per_word: Option<f64>,
    /// Largest ring degree (CKKS) or polynomial size (TFHE) the datapath supports.
    pub max_ring_degree: u32,
    /// Distinct RNS moduli the datapath holds constants for (FAB: 32 `madd` tables; CraterLake:
    /// 120 NTT-friendly primes). Checked against BConv `from + to` and key-load limbs.
    #[serde(default)]
    pub max_moduli: Option<u32>,
    pub memory: Memory,
    pub schedule: ScheduleCfg,
    #[serde(default)]
    pub switches: Switches,
    pub units: Vec<Unit>,
    /// Non-compute blocks that carry area and power (SRAM, PHYs, NoC).
    #[serde(default)]
    pub components: Vec<Component>,
    /// Where the units' per-action energy and per-lane area hold ([`crate::physical`]).
    /// When present, every unit must give `pj_per_action` (and `mm2_per_lane` unless the
    /// machine is an FPGA) instead of per-instance `area_mm2` and `power_w`.
    #[serde(default)]
    pub physical: Option<crate::physical::Physical>,
    /// Constants of this file chosen to match paper rows: each names its field and the rows,
    /// which the reproduction then reports as calibration, never as predictions.
    #[serde(default)]
    pub fitted: Vec<Fit>,
}

/// One constant fitted to paper rows (`[[fitted]]` in a machine file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// The dotted field (`schedule.overlap_windows`, `units.mdc.power_w`).
    pub field: String,
    /// The rows it was fitted to, `table/row/metric` of the machine's paper.
    pub rows: Vec<String>,
    /// How it was fitted (what was matched, what else was looked at).
    pub why: String,
}

/// Off-chip and on-chip memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    pub hbm_gbps: f64,
    /// On-chip capacity available to operands (register file / scratchpads), MiB.
    pub onchip_mib: f64,
    /// Off-chip (HBM/DRAM) capacity, GiB, where the paper states it. A program whose keys and
    /// ciphertexts cannot all be held on chip plus off chip is refused
    /// ([`SimError::DoesNotFit`]). Absent = unbounded (not checked).
    #[serde(default)]
    pub hbm_gib: Option<f64>,
    pub eviction: Eviction,
    /// Off-chip access energy; omitted when the paper gives none.
    #[serde(default)]
    pub hbm_pj_per_byte: Option<f64>,
    /// Fraction of the HBM channels dedicated to key traffic, the rest serving everything else
    /// (Strix §IV-A: 8 of 16 channels for the bsk). Absent = all channels shared.
    #[serde(default)]
    pub key_share: Option<f64>,
    /// Fraction of the HBM channels dedicated to TFHE key-switching keys (`TfheKeyLoad` of the
    /// ksk; Strix §IV-A: 4 of 16 channels), taken from the channels that `key_share` leaves to
    /// other data. Absent = the ksk streams with the other keys.
    #[serde(default)]
    pub ksk_share: Option<f64>,
    /// CPU models only: nanoseconds per kernel output word for the host program's work outside
    /// the traced kernels (allocating results, copies, untraced passes), measured by `basalt sim
    /// calibrate` on a hold-out operation. Accelerators write into preallocated scratchpads and
    /// leave it out.
    #[serde(default)]
    pub output_overhead_ns_per_word: Option<f64>,
    /// A named key kept on chip serves loads of it at fewer limbs or digits: the key at level
    /// ℓ is a subset (residues q_0..q_ℓ and P of the same digits) of the key at a higher
    /// level. Off: each (key, limbs, digits) is its own object.
    #[serde(default)]
    pub key_subsets: bool,
    /// Warm start: the program's input ciphertexts (each object's first `CtLoad`, when the
    /// trace did not store it before) are already on chip when timing starts, as in a
    /// micro-benchmark run in a loop whose operands stay resident. They take their room in the
    /// on-chip store but move no HBM bytes on that first load. Keys and plaintexts still stream.
    /// Off in every machine file: a what-if (`basalt sim run --set memory.warm=true`).
    #[serde(default)]
    pub warm: bool,
    /// HBM first-word latency, ns: a load's data arrives this long after the channel sends it
    /// ([`crate::bandwidth`]). Absent = 0.
    #[serde(default)]
    pub hbm_latency_ns: Option<f64>,
    /// HBM banks that activate rows in parallel (all channels together), the row size in bytes
    /// and the row cycle tRC in ns: all three, or none (no bank model).
    #[serde(default)]
    pub hbm_banks: Option<u32>,
    #[serde(default)]
    pub hbm_row_bytes: Option<u32>,
    #[serde(default)]
    pub hbm_row_cycle_ns: Option<f64>,
    /// On-chip bytes that may hold data loaded ahead of the window reading it, MiB. Absent =
    /// `onchip_mib`.
    #[serde(default)]
    pub prefetch_mib: Option<f64>,
    /// Banks of the on-chip store and the bytes each moves per cycle: both, or neither (no
    /// SRAM bandwidth limit).
    #[serde(default)]
    pub sram_banks: Option<u32>,
    #[serde(default)]
    pub sram_bank_bytes_per_cycle: Option<f64>,
    pub source: String,
}

/// Replacement policy of the on-chip operand store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eviction {
    /// Belady's MIN: evict the operand reused furthest in the future (CraterLake §6).
    Belady,
    Lru,
}

/// How kernels overlap inside a window (see `schedule.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleCfg {
    pub overlap: Overlap,
    /// How many windows ahead HBM loads may start (decoupled prefetch into double buffers).
    /// 0 = a window's loads start with the window.
    #[serde(default)]
    pub prefetch_windows: u32,
    /// Register-file ports, each moving `rf_port_lanes` elements per cycle; they bound a
    /// window only when FUs are not chained (`switches.crb_chaining = false`: CraterLake §4.1
    /// emulates 12 ports for 24 FU inputs, chaining bridges the gap). Absent = no port model.
    #[serde(default)]
    pub rf_ports: Option<u32>,
    #[serde(default)]
    pub rf_port_lanes: Option<u32>,
    /// How many earlier windows a window's compute may overlap (`chained` machines only): with
    /// `o = 1` window w may start once window w − 2 has ended, each unit still taking its
    /// windows in order (software pipelining of independent steps, e.g. Osiris' GSC order
    /// prepares the next baby-step rotation while the MDCs generate the current diagonals).
    /// 0 = windows run one after another.
    #[serde(default)]
    pub overlap_windows: u32,
    /// Count `prefetch_windows` over the windows that load something only: a load may start
    /// when the p-th previous *loading* window started, however much compute-only work lies
    /// between (one buffered load ahead, e.g. Osiris' next rotation key). Off: all windows.
    #[serde(default)]
    pub prefetch_loading_windows: bool,
    /// Crossbar with residue-polynomial tiling (`switches.network = "crossbar"`, CraterLake
    /// §4.3): the clusters or lane groups that each hold whole residue polynomials, the words
    /// per cycle the crossbar moves in each direction, and, for a two-level on-chip store
    /// (F1's per-cluster register files and shared scratchpad), the capacity of one cluster's
    /// register file. See [`Machine::crossbar`].
    #[serde(default)]
    pub clusters: Option<u32>,
    #[serde(default)]
    pub network_words_per_cycle: Option<u32>,
    #[serde(default)]
    pub cluster_rf_kib: Option<f64>,
}

/// A crossbar network with residue-polynomial tiling ([`Machine::crossbar`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossbar {
    pub clusters: u32,
    pub words_per_cycle: u32,
    /// Bytes of one cluster's register file when operands live in a scratchpad across the
    /// crossbar; `None` when the register file is the on-chip store itself.
    pub cluster_rf_bytes: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overlap {
    /// One kernel at a time (a single shared FU array, e.g. FAB).
    Serial,
    /// Units stream into each other (vector chaining, fully pipelined clusters): a window
    /// takes as long as its busiest unit.
    Chained,
}

/// The papers' optimisation switches. Absent means "not applicable to this machine".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switches {
    /// Osiris §IV-B: interleave limbs through the MDC so INTT→BConv→NTT chains.
    pub limb_interleaving: Option<bool>,
    /// Osiris §IV-E ("Architecting Osiris"): the two MDCs are the INTT and NTT stages of one
    /// ModChange macro-pipeline with the BConv array, so a base conversion holds every NTT
    /// instance for as long as it holds the BConv unit (OF-Limb NTTs cannot use them then).
    pub modchange_lockstep: Option<bool>,
    /// Osiris §IV-E: giant-step-centric BSGS order (consumed by the trace producer).
    pub gsc_order: Option<bool>,
    /// FAB §4.6: reordered KeySwitch datapath (consumed by the trace producer).
    pub reordered_keyswitch: Option<bool>,
    /// FAB §4.9: number of FPGAs (FAB-2 = 8).
    pub fpgas: Option<u32>,
    /// CraterLake §5.2: regenerate the uniform half of key-switch hints on chip.
    pub kshgen: Option<bool>,
    /// CraterLake §5.1/§5.4: CRB unit with vector chaining.
    pub crb_chaining: Option<bool>,
    /// Plaintext operands generated on chip from one stored residue (ARK's and Osiris' OF-Limb,
    /// applied by the simulator): every `PlainLoad` of `l` residues loads one and runs an
    /// `l`-residue NTT. No paper modelled here states it for a machine whose traces store full
    /// plaintexts (CraterLake's are "half the size of a ciphertext", §8), so it is an architect's
    /// what-if and absent from every machine file; traces that already regenerate diagonals
    /// (Osiris' OF-Limb) must not be timed with it.
    pub plaintext_generation: Option<bool>,
    /// CraterLake §4.2: fixed permutation network vs F1+ crossbar.
    pub network: Option<Network>,
    /// Strix §IV-B: fold an N-point negacyclic FFT into an N/2-point complex FFT.
    pub folding: Option<bool>,
    /// Strix §III: two-level (device × core) or device-level only batching.
    pub batching: Option<Batching>,
    /// Strix: core-level batch (LWEs per HSC per epoch). The paper gives no value for Table V;
    /// Fig. 8 shows 3.
    pub core_batch: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    Fixed,
    Crossbar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Batching {
    TwoLevel,
    Device,
}

/// Unit classes: one cost model each, in `units/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitClass {
    Ntt,
    Bconv,
    Automorph,
    Elem,
    Kshgen,
    TfheRotator,
    TfheDecomposer,
    TfheFft,
    TfheVma,
    TfheAccumulator,
    TfheKs,
}

/// Micro-architectural style, for classes that have more than one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// NTT: a pipelined (MDC/SDF) unit that accepts `lanes` coefficients per cycle.
    Pipelined,
    /// NTT: butterflies reused over log2 N stages (`lanes` coefficients per stage-cycle).
    Iterative,
    /// BConv: input-stationary systolic array `rows` tall, `lanes` wide (Osiris §IV-C).
    Systolic,
    /// BConv: L output pipelines fed by broadcast, double-buffered (CraterLake CRB §5.1).
    Streaming,
    /// BConv: generic multiply-accumulate array, `lanes` MACs per cycle.
    Mac,
}

/// A group of identical unit instances.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unit {
    pub name: String,
    pub class: UnitClass,
    /// Kernel selectors this unit executes (`Ntt`, `Elem.Mul`, `Tfhe.Fft`, …); empty = the
    /// class default.
    #[serde(default)]
    pub serves: Vec<String>,
    /// Instances chip-wide; work is spread evenly over them.
    pub count: u32,
    /// Elements per cycle per instance (class-specific meaning, see `units/`).
    pub lanes: u32,
    /// Pipeline fill latency of one instance.
    #[serde(default)]
    pub latency_cycles: u32,
    #[serde(default)]
    pub style: Option<Style>,
    /// Systolic BConv: array height (largest input limb count per pass).
    #[serde(default)]
    pub rows: Option<u32>,
    /// Iterative NTT: extra cycles per stage (pipeline fill of the butterfly core).
    #[serde(default)]
    pub stage_overhead_cycles: Option<u32>,
    /// Area of one instance.
    #[serde(default)]
    pub area_mm2: Option<f64>,
    /// Power of one instance when busy.
    #[serde(default)]
    pub power_w: Option<f64>,
    /// Energy of one action (one lane busy one cycle) at `[physical]`'s reference point, pJ.
    #[serde(default)]
    pub pj_per_action: Option<f64>,
    /// Area of one lane (one action per cycle) at `[physical]`'s reference point, mm².
    #[serde(default)]
    pub mm2_per_lane: Option<f64>,
    /// Hardware this unit shares with others under `overlap = "chained"`: a window takes as
    /// long as its busiest *pool* (the Σ busy of every unit naming it), not its busiest unit.
    /// FAB's 256 FUs each hold one modular multiplier, adder, subtractor and automorph unit
    /// (§4.1): an NTT occupies all but the automorph unit, a MAC the multiplier and adder, so
    /// a subtraction can ride under a multiplication but two multiplications cannot overlap.
    /// Empty: the unit is a pool of its own.
    #[serde(default)]
    pub pools: Vec<String>,
    pub source: String,
}

/// A block that only contributes area and power.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    pub name: String,
    #[serde(default)]
    pub area_mm2: Option<f64>,
    #[serde(default)]
    pub power_w: Option<f64>,
    pub source: String,
}

impl UnitClass {
    /// Kernels a class serves when the machine file gives no `serves` list.
    fn default_serves(self) -> &'static [&'static str] {
        match self {
            UnitClass::Ntt => &["Ntt", "Intt"],
            UnitClass::Bconv => &["BConv"],
            UnitClass::Automorph => &["Automorph"],
            UnitClass::Elem => &["Elem"],
            UnitClass::Kshgen => &["KeyGen"],
            UnitClass::TfheRotator => &["Tfhe.Rotate", "Tfhe.ModSwitch", "Tfhe.SampleExtract"],
            UnitClass::TfheDecomposer => &["Tfhe.Decompose"],
            UnitClass::TfheFft => &["Tfhe.Fft", "Tfhe.Ifft"],
            UnitClass::TfheVma => &["Tfhe.MultAdd"],
            UnitClass::TfheAccumulator => &["Tfhe.Accumulate"],
            UnitClass::TfheKs => &["Tfhe.KeySwitch"],
        }
    }

    fn allowed_styles(self) -> &'static [Style] {
        match self {
            UnitClass::Ntt => &[Style::Pipelined, Style::Iterative],
            UnitClass::Bconv => &[Style::Systolic, Style::Streaming, Style::Mac],
            _ => &[],
        }
    }
}

impl Unit {
    /// The parsed `serves` list (class default when empty). Validated at load.
    pub fn selectors(&self) -> Vec<Selector> {
        let names: Vec<&str> = if self.serves.is_empty() {
            self.class.default_serves().to_vec()
        } else {
            self.serves.iter().map(String::as_str).collect()
        };
        names.into_iter().filter_map(Selector::parse).collect()
    }
}

impl Machine {
    /// Read and validate a machine file (with its `extends` base, if it names one).
    pub fn load(path: impl AsRef<Path>) -> Result<Machine, SimError> {
        Machine::load_with(path, &[])
    }

    /// Parse and validate machine TOML; `path` is only used in error messages.
    pub fn from_toml(text: &str, path: &Path) -> Result<Machine, SimError> {
        let m: Machine = toml::from_str(text)
            .map_err(|e| SimError::Parse { path: path.into(), message: e.to_string() })?;
        if m.schema_version != SCHEMA_VERSION {
            return Err(SimError::SchemaVersion {
                path: path.into(),
                found: m.schema_version,
                supported: SCHEMA_VERSION,
            });
        }
        m.validate()?;
        Ok(m)
    }

    /// Check every invariant a model relies on (positive rates, known selectors, one server
    /// per kernel selector).
    pub fn validate(&self) -> Result<(), SimError> {
        let pos = |field: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SimError::NonPositive {
                    machine: self.name.clone(),
                    field: field.into(),
                    value: v,
                })
            }
        };
        pos("clock_ghz", self.clock_ghz)?;
        pos("memory.hbm_gbps", self.memory.hbm_gbps)?;
        pos("memory.onchip_mib", self.memory.onchip_mib)?;
        pos("word_bits", self.word_bits as f64)?;
        pos("max_ring_degree", self.max_ring_degree as f64)?;
        if let Some(b) = self.dram_bytes_per_word {
            pos("dram_bytes_per_word", b)?;
        }
        if let Some(c) = self.memory.hbm_gib {
            pos("memory.hbm_gib", c)?;
        }
        if let Some(e) = self.memory.hbm_pj_per_byte {
            pos("memory.hbm_pj_per_byte", e)?;
        }
        if let Some(a) = self.memory.output_overhead_ns_per_word {
            pos("memory.output_overhead_ns_per_word", a)?;
        }
        let mem = &self.memory;
        for (f, v) in [
            ("memory.hbm_latency_ns", mem.hbm_latency_ns),
            ("memory.hbm_banks", mem.hbm_banks.map(f64::from)),
            ("memory.hbm_row_bytes", mem.hbm_row_bytes.map(f64::from)),
            ("memory.hbm_row_cycle_ns", mem.hbm_row_cycle_ns),
            ("memory.prefetch_mib", mem.prefetch_mib),
            ("memory.sram_banks", mem.sram_banks.map(f64::from)),
            ("memory.sram_bank_bytes_per_cycle", mem.sram_bank_bytes_per_cycle),
        ] {
            if let Some(v) = v {
                pos(f, v)?;
            }
        }
        let incomplete = |group: &[bool]| group.iter().any(|b| *b) && !group.iter().all(|b| *b);
        let banks =
            [mem.hbm_banks.is_some(), mem.hbm_row_bytes.is_some(), mem.hbm_row_cycle_ns.is_some()];
        let sram = [mem.sram_banks.is_some(), mem.sram_bank_bytes_per_cycle.is_some()];
        if incomplete(&banks) || incomplete(&sram) {
            return Err(SimError::BadUnit {
                machine: self.name.clone(),
                unit: "memory".into(),
                message: "give hbm_banks, hbm_row_bytes and hbm_row_cycle_ns together, \
                          and sram_banks with sram_bank_bytes_per_cycle"
                    .into(),
            });
        }
        for (f, v) in [
            ("schedule.rf_ports", self.schedule.rf_ports),
            ("schedule.rf_port_lanes", self.schedule.rf_port_lanes),
            ("schedule.clusters", self.schedule.clusters),
            ("schedule.network_words_per_cycle", self.schedule.network_words_per_cycle),
        ] {
            if let Some(v) = v {
                pos(f, v as f64)?;
            }
        }
        if let Some(k) = self.schedule.cluster_rf_kib {
            pos("schedule.cluster_rf_kib", k)?;
        }
        if self.switches.network == Some(Network::Crossbar) && self.crossbar().is_none() {
            return Err(SimError::BadUnit {
                machine: self.name.clone(),
                unit: "-".into(),
                message: "a crossbar network needs schedule.clusters and \
                          schedule.network_words_per_cycle"
                    .into(),
            });
        }
        if let Some(k) = self.memory.ksk_share {
            pos("memory.ksk_share", k)?;
        }
        let shared = self.memory.key_share.unwrap_or(0.0) + self.memory.ksk_share.unwrap_or(0.0);
        if let Some(k) = self.memory.key_share {
            pos("memory.key_share", k)?;
        }
        if shared > 0.0 {
            pos("1 - memory.key_share - memory.ksk_share", 1.0 - shared)?;
        }
        if let Some(p) = &self.physical {
            pos("physical.node_nm", p.node_nm)?;
            pos("physical.reference_node_nm", p.reference_node_nm)?;
            pos("physical.reference_word_bits", f64::from(p.reference_word_bits))?;
            pos("physical.energy_factor", p.energy_factor)?;
        }
        if self.units.is_empty() {
            return Err(SimError::BadUnit {
                machine: self.name.clone(),
                unit: "-".into(),
                message: "a machine needs at least one unit".into(),
            });
        }
        let mut seen: Vec<(String, String)> = Vec::new();
        for u in &self.units {
            let bad = |message: String| SimError::BadUnit {
                machine: self.name.clone(),
                unit: u.name.clone(),
                message,
            };
            if u.count == 0 || u.lanes == 0 {
                return Err(bad("`count` and `lanes` must be at least 1".into()));
            }
            if let Some(p) = &self.physical {
                if u.area_mm2.is_some() || u.power_w.is_some() {
                    return Err(bad("with `[physical]`, give `pj_per_action` and `mm2_per_lane` \
                         instead of per-instance `area_mm2` and `power_w`"
                        .into()));
                }
                if u.pj_per_action.is_none() {
                    return Err(bad("the energy table (`[physical]`) gives no energy for this \
                         unit: add `pj_per_action`"
                        .into()));
                }
                if !p.fpga && u.mm2_per_lane.is_none() {
                    return Err(bad("the energy table (`[physical]`) gives no area for this \
                         unit: add `mm2_per_lane`"
                        .into()));
                }
            } else if u.pj_per_action.is_some() || u.mm2_per_lane.is_some() {
                return Err(bad("`pj_per_action` and `mm2_per_lane` need a `[physical]` table \
                     (node and word size they hold at)"
                    .into()));
            }
            for (f, v) in [
                ("area_mm2", u.area_mm2),
                ("power_w", u.power_w),
                ("pj_per_action", u.pj_per_action),
                ("mm2_per_lane", u.mm2_per_lane),
            ] {
                if let Some(v) = v
                    && !(v.is_finite() && v >= 0.0)
                {
                    return Err(bad(format!("`{f}` must be non-negative, got {v}")));
                }
            }
            let allowed = u.class.allowed_styles();
            match (u.style, allowed.is_empty()) {
                (Some(s), true) => return Err(bad(format!("class takes no style, got {s:?}"))),
                (None, false) => return Err(bad(format!("needs a `style`, one of {allowed:?}"))),
                (Some(s), false) if !allowed.contains(&s) => {
                    return Err(bad(format!("style {s:?} not one of {allowed:?}")));
                }
                _ => {}
            }
            if u.style == Some(Style::Systolic) && u.rows.unwrap_or(0) == 0 {
                return Err(bad("systolic BConv needs `rows` >= 1".into()));
            }
            for s in &u.serves {
                if Selector::parse(s).is_none() {
                    return Err(bad(format!("unknown kernel selector `{s}` in `serves`")));
                }
            }
            let names: Vec<String> = if u.serves.is_empty() {
                u.class.default_serves().iter().map(|s| s.to_string()).collect()
            } else {
                u.serves.clone()
            };
            for s in names {
                if let Some((_, first)) = seen.iter().find(|(k, _)| *k == s) {
                    return Err(SimError::DuplicateServer {
                        machine: self.name.clone(),
                        kernel: s,
                        first: first.clone(),
                        second: u.name.clone(),
                    });
                }
                seen.push((s, u.name.clone()));
            }
        }
        for c in &self.components {
            for (f, v) in [("area_mm2", c.area_mm2), ("power_w", c.power_w)] {
                if let Some(v) = v
                    && !(v.is_finite() && v >= 0.0)
                {
                    return Err(SimError::NonPositive {
                        machine: self.name.clone(),
                        field: format!("components.{}.{f}", c.name),
                        value: v,
                    });
                }
            }
        }
        Ok(())
    }

    /// Bytes of one word in DRAM.
    pub fn bytes_per_word(&self) -> f64 {
        self.dram_bytes_per_word.unwrap_or(self.word_bits as f64 / 8.0)
    }

    /// Cycles per second.
    pub fn hz(&self) -> f64 {
        self.clock_ghz * 1e9
    }

    /// The unit that executes `k` (most specific `serves` match), or a named error.
    pub fn unit_for(&self, k: &Kernel) -> Result<&Unit, SimError> {
        self.unit_index_for(k).map(|i| &self.units[i])
    }

    /// Index into `units` of the unit that executes `k`. The choice depends only on the
    /// kernel's kind, so callers may cache it per [`basalt_trace::KernelKind`].
    pub fn unit_index_for(&self, k: &Kernel) -> Result<usize, SimError> {
        let mut best: Option<(u8, usize)> = None;
        for (i, u) in self.units.iter().enumerate() {
            for s in u.selectors() {
                let sc = s.score(k);
                if sc > 0 && best.is_none_or(|(b, _)| sc > b) {
                    best = Some((sc, i));
                }
            }
        }
        best.map(|(_, i)| i).ok_or_else(|| SimError::NoUnitFor {
            machine: self.name.clone(),
            kernel: format!("{:?}", k.kind()),
        })
    }

    /// Find a unit by name (for overrides in reproductions and tests).
    pub fn unit_mut(&mut self, name: &str) -> Option<&mut Unit> {
        self.units.iter_mut().find(|u| u.name == name)
    }

    /// Whether seeded keys are regenerated on chip: the machine has a `kshgen`-class unit
    /// (CraterLake's KSHGen, Osiris' PRNG) and `switches.kshgen` does not turn it off. Otherwise
    /// seeded keys are loaded in full.
    pub fn kshgen_enabled(&self) -> bool {
        self.switches.kshgen != Some(false)
            && self.units.iter().any(|u| u.class == UnitClass::Kshgen)
    }

    /// Effective overlap mode. CraterLake without CRB/chaining: with a register-file port
    /// model (`schedule.rf_ports`) the FUs still run concurrently but every operand goes
    /// through the ports ([`Machine::rf_ports`]); without one, kernels run one at a time.
    pub fn overlap(&self) -> Overlap {
        if self.switches.crb_chaining == Some(false) && self.rf_ports().is_none() {
            Overlap::Serial
        } else {
            self.schedule.overlap
        }
    }

    /// `(ports, elements per port per cycle)` when unchained operands are port-bound: only
    /// with `switches.crb_chaining = false` and both `schedule.rf_ports*` given.
    pub fn rf_ports(&self) -> Option<(u32, u32)> {
        match (self.switches.crb_chaining, self.schedule.rf_ports, self.schedule.rf_port_lanes) {
            (Some(false), Some(p), Some(l)) => Some((p, l)),
            _ => None,
        }
    }

    /// The crossbar of residue-polynomial tiling, when `switches.network = "crossbar"`: each
    /// cluster holds whole residue polynomials, so NTTs and automorphisms stay local but every
    /// base conversion sends each input residue to every cluster computing outputs (§4.3: "each
    /// homomorphic operation transfers 3GNL words among clusters"). The fixed network of
    /// polynomial tiling is sized to the NTT and automorphism FUs' peak (§4.2) and adds no
    /// time of its own.
    pub fn crossbar(&self) -> Option<Crossbar> {
        if self.switches.network != Some(Network::Crossbar) {
            return None;
        }
        Some(Crossbar {
            clusters: self.schedule.clusters?,
            words_per_cycle: self.schedule.network_words_per_cycle?,
            cluster_rf_bytes: self.schedule.cluster_rf_kib.map(|k| k * 1024.0),
        })
    }

    /// Whether base conversions run on a BConv unit. Without one (F1+, or CraterLake with
    /// `crb_chaining = false`) a BConv is `N · from · to` multiplies on the unit serving
    /// `Elem.Mul` and as many additions on the one serving `Elem.Add`, through the register
    /// file (CraterLake §3: prior designs "execute all multiplies and adds separately").
    pub fn has_bconv_unit(&self) -> bool {
        self.switches.crb_chaining != Some(false)
            && self.units.iter().any(|u| u.class == UnitClass::Bconv)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use basalt_trace::ElemOp;

    const MINIMAL: &str = r#"
schema_version = 1
name = "toy"
paper = "none"
clock_ghz = 1.0
clock_source = "test"
word_bits = 32
max_ring_degree = 65536

[memory]
hbm_gbps = 1000.0
onchip_mib = 256.0
eviction = "lru"
source = "test"

[schedule]
overlap = "chained"

[[units]]
name = "ntt"
class = "ntt"
style = "pipelined"
count = 1
lanes = 2048
source = "test"
"#;

    /// A valid one-unit machine for tests.
    pub fn minimal() -> Machine {
        Machine::from_toml(MINIMAL, Path::new("toy.toml")).unwrap()
    }

    fn load(text: &str) -> Result<Machine, SimError> {
        Machine::from_toml(text, Path::new("toy.toml"))
    }

    #[test]
    fn unknown_field_is_rejected() {
        let e = load(&MINIMAL.replace("word_bits = 32", "word_bits = 32\nwordbits = 3"));
        assert!(matches!(e, Err(SimError::Parse { .. })), "{e:?}");
        assert!(e.unwrap_err().to_string().contains("wordbits"));
        let e = load(&MINIMAL.replace("lanes = 2048", "lanes = 2048\nlane = 1"));
        assert!(e.unwrap_err().to_string().contains("lane"));
    }

    #[test]
    fn non_positive_bandwidth_and_clock_are_rejected() {
        for (from, to, field) in [
            ("hbm_gbps = 1000.0", "hbm_gbps = -1.0", "memory.hbm_gbps"),
            ("hbm_gbps = 1000.0", "hbm_gbps = 0.0", "memory.hbm_gbps"),
            ("eviction = \"lru\"", "eviction = \"lru\"\nhbm_gib = -8.0", "memory.hbm_gib"),
            ("clock_ghz = 1.0", "clock_ghz = 0.0", "clock_ghz"),
            (
                "eviction = \"lru\"",
                "eviction = \"lru\"\nkey_share = 0.5\nksk_share = 0.5",
                "1 - memory.key_share - memory.ksk_share",
            ),
            (
                "eviction = \"lru\"",
                "eviction = \"lru\"\noutput_overhead_ns_per_word = -0.5",
                "memory.output_overhead_ns_per_word",
            ),
            (
                "eviction = \"lru\"",
                "eviction = \"lru\"\nhbm_latency_ns = -1.0",
                "memory.hbm_latency_ns",
            ),
            ("eviction = \"lru\"", "eviction = \"lru\"\nprefetch_mib = 0.0", "memory.prefetch_mib"),
            (
                "eviction = \"lru\"",
                "eviction = \"lru\"\nsram_banks = 0\nsram_bank_bytes_per_cycle = 8.0",
                "memory.sram_banks",
            ),
        ] {
            match load(&MINIMAL.replace(from, to)) {
                Err(SimError::NonPositive { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{to}: {other:?}"),
            }
        }
    }

    #[test]
    fn memory_models_need_all_their_parameters() {
        let e = load(&MINIMAL.replace("eviction = \"lru\"", "eviction = \"lru\"\nhbm_banks = 64"));
        let e = e.unwrap_err().to_string();
        assert!(e.contains("hbm_row_bytes") && e.contains("together"), "{e}");
        let e = load(&MINIMAL.replace("eviction = \"lru\"", "eviction = \"lru\"\nsram_banks = 8"));
        assert!(e.unwrap_err().to_string().contains("sram_bank_bytes_per_cycle"));
        let full = "eviction = \"lru\"\nhbm_banks = 64\nhbm_row_bytes = 1024\nhbm_row_cycle_ns = 45.0\n\
                    hbm_latency_ns = 100.0\nsram_banks = 32\nsram_bank_bytes_per_cycle = 64.0";
        let m = load(&MINIMAL.replace("eviction = \"lru\"", full)).unwrap();
        assert_eq!((m.memory.hbm_banks, m.memory.sram_banks), (Some(64), Some(32)));
    }

    #[test]
    fn unit_errors_are_named() {
        let e = load(&MINIMAL.replace("count = 1", "count = 0")).unwrap_err();
        assert!(matches!(e, SimError::BadUnit { .. }), "{e}");
        let e = load(&MINIMAL.replace("style = \"pipelined\"\n", "")).unwrap_err();
        assert!(e.to_string().contains("needs a `style`"), "{e}");
        let e = load(&MINIMAL.replace("style = \"pipelined\"", "style = \"mac\"")).unwrap_err();
        assert!(e.to_string().contains("not one of"), "{e}");
        let dup = format!(
            "{MINIMAL}\n[[units]]\nname = \"ntt2\"\nclass = \"ntt\"\nstyle = \"iterative\"\ncount = 1\nlanes = 1\nsource = \"t\"\n"
        );
        assert!(matches!(load(&dup), Err(SimError::DuplicateServer { .. })));
        let e = load(&MINIMAL.replace("schema_version = 1", "schema_version = 2")).unwrap_err();
        assert!(matches!(e, SimError::SchemaVersion { found: 2, .. }));
    }

    #[test]
    fn selectors_prefer_the_exact_op() {
        let mut m = minimal();
        for (name, serves) in [("mul", vec!["Elem.Mul"]), ("any", vec!["Elem"])] {
            let mut u = crate::units::tests::unit(UnitClass::Elem, 1, 1);
            u.name = name.into();
            u.serves = serves.into_iter().map(String::from).collect();
            m.units.push(u);
        }
        m.validate().unwrap();
        let k = |op| Kernel::Elem { n: 8, limbs: 1, op };
        assert_eq!(m.unit_for(&k(ElemOp::Mul)).unwrap().name, "mul");
        assert_eq!(m.unit_for(&k(ElemOp::Add)).unwrap().name, "any");
        let e = m.unit_for(&Kernel::BConv { n: 8, from: 1, to: 1 }).unwrap_err();
        assert!(matches!(e, SimError::NoUnitFor { .. }));
    }
}
