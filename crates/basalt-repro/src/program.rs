//! What a reproduction asks its [`TraceSource`] for: closed-form [`Workload`]s (a paper's
//! listing written down as a kernel stream, `basalt_sim::synth`) and whole library
//! [`Program`]s, which only the libraries record.

use basalt_sim::synth::ckks::{self, KsShape};
use basalt_trace::Trace;

/// Hoisting of BSGS baby steps (bootstrapping DFTs, network layers): Osiris Table III's NH / SH /
/// DH columns. The library's own enum: a program names the hoisting the circuit runs.
pub use basalt_circuits::lintrans::Hoisting;

/// A workload a paper reproduction needs, named by its parameters. A [`TraceSource`] may supply
/// the library's recorded trace for it; otherwise the closed-form generator below is used.
///
/// One row group still times these: CraterLake Table 1, which counts the operations of the
/// paper's own Listing 1 and of F1's per-limb key switch (the library has no per-limb key
/// switch, and its hybrid one counts its scaling and subtractions apart, so its "other"
/// products and sums are not Table 1's). Strix's PBS epochs are basalt-tfhe's shape-only
/// recordings ([`crate::pbs_epoch`]); every other row is a library [`Program`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Hybrid key switching of one polynomial ([`ckks::hybrid_keyswitch`]).
    HybridKeySwitch(KsShape),
    /// F1-style per-limb key switching ([`ckks::standard_keyswitch`]).
    StandardKeySwitch { n: u32, limbs: u32 },
}

impl Workload {
    /// The closed-form kernel stream of this workload.
    pub fn closed_form(&self) -> Trace {
        match *self {
            Workload::HybridKeySwitch(s) => ckks::hybrid_keyswitch(s),
            Workload::StandardKeySwitch { n, limbs } => ckks::standard_keyswitch(n, limbs),
        }
    }
}

/// A fixed BSGS plan for every DFT matrix of a bootstrap, in Osiris' giant-step-centric order
/// with at most `max_partials` giant-step partial sums on chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DftPlan {
    pub n1: u32,
    pub hoisting: Hoisting,
    pub max_partials: u32,
    /// Diagonals regenerated from one stored limb (OF-Limb, as Osiris) or stored at every limb.
    pub of_limb: bool,
}

