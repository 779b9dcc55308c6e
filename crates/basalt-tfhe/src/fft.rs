//! Negacyclic polynomial products in `Z_q[X]/(X^N + 1)` with a *folded* f64 FFT.
//!
//! # Algorithm
//! A real polynomial `a` of degree `< N` is folded into `M = N/2` complex values
//! `z_j = (a_j + i·a_{j+M})·ψ^j`, `ψ = e^{iπ/N}` (the twisted negacyclic embedding), and an
//! `M`-point complex FFT of `z` evaluates `a` at the `M` roots `ψ^{1+4k}` of `X^N + 1` (the other
//! `M` roots are their conjugates, redundant for real `a`). Products are then pointwise; the
//! inverse is the inverse FFT, the conjugate twist `ψ^{-j}/M`, and unfolding real/imaginary parts
//! back to coefficients `j` and `j + M`, rounded and reduced mod `q`.
//!
//! # Source
//! Strix §IV-C ("folding", after Klemsa, CSCML 2021): an `N`-coefficient polynomial through an
//! `N/2`-point FFT, which halves the FFT work; TFHE-rs' FFT64 uses the same embedding. The FFT
//! itself is `tfhe-fft`'s unordered plan (AVX-512/AVX2 at run time): the forward output stays in
//! the plan's permuted order, which is fine because the bootstrapping key is stored in that same
//! order and the inverse consumes it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use dyn_stack::{PodBuffer, PodStack, StackReq};
use pulp::{Simd, WithSimd};
use tfhe_fft::c64;
use tfhe_fft::ordered::FftAlgo;
use tfhe_fft::unordered::{Method, Plan};

use crate::torus::Torus;

/// Folded negacyclic FFT of size `N` (an `N/2`-point complex plan plus twist tables).
pub struct NegacyclicFft {
    n: usize,
    plan: Plan,
    twist: Vec<c64>,
    untwist: Vec<c64>,
    arch: pulp::Arch,
}

/// Base size of the inner ordered FFT of the unordered plan. Fixed (not measured) so that the
/// permuted Fourier order, and hence a serialised Fourier key, is reproducible across runs
/// (radix-16 DIF over 256-point blocks was the fastest or tied on this Zen 4 at M = 1024).
fn base_n_for(m: usize) -> usize {
    m.min(256)
}

impl NegacyclicFft {
    /// Build a plan for polynomial size `n` (power of two, `n >= 64`).
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two() && n >= 64, "polynomial size {n}");
        let m = n / 2;
        let plan =
            Plan::new(m, Method::UserProvided { base_algo: FftAlgo::Dif16, base_n: base_n_for(m) });
        let mut twist = Vec::with_capacity(m);
        let mut untwist = Vec::with_capacity(m);
        for j in 0..m {
            // Angles from exact integer ratios keep the tables accurate to ~1 ulp.
            let theta = std::f64::consts::PI * j as f64 / n as f64;
            let (s, c) = theta.sin_cos();
            twist.push(c64::new(c, s));
            untwist.push(c64::new(c / m as f64, -s / m as f64));
        }
        NegacyclicFft { n, plan, twist, untwist, arch: pulp::Arch::new() }
    }

    /// Polynomial size `N`.
    pub fn poly_size(&self) -> usize {
        self.n
    }

    /// Number of complex Fourier coefficients per polynomial (`N/2`).
    pub fn fourier_size(&self) -> usize {
        self.n / 2
    }

    /// Base size of the inner plan (recorded with serialised Fourier keys).
    pub fn base_n(&self) -> usize {
        base_n_for(self.n / 2)
    }

    /// Scratch needed by [`forward`](Self::forward) / [`backward_add`](Self::backward_add).
    pub fn scratch_req(&self) -> StackReq {
        self.plan.fft_scratch()
    }

    /// A scratch buffer sized for this plan.
    pub fn new_scratch(&self) -> PodBuffer {
        PodBuffer::new(self.scratch_req())
    }

    /// Forward transform of a torus (or signed digit) polynomial, read as centred integers.
    pub fn forward<T: Torus>(&self, out: &mut [c64], a: &[T], stack: &mut PodStack) {
        let m = self.n / 2;
        assert!(out.len() == m && a.len() == self.n);
        self.arch.dispatch(TwistIn { twist: &self.twist, a, out: &mut *out });
        self.plan.fwd(out, stack);
    }

    /// Inverse transform of `buf` (destroyed), rounded and *added* to `acc` mod `q`.
    pub fn backward_add<T: Torus>(&self, acc: &mut [T], buf: &mut [c64], stack: &mut PodStack) {
        assert!(buf.len() == self.n / 2 && acc.len() == self.n);
        self.plan.inv(buf, stack);
        self.arch.dispatch(UntwistOut { untwist: &self.untwist, buf, acc, add: true });
    }

    /// Inverse transform of `buf` (destroyed), rounded into `out` mod `q`.
    pub fn backward_set<T: Torus>(&self, out: &mut [T], buf: &mut [c64], stack: &mut PodStack) {
        assert!(buf.len() == self.n / 2 && out.len() == self.n);
        self.plan.inv(buf, stack);
        self.arch.dispatch(UntwistOut { untwist: &self.untwist, buf, acc: out, add: false });
    }

    /// `out = a · s` exactly mod `q`, for any torus `a` and a *small* `s` (`|s_j| <= 1`, e.g. a
    /// binary key). `a` is split into 16-bit limbs so that every FFT product stays far below
    /// 2^52 and rounds to the exact integer (error ≤ N·2^16·2^-40 ≪ 1/2).
    pub fn mul_exact_small<T: Torus>(&self, a: &[T], s: &[T], out: &mut [T]) {
        let m = self.n / 2;
        let mut buf = self.new_scratch();
        let stack = PodStack::new(&mut buf);
        let mut fs = vec![c64::default(); m];
        self.forward(&mut fs, s, stack);
        let mut limb = vec![T::ZERO; self.n];
        let mut fl = vec![c64::default(); m];
        let mut part = vec![T::ZERO; self.n];
        out.iter_mut().for_each(|x| *x = T::ZERO);
        for l in 0..(T::BITS / 16) {
            for (d, &x) in limb.iter_mut().zip(a) {
                *d = T::from_u64((x.to_u64() >> (16 * l)) & 0xffff);
            }
            self.forward(&mut fl, &limb, stack);
            for (x, y) in fl.iter_mut().zip(&fs) {
                *x *= *y;
            }
            self.backward_set(&mut part, &mut fl, stack);
            for (o, &p) in out.iter_mut().zip(&part) {
                *o = o.wadd(p.shl(16 * l));
            }
        }
    }
}

