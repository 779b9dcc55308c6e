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
            Kernel::Tfhe { step, .. } => KernelKind::Tfhe(*step),
        }
    }

    /// Work in "limb-polynomials" (NTT, element-wise, automorphism), multiply-adds (BConv) or
    /// polynomials (TFHE): the unit a counter adds up.
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
            Kernel::Tfhe { count, .. } => count as u64,
        }
    }
}
