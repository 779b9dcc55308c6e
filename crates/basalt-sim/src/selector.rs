//! Kernel selectors: which kernels a machine unit serves (`serves = ["Elem.Mul"]`). A selector
//! names a kernel kind, optionally narrowed to one element-wise op or TFHE step; the most
//! specific match wins, so a machine can route `Elem.Mul` to multipliers and the other
//! element-wise ops to adders (CraterLake's 5 multiply + 5 add FUs).

use basalt_trace::{ElemOp, Kernel, TfheStep};

/// Which kernels a unit serves: a kind, optionally narrowed to one element-wise op or TFHE step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    Ntt,
    Intt,
    BConv,
    Elem(Option<ElemOp>),
    Automorph,
    KeyGen,
    Tfhe(Option<TfheStep>),
}

impl Selector {
    pub fn parse(s: &str) -> Option<Selector> {
        let (head, tail) = match s.split_once('.') {
            Some((h, t)) => (h, Some(t)),
            None => (s, None),
        };
        let elem = |t: &str| {
            Some(match t {
                "Add" => ElemOp::Add,
                "Sub" => ElemOp::Sub,
                "Neg" => ElemOp::Neg,
                "Mul" => ElemOp::Mul,
                "MulAcc" => ElemOp::MulAcc,
                "MulScalar" => ElemOp::MulScalar,
                _ => return None,
            })
        };
        let step = |t: &str| {
            Some(match t {
                "ModSwitch" => TfheStep::ModSwitch,
                "Rotate" => TfheStep::Rotate,
                "Decompose" => TfheStep::Decompose,
                "Fft" => TfheStep::Fft,
                "MultAdd" => TfheStep::MultAdd,
                "Ifft" => TfheStep::Ifft,
                "Accumulate" => TfheStep::Accumulate,
                "SampleExtract" => TfheStep::SampleExtract,
                "KeySwitch" => TfheStep::KeySwitch,
                _ => return None,
            })
        };
        Some(match (head, tail) {
            ("Ntt", None) => Selector::Ntt,
            ("Intt", None) => Selector::Intt,
            ("BConv", None) => Selector::BConv,
            ("Automorph", None) => Selector::Automorph,
            ("KeyGen", None) => Selector::KeyGen,
            ("Elem", None) => Selector::Elem(None),
            ("Elem", Some(t)) => Selector::Elem(Some(elem(t)?)),
            ("Tfhe", None) => Selector::Tfhe(None),
            ("Tfhe", Some(t)) => Selector::Tfhe(Some(step(t)?)),
            _ => return None,
        })
    }

    /// 0 = no match, 1 = kind match, 2 = exact (op/step) match.
    pub(crate) fn score(self, k: &Kernel) -> u8 {
        match (self, k) {
            (Selector::Ntt, Kernel::Ntt { .. })
            | (Selector::Intt, Kernel::Intt { .. })
            | (Selector::BConv, Kernel::BConv { .. })
            | (Selector::Automorph, Kernel::Automorph { .. })
            | (Selector::KeyGen, Kernel::KeyGen { .. }) => 2,
            (Selector::Elem(None), Kernel::Elem { .. }) => 1,
            (Selector::Elem(Some(a)), Kernel::Elem { op, .. }) if a == *op => 2,
            (Selector::Tfhe(None), Kernel::Tfhe { .. }) => 1,
            (Selector::Tfhe(Some(a)), Kernel::Tfhe { step, .. }) if a == *step => 2,
            _ => 0,
        }
    }
}