struct TwistIn<'a, T> {
    twist: &'a [c64],
    a: &'a [T],
    out: &'a mut [c64],
}

impl<T: Torus> WithSimd for TwistIn<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let m = self.out.len();
        let (lo, hi) = self.a.split_at(m);
        for (((o, w), &x), &y) in self.out.iter_mut().zip(self.twist).zip(lo).zip(hi) {
            let re = x.to_signed_f64();
            let im = y.to_signed_f64();
            *o = c64::new(re * w.re - im * w.im, re * w.im + im * w.re);
        }
    }
}

struct UntwistOut<'a, T> {
    untwist: &'a [c64],
    buf: &'a [c64],
    acc: &'a mut [T],
    add: bool,
}

impl<T: Torus> WithSimd for UntwistOut<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) {
        let m = self.buf.len();
        let (lo, hi) = self.acc.split_at_mut(m);
        if self.add {
            for (((z, w), x), y) in self.buf.iter().zip(self.untwist).zip(lo).zip(hi) {
                let re = z.re * w.re - z.im * w.im;
                let im = z.re * w.im + z.im * w.re;
                *x = x.wadd(T::from_f64_wrapping(re));
                *y = y.wadd(T::from_f64_wrapping(im));
            }
        } else {
            for (((z, w), x), y) in self.buf.iter().zip(self.untwist).zip(lo).zip(hi) {
                let re = z.re * w.re - z.im * w.im;
                let im = z.re * w.im + z.im * w.re;
                *x = T::from_f64_wrapping(re);
                *y = T::from_f64_wrapping(im);
            }
        }
    }
}

/// Shared plans, one per polynomial size (building a plan costs far more than one transform).
pub fn fft_for(n: usize) -> Arc<NegacyclicFft> {
    static CACHE: OnceLock<Mutex<HashMap<usize, Arc<NegacyclicFft>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    g.entry(n).or_insert_with(|| Arc::new(NegacyclicFft::new(n))).clone()
}

/// Exact negacyclic product with wrapping arithmetic, O(N²): the independent reference.
pub fn schoolbook_negacyclic<T: Torus>(a: &[T], b: &[T]) -> Vec<T> {
    let n = a.len();
    assert_eq!(b.len(), n);
    let mut out = vec![T::ZERO; n];
    for (i, &x) in a.iter().enumerate() {
        if x == T::ZERO {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = x.wmul(y);
            let k = i + j;
            if k < n {
                out[k] = out[k].wadd(p);
            } else {
                out[k - n] = out[k - n].wsub(p);
            }
        }
    }
    out
}