/// A whole program the *library* must record: there is deliberately no closed form for these
/// (a bootstrap written down by hand would be exactly a hard-coded model), so a
/// row that needs one is "not yet modelled" unless the [`TraceSource`] records it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// A full bootstrap of a level-0 ciphertext with `preset`'s circuit
    /// (`basalt_circuits::bootstrap::config::for_preset`), `log_slots` slots (default: the
    /// preset's), the DFTs' plan (`None`: the circuit's automatic plan), seeded keys or not.
    Bootstrap { preset: String, log_slots: Option<u32>, dft: Option<DftPlan>, seeded: bool },
    /// One basic CKKS operation on fresh ciphertexts of `params` (FAB Tables 5 and 6), as the
    /// evaluator runs it (`basalt_ckks::Evaluator`): its operands are read (`CtLoad`) and its
    /// result written, so a machine times the operand traffic unless it starts warm
    /// (`memory.warm`).
    BasicOp { params: OpParams, op: BasicOp, seeded: bool },
    /// HMult (tensor, relinearise, rescale) at `level` of `preset`, as `basalt trace --program
    /// hmult --level`; with `merged`, the rescale is folded into the relinearisation's ModDown
    /// (`basalt_ckks::Evaluator::mul_relin_rescale`, the ModDown merge of FAB's reference \[15\]).
    HMult { preset: String, level: u32, seeded: bool, merged: bool },
    /// One step of a HELR training iteration (`basalt_circuits::helr`, FAB's packing) whose
    /// inputs start at `level` of `preset`, with seeded keys or not.
    Helr { preset: String, level: u32, step: HelrStep, seeded: bool },
    /// One inference of an MNIST network (`basalt_workloads::mnist`) on one encrypted image at
    /// `preset`'s top level; its dense layers are BSGS products with `hoisting`, in Osiris'
    /// giant-step-centric order (`gsc`, at most `max_partials` giant-step partial sums at once;
    /// `of_limb`: diagonals regenerated from one stored limb, as Osiris, or stored at every
    /// limb) or Lattigo's, with seeded keys or not.
    Mnist {
        net: MnistNet,
        preset: String,
        hoisting: Hoisting,
        gsc: bool,
        max_partials: u32,
        of_limb: bool,
        seeded: bool,
    },
    /// One ResNet-20 inference (`basalt_workloads::resnet`) on one encrypted CIFAR-10 image
    /// at `preset`'s top level, bootstrapping where the levels run out: with `sparse` absent,
    /// with `preset`'s circuit at its slot count and the layers single-hoisted in Lattigo's
    /// order (CraterLake's rows); else as [`ResnetSparse`] says. Each bootstrap is a
    /// [`basalt_trace::Marker::Bootstrap`] (a reproduction times it from the
    /// [`Program::Bootstrap`] trace of the bootstrapping preset, once per marker); seeded keys
    /// or not.
    Resnet20 { preset: String, sparse: Option<ResnetSparse>, seeded: bool },
    /// One BSGS matrix–vector product (`basalt_circuits::lintrans`) of a ciphertext at `level`
    /// of `preset` holding all its slots: `diagonals` consecutive non-zero diagonals, the least
    /// power-of-two `n1` leaving at most `max_partials` giant steps, `hoisting`, in Osiris'
    /// giant-step-centric order (`gsc`) or Lattigo's, seeded keys or not. With `rescale` off
    /// the rescale is left to the caller (Lattigo's linear transforms), so the product may sit
    /// at the base level, as Osiris' Eq. (1) needs.
    MatVec {
        preset: String,
        level: u32,
        diagonals: u32,
        hoisting: Hoisting,
        max_partials: u32,
        gsc: bool,
        rescale: bool,
        seeded: bool,
    },
    /// Bitonic sort of `2^log_len` values in one ciphertext at `preset`'s top level, each
    /// comparison twelve degree-7 polynomials (`basalt_workloads::sort`, Osiris' Sorting),
    /// seeded keys or not. Each bootstrap is a [`basalt_trace::Marker::Bootstrap`], timed from a
    /// separately recorded bootstrap.
    Sort { preset: String, log_len: u32, seeded: bool },
    /// One inference of CraterLake's LSTM benchmark (`basalt_workloads::lstm`): `steps`
    /// 128-wide recurrence steps from the bootstrap's output level of `preset`, bootstrapped
    /// (the preset's circuit at 128 slots) whenever the levels run out; seeded keys or not.
    Lstm { preset: String, steps: u32, seeded: bool },
    /// CraterLake's logistic-regression training (`basalt_workloads::logreg`, HELR):
    /// `iterations` mini-batch NAG iterations on fully packed ciphertexts of `preset` from
    /// weights at `start_limbs` residues, the weights bootstrapped (the preset's circuit) when
    /// their levels run out; each bootstrap a [`basalt_trace::Marker::Bootstrap`], timed from
    /// the preset's [`Program::Bootstrap`] trace; seeded keys or not. Each ciphertext
    /// carries `side_by_side` (≥ 1) independent trainings, each on `1/side_by_side` of the
    /// slots (CraterLake's per-element normalisation at N = 128K: two trainings in the slots
    /// of one).
    Logreg { preset: String, start_limbs: u32, iterations: u32, side_by_side: u32, seeded: bool },
    /// One inference of one of CraterLake's other shallow LoLa rows (`basalt_workloads::
    /// encrypted_weights`, `basalt_workloads::cifar`) on one encrypted image at `preset`'s top
    /// level, the dense layers single-hoisted BSGS in Lattigo's order, seeded keys or not.
    Lola { net: LolaNet, preset: String, seeded: bool },
    /// `inner` with the ModDown and Rescale of each HMult fused (Osiris §V, from MAD): a
    /// bootstrap runs its circuit with `BootstrapConfig::merge_rescale`, every polynomial is
    /// evaluated inside `basalt_circuits::polynomial::with_merged_rescales` (its Chebyshev
    /// power steps fused too), and every recorded `rescale(mul_relin(a, b))` becomes the
    /// library's `mul_relin_rescale(a, b)` ([`crate::fusion::fuse_hmult_rescale`]). `inner` names a preset (not a
    /// [`Program::BasicOp`]) and is not itself fused.
    Fused(Box<Program>),
}

