//! The kernel vocabulary. Sizes are in the units a hardware model needs: ring degree `n`, number
//! of RNS limbs, and (for memory kernels) bytes.

use serde::{Deserialize, Serialize};

/// Element-wise operation over RNS limbs (a "Hadamard" kernel in accelerator papers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ElemOp {
    Add,
    Sub,
    Neg,
    /// Pointwise product of two polynomials.
    Mul,
    /// Pointwise multiply-accumulate `acc += a * b`.
    MulAcc,
    /// Multiply by a per-limb scalar (constant multiplication, rescale correction).
    MulScalar,
}

/// One step of TFHE programmable bootstrapping or key switching (Strix, Alg. 1 and 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TfheStep {
    ModSwitch,
    Rotate,
    Decompose,
    Fft,
    MultAdd,
    Ifft,
    Accumulate,
    SampleExtract,
    KeySwitch,
}

/// Which key-switching key a CKKS `KeyLoad` reads. Recorded as [`crate::Event::Key`] just before
/// the load (see [`crate::key_scope`]), so that a simulator's on-chip store can recognise that
/// two rotations by the same step read the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeyId {
    /// The relinearisation key (s² → s).
    Relin,
    /// The rotation/conjugation key of Galois element `element` (X → X^element).
    Galois { element: u64 },
}

impl KeyId {
    /// A 64-bit identity, distinct for distinct keys (Galois elements are odd, relin is 0).
    pub fn as_u64(self) -> u64 {
        match self {
            KeyId::Relin => 0,
            KeyId::Galois { element } => element,
        }
    }
}

/// Which TFHE evaluation key a [`Kernel::TfheKeyLoad`] streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TfheKey {
    /// Bootstrapping key: `lwe_dim` GGSWs of `(k+1)·l` rows × `(k+1)` polynomials.
    Bsk,
    /// Key-switching key: `in_dim · level` LWE rows of `out_dim + 1` words.
    Ksk,
    /// One GGSW of the bootstrapping key (`(k+1)·l` rows × `(k+1)` polynomials of N), streamed
    /// for one blind-rotation iteration of a batch. Every iteration reads a different GGSW, so
    /// such a load carries no identity: a memory model must not match it with an earlier one.
    Ggsw,
}

/// A kernel with its shape. `n` is the ring degree; `limbs` the number of RNS residues it touches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kernel")]
pub enum Kernel {
    /// Forward negacyclic NTT of `limbs` residue polynomials of degree `n`.
    Ntt { n: u32, limbs: u32 },
    /// Inverse NTT.
    Intt { n: u32, limbs: u32 },
    /// Fast base conversion: `from` limbs in, `to` limbs out, `n * from * to` multiply-adds.
    BConv { n: u32, from: u32, to: u32 },
    /// Element-wise arithmetic over `limbs` residue polynomials.
    Elem { n: u32, limbs: u32, op: ElemOp },
    /// Automorphism `X -> X^galois` applied to `limbs` residue polynomials.
    Automorph { n: u32, limbs: u32, galois: u64 },
    /// Load of key-switching key material: `digits` digits × 2 polynomials × `limbs` limbs.
    /// `seeded` means the uniform half is regenerated on chip instead (see [`Kernel::KeyGen`]).
    KeyLoad { n: u32, limbs: u32, digits: u32, seeded: bool },
    /// On-the-fly regeneration of the uniform half of a seeded key from its seed (CraterLake's
    /// KSHGen): `limbs` residue polynomials of degree `n` sampled from the XOF.
    KeyGen { n: u32, limbs: u32 },
    /// Load of a plaintext operand (e.g. a linear-transform diagonal) of `limbs` limbs.
    PlainLoad { n: u32, limbs: u32 },
    /// Load of a ciphertext or intermediate from off-chip memory: `polys` polynomials of `limbs`
    /// residues each (2 for a fresh ciphertext). `id` names the object for the whole trace, so an
    /// on-chip store can tell a reuse (hit) from a first touch.
    CtLoad { n: u32, limbs: u32, polys: u32, id: u64 },
    /// Write of a result to off-chip memory (or to the on-chip store, if it fits there).
    CtStore { n: u32, limbs: u32, polys: u32, id: u64 },
    /// Streaming of TFHE key material: `count` vectors of `size` words (bsk: one polynomial of
    /// size N per GGSW entry; ksk: one LWE row of `out_dim + 1` words per `in_dim · level`).
    /// Emitted once per blind rotation / key switch *call*, so a batch of b LWEs loads the key
    /// once and batching's key reuse shows in the traffic.
    TfheKeyLoad { key: TfheKey, size: u32, count: u64 },
    /// A TFHE kernel; `size` is the polynomial size (or LWE dimension for key switching) and
    /// `count` how many polynomials/coefficients it covers.
    Tfhe { step: TfheStep, size: u32, count: u32 },
}

/// Kind of a kernel without its shape, for counting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum KernelKind {
    Ntt,
    Intt,
    BConv,
    Elem(ElemOp),
    Automorph,
    KeyLoad,
    KeyGen,
    PlainLoad,
    CtLoad,
    CtStore,
    TfheKeyLoad,
    Tfhe(TfheStep),
}

impl Kernel {
    pub fn kind(&self) -> KernelKind {
        match self {
            Kernel::Ntt { .. } => KernelKind::Ntt,
            Kernel::Intt { .. } => KernelKind::Intt,
            Kernel::BConv { .. } => KernelKind::BConv,
            Kernel::Elem { op, .. } => KernelKind::Elem(*op),
            Kernel::Automorph { .. } => KernelKind::Automorph,
            Kernel::KeyLoad { .. } => KernelKind::KeyLoad,
            Kernel::KeyGen { .. } => KernelKind::KeyGen,
            Kernel::PlainLoad { .. } => KernelKind::PlainLoad,
            Kernel::CtLoad { .. } => KernelKind::CtLoad,
            Kernel::CtStore { .. } => KernelKind::CtStore,
            Kernel::TfheKeyLoad { .. } => KernelKind::TfheKeyLoad,
            Kernel::Tfhe { step, .. } => KernelKind::Tfhe(*step),
        }
    }

    /// Work in "limb-polynomials" (NTT, element-wise, automorphism), multiply-adds (BConv) or
    /// polynomials (TFHE; words for a TFHE key load): the unit a counter adds up.
    pub fn units(&self) -> u64 {
        match *self {
            Kernel::Ntt { limbs, .. }
            | Kernel::Intt { limbs, .. }
            | Kernel::Elem { limbs, .. }
            | Kernel::Automorph { limbs, .. }
            | Kernel::KeyGen { limbs, .. }
            | Kernel::PlainLoad { limbs, .. } => limbs as u64,
            Kernel::BConv { n, from, to } => n as u64 * from as u64 * to as u64,
            Kernel::KeyLoad { limbs, digits, .. } => 2 * limbs as u64 * digits as u64,
            Kernel::CtLoad { limbs, polys, .. } | Kernel::CtStore { limbs, polys, .. } => {
                limbs as u64 * polys as u64
            }
            Kernel::TfheKeyLoad { size, count, .. } => size as u64 * count,
            Kernel::Tfhe { count, .. } => count as u64,
        }
    }
}
