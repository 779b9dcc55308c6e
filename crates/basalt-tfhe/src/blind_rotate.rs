//! Blind rotation: `ACC ← X^{−b̄}·TV`, then `n` CMuxes `ACC ← X^{ā_i·s_i}·ACC`, leaving
//! `X^{−φ̄}·TV` with `φ̄ = b̄ − Σ ā_i s_i` the mod-switched phase.
//!
//! # Algorithm
//! Strix Alg. 1 lines 4–12, with the paper's line-6 sign and line-10 typo corrected to
//! the standard form:
//! `ACC ← ACC + BSK_i ⊡ (X^{ā_i}·ACC − ACC)`. Every iteration is executed, including `ā_i = 0`
//! (whose CMux input is zero): the work per PBS is then data-independent, like Strix's pipeline,
//! and the trace matches the closed form exactly.
//!
//! # Source
//! Strix §II-B/Alg. 1; CGGI JoC 2019 Alg. 3.

use basalt_trace::TfheStep;

use crate::bsk::FourierBsk;
use crate::decompose::StreamingDecomposer;
use crate::external_product::{
    ExternalProductShape, ExternalProductWorkspace, cmux_rotate, rotate,
};
use crate::fft::NegacyclicFft;
use crate::torus::Torus;
use crate::trace::emit_tfhe;

/// Buffers for one blind rotation (accumulator, external-product scratch).
pub struct BlindRotateWorkspace<T: Torus> {
    pub(crate) acc: Vec<T>,
    pub(crate) ep: ExternalProductWorkspace<T>,
    pub(crate) ms: Vec<usize>,
}

impl<T: Torus> BlindRotateWorkspace<T> {
    pub fn new(fft: &NegacyclicFft, k: usize, level: usize) -> Self {
        let n = fft.poly_size();
        BlindRotateWorkspace {
            acc: vec![T::ZERO; (k + 1) * n],
            ep: ExternalProductWorkspace::new(fft, k, level),
            ms: Vec::new(),
        }
    }

    /// The accumulator after [`blind_rotate`].
    pub fn accumulator(&self) -> &[T] {
        &self.acc
    }

    /// Bytes of per-ciphertext state (used to size batches to the cache).
    pub fn bytes(&self) -> usize {
        let t = std::mem::size_of::<T>();
        self.acc.len() * t + (self.ep.fdig.len() + self.ep.facc.len()) * 16
    }
}

/// Shape of the external products of one blind rotation.
pub fn shape_of(bsk: &FourierBsk) -> ExternalProductShape {
    ExternalProductShape {
        k: bsk.k,
        decomposer: StreamingDecomposer::new(bsk.base_log, bsk.level),
        group: (bsk.k + 1) * bsk.level,
    }
}

/// Initialise the accumulator: `ACC = X^{−b̄}·(0, …, 0, TV)`.
pub fn init_accumulator<T: Torus>(acc: &mut [T], tv: &[T], k: usize, b_bar: usize) {
    let n = tv.len();
    acc[..k * n].iter_mut().for_each(|x| *x = T::ZERO);
    let t = (2 * n - b_bar) % (2 * n);
    rotate(&mut acc[k * n..], tv, t);
}

/// Blind-rotate the test vector `tv` by the phase of `lwe` (dimension `n` = bsk's), leaving
/// the result in `ws.acc`. `lwe` must already be under the key the bsk encrypts.
pub fn blind_rotate<T: Torus>(
    lwe: &[T],
    tv: &[T],
    bsk: &FourierBsk,
    fft: &NegacyclicFft,
    ws: &mut BlindRotateWorkspace<T>,
) {
    let n = bsk.n;
    let k = bsk.k;
    crate::modswitch::mod_switch_lwe(lwe, n, &mut ws.ms);
    let b_bar = ws.ms[bsk.lwe_dim];
    init_accumulator(&mut ws.acc, tv, k, b_bar);
    let shape = shape_of(bsk);
    for i in 0..bsk.lwe_dim {
        let a = ws.ms[i];
        let next = if i + 1 < bsk.lwe_dim { bsk.ggsw(i + 1) } else { &[] };
        cmux_rotate(&mut ws.acc, bsk.ggsw(i), a, shape, fft, &mut ws.ep, next);
    }
}

/// Emit the kernels of `batch` blind rotations (one `Kernel::Tfhe` per step per iteration),
/// from the calling thread. A no-op unless a recorder is open. Counts are computed in `u64` and
/// split by [`emit_tfhe`] if they exceed `u32` (huge batches), so they never wrap.
pub fn emit_blind_rotate_trace(bsk: &FourierBsk, batch: usize) {
    if !basalt_trace::is_recording() {
        return;
    }
    let n = bsk.n;
    let k = bsk.k as u64;
    let rows = (k + 1) * bsk.level as u64;
    let b = batch as u64;
    let ifft_per_col = rows.div_ceil(shape_of(bsk).group as u64);
    // The whole bsk streams once per call: a batch of `b` LWEs shares one pass over it.
    basalt_trace::emit(basalt_trace::Kernel::TfheKeyLoad {
        key: basalt_trace::TfheKey::Bsk,
        size: n as u32,
        count: bsk.lwe_dim as u64 * rows * (k + 1),
    });
    emit_tfhe(TfheStep::ModSwitch, bsk.lwe_dim + 1, b);
    emit_tfhe(TfheStep::Rotate, n, b);
    let _g = basalt_trace::region("BlindRotate");
    for _ in 0..bsk.lwe_dim {
        emit_tfhe(TfheStep::Rotate, n, b * (k + 1));
        emit_tfhe(TfheStep::Decompose, n, b * rows);
        emit_tfhe(TfheStep::Fft, n, b * rows);
        emit_tfhe(TfheStep::MultAdd, n, b * rows * (k + 1));
        emit_tfhe(TfheStep::Ifft, n, b * (k + 1) * ifft_per_col);
        emit_tfhe(TfheStep::Accumulate, n, b * (k + 1) * ifft_per_col);
    }
}