impl Program {
    /// The preset `self` runs on and whether its keys are seeded (`None` for
    /// [`Program::BasicOp`] and [`Program::Fused`]).
    pub fn preset_and_seeding(&self) -> Option<(&str, bool)> {
        match self {
            Program::Bootstrap { preset, seeded, .. }
            | Program::HMult { preset, seeded, .. }
            | Program::Helr { preset, seeded, .. }
            | Program::Mnist { preset, seeded, .. }
            | Program::Resnet20 { preset, seeded, .. }
            | Program::MatVec { preset, seeded, .. }
            | Program::Sort { preset, seeded, .. }
            | Program::Lstm { preset, seeded, .. }
            | Program::Logreg { preset, seeded, .. }
            | Program::Lola { preset, seeded, .. } => Some((preset, *seeded)),
            Program::BasicOp { .. } | Program::Fused(_) => None,
        }
    }
}

/// The parameter set of a [`Program::BasicOp`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpParams {
    /// `level` of a library preset.
    Preset { name: String, level: u32 },
    /// The top level of a chain the paper gives only by its shape: ring degree 2^`log_n`,
    /// `q_limbs` Q and `p_limbs` P primes of `word_bits` bits, `dnum` digits (FAB Table 6 at
    /// HEAX's N = 2^14, log Q = 438). Built whatever its estimated security: it reproduces a
    /// paper's measurement, it protects nothing.
    Uniform { log_n: u32, q_limbs: u32, p_limbs: u32, dnum: u32, word_bits: u32 },
}

/// The basic operations of FAB Table 5 (and Table 6's Mult).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BasicOp {
    /// Ciphertext + ciphertext.
    Add,
    /// Tensor and relinearise, no rescale (`Evaluator::mul_relin`).
    MulRelin,
    /// Rescale by the top prime.
    Rescale,
    /// Rotate by one slot (automorphism and key switch).
    Rotate,
    /// The hybrid key switch of one polynomial alone (`Evaluator::keyswitch` with the
    /// relinearisation key: Decompose, ModUp, key inner product, ModDown), as HE-MxV Table V
    /// counts a key switch.
    KeySwitch,
}

/// The LoLa networks of [`Program::Lola`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LolaNet {
    /// LoLa-MNIST with every weight a ciphertext (Table 3 "MNIST Encryp. Wghts.").
    MnistEncryptedWeights,
    /// LoLa-CIFAR with unencrypted weights (Table 3 "CIFAR Unencryp. Wghts.").
    Cifar,
}

/// Osiris' ResNet-20 (§VI): sparse-packed bootstrapping "consistent with prior work" and every
/// layer a hoisted BSGS product (Orion's Hybrid++) with its Table III column's hoisting.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResnetSparse {
    /// Preset whose circuit bootstraps; its bootstrap must end at a level of the network's
    /// preset (`OSIRIS_SET_IV_BOOT` ends at `OSIRIS_SET_IV`'s 11-limb top).
    pub boot_preset: String,
    /// log2 of the bootstrap's (and the network's) slots.
    pub log_slots: u32,
    /// The layers' hoisting, in the giant-step-centric order with at most 4 partial sums.
    pub hoisting: Hoisting,
}

/// The MNIST networks of Osiris Table III(a) and CraterLake Table 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MnistNet {
    /// SecureML's three fully connected layers.
    Mlp,
    /// LoLa-CryptoNets (convolution, two dense layers).
    Lola,
    /// Orion's LeNet (two strided convolutions, two dense layers; Osiris Set II).
    Lenet,
}

/// The two halves of a HELR iteration: what FAB-2 spreads over its FPGAs and what it does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HelrStep {
    /// The gradient of one data ciphertext (one per FPGA on FAB-2).
    Gradient,
    /// Sum `cts` gradients, rotate-and-sum over the samples, NAG step (the master FPGA).
    Update { cts: u32 },
}

/// Where reproductions get their traces: [`crate::library::LibrarySource`] records each
/// program with the CKKS libraries in shape-only mode; tests substitute their own.
pub trait TraceSource {
    /// The recorded trace for `w`, or `None` to fall back to [`Workload::closed_form`].
    fn trace(&self, w: &Workload) -> Option<Trace>;

    /// The recorded trace of a library-only program, or `None` (the rows that need it stay
    /// unmodelled). An `Err` is a program the library refused (e.g. a preset without a
    /// bootstrapping circuit): reproduction fails loudly rather than dropping the row.
    fn program(&self, _p: &Program) -> Result<Option<Trace>, String> {
        Ok(None)
    }
}

/// Always falls back to the closed-form generators.
pub struct ClosedForm;

impl TraceSource for ClosedForm {
    fn trace(&self, _: &Workload) -> Option<Trace> {
        None
    }
}
