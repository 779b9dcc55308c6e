//! Kernels on RNS polynomials: NTT, element-wise arithmetic and automorphisms.
//!
//! Each kernel reports a [`basalt_trace::Kernel`] from the calling thread, then works on the
//! limbs in parallel (rayon, one task per limb above a size threshold) unless its operands are
//! symbolic. Results do not depend on the number of threads: the arithmetic is exact.
//!
//! Shape mismatches are programming errors inside Basalt and panic with a message; the scheme
//! layers above validate user input before it reaches these kernels.

use basalt_trace::{ElemOp, Kernel, emit};
use rayon::prelude::*;

use crate::modular::Modulus;
use crate::poly::{Domain, RnsPoly};
use crate::ring::RingContext;

/// Below this many coefficients per call, stay on the calling thread.
const PAR_THRESHOLD: usize = 1 << 14;

thread_local! {
    /// One limb of scratch per thread for [`RingContext::mul_assign`].
    static MUL_SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl RingContext {
    fn check_pair(&self, a: &RnsPoly, b: &RnsPoly, what: &str) {
        assert!(
            a.same_shape(b),
            "{what}: operand shapes differ: {a_s:?} vs {b_s:?}",
            a_s = (a.q_limbs(), a.p_limbs(), a.domain()),
            b_s = (b.q_limbs(), b.p_limbs(), b.domain())
        );
        assert_eq!(a.is_symbolic(), b.is_symbolic(), "{what}: symbolic and real operands mixed");
    }

    /// Run `f(local limb index, global index, modulus, limb)` on every limb of `a`.
    pub(crate) fn par_limbs(
        &self,
        a: &mut RnsPoly,
        f: impl Fn(usize, usize, Modulus, &mut [u64]) + Sync + Send,
    ) {
        let n = a.n();
        let g: Vec<usize> = self.global_indices(a);
        let par = n * a.limbs() >= PAR_THRESHOLD && crate::parallel::inner_parallel();
        let data = a.data_mut();
        let body = |(i, limb): (usize, &mut [u64])| f(i, g[i], self.moduli()[g[i]], limb);
        if par {
            data.par_chunks_mut(n).enumerate().for_each(body);
        } else {
            data.chunks_mut(n).enumerate().for_each(body);
        }
    }

    /// Run `f(global index, modulus, a-limb, b-limb)` on matching limbs of `a` and `b`.
    pub(crate) fn par_limbs2(
        &self,
        a: &mut RnsPoly,
        b: &RnsPoly,
        f: impl Fn(usize, Modulus, &mut [u64], &[u64]) + Sync + Send,
    ) {
        let n = a.n();
        let g: Vec<usize> = self.global_indices(a);
        let par = n * a.limbs() >= PAR_THRESHOLD && crate::parallel::inner_parallel();
        let body = |(i, (x, y)): (usize, (&mut [u64], &[u64]))| f(g[i], self.moduli()[g[i]], x, y);
        if par {
            a.data_mut().par_chunks_mut(n).zip(b.data().par_chunks(n)).enumerate().for_each(body);
        } else {
            a.data_mut().chunks_mut(n).zip(b.data().chunks(n)).enumerate().for_each(body);
        }
    }

    /// Forward NTT of every limb (Coeff → Ntt).
    pub fn ntt_assign(&self, a: &mut RnsPoly) {
        assert_eq!(a.domain(), Domain::Coeff, "ntt_assign: input already in the NTT domain");
        emit(Kernel::Ntt { n: a.n() as u32, limbs: a.limbs() as u32 });
        a.set_domain(Domain::Ntt);
        if !a.is_symbolic() {
            self.par_limbs(a, |_, g, _, limb| self.ntt_table(g).forward(limb));
        }
    }

    /// Inverse NTT of every limb (Ntt → Coeff).
    pub fn intt_assign(&self, a: &mut RnsPoly) {
        assert_eq!(a.domain(), Domain::Ntt, "intt_assign: input already in the coefficient domain");
        emit(Kernel::Intt { n: a.n() as u32, limbs: a.limbs() as u32 });
        a.set_domain(Domain::Coeff);
        if !a.is_symbolic() {
            self.par_limbs(a, |_, g, _, limb| self.ntt_table(g).inverse(limb));
        }
    }

    fn elem(&self, a: &RnsPoly, op: ElemOp) {
        emit(Kernel::Elem { n: a.n() as u32, limbs: a.limbs() as u32, op });
    }

    /// `a += b`.
    pub fn add_assign(&self, a: &mut RnsPoly, b: &RnsPoly) {
        self.check_pair(a, b, "add_assign");
        self.elem(a, ElemOp::Add);
        if !a.is_symbolic() {
            self.par_limbs2(a, b, |_, m, x, y| {
                x.iter_mut().zip(y).for_each(|(x, &y)| *x = m.add(*x, y))
            });
        }
    }

    /// `a -= b`.
    pub fn sub_assign(&self, a: &mut RnsPoly, b: &RnsPoly) {
        self.check_pair(a, b, "sub_assign");
        self.elem(a, ElemOp::Sub);
        if !a.is_symbolic() {
            self.par_limbs2(a, b, |_, m, x, y| {
                x.iter_mut().zip(y).for_each(|(x, &y)| *x = m.sub(*x, y))
            });
        }
    }

    /// `a = -a`.
    pub fn neg_assign(&self, a: &mut RnsPoly) {
        self.elem(a, ElemOp::Neg);
        if !a.is_symbolic() {
            self.par_limbs(a, |_, _, m, x| x.iter_mut().for_each(|x| *x = m.neg(*x)));
        }
    }

    /// `a = a ∘ b` (pointwise; both in the NTT domain).
    pub fn mul_assign(&self, a: &mut RnsPoly, b: &RnsPoly) {
        self.check_pair(a, b, "mul_assign");
        assert_eq!(a.domain(), Domain::Ntt, "mul_assign: operands must be in the NTT domain");
        self.elem(a, ElemOp::Mul);
        if !a.is_symbolic() {
            // tfhe-ntt's vectorised multiply-accumulate into a zeroed scratch limb is 2.5–6×
            // faster than scalar Barrett (`cargo run --release -p basalt-bench --example
            // elemwise_probe`). The scratch limb is per thread and stays in cache.
            self.par_limbs2(a, b, |g, _, x, y| {
                let mut t = MUL_SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
                t.clear();
                t.resize(x.len(), 0);
                self.ntt_table(g).mul_acc(&mut t, x, y);
                x.copy_from_slice(&t);
                MUL_SCRATCH.with(|s| *s.borrow_mut() = t);
            });
        }
    }

    /// `a ∘ b` as a new polynomial (pointwise; both in the NTT domain): the product written
    /// once, without first copying `a` as `mul_assign` on a clone would. Reports the same
    /// kernel as [`RingContext::mul_assign`].
    pub fn mul(&self, a: &RnsPoly, b: &RnsPoly) -> RnsPoly {
        self.check_pair(a, b, "mul");
        assert_eq!(a.domain(), Domain::Ntt, "mul: operands must be in the NTT domain");
        self.elem(a, ElemOp::Mul);
        let mut out = a.zero_like();
        if !a.is_symbolic() {
            let n = a.n();
            let g = self.global_indices(a);
            let zipped = out
                .data_mut()
                .par_chunks_mut(n)
                .zip(a.data().par_chunks(n))
                .zip(b.data().par_chunks(n))
                .with_min_len(crate::parallel::min_len());
            zipped.enumerate().for_each(|(i, ((z, x), y))| self.ntt_table(g[i]).mul_acc(z, x, y));
        }
        out
    }

    /// `acc += a ∘ b` (pointwise; all in the NTT domain).
    pub fn mul_acc(&self, acc: &mut RnsPoly, a: &RnsPoly, b: &RnsPoly) {
        self.check_pair(acc, a, "mul_acc");
        self.check_pair(a, b, "mul_acc");
        assert_eq!(a.domain(), Domain::Ntt, "mul_acc: operands must be in the NTT domain");
        self.elem(acc, ElemOp::MulAcc);
        if acc.is_symbolic() {
            return;
        }
        let n = a.n();
        let g = self.global_indices(a);
        let zipped = acc
            .data_mut()
            .par_chunks_mut(n)
            .zip(a.data().par_chunks(n))
            .zip(b.data().par_chunks(n))
            .with_min_len(crate::parallel::min_len());
        zipped.enumerate().for_each(|(i, ((z, x), y))| self.ntt_table(g[i]).mul_acc(z, x, y));
    }

    /// Multiply limb `i` by `s[i]` (a per-limb scalar, e.g. an RNS constant).
    pub fn mul_scalar_assign(&self, a: &mut RnsPoly, s: &[u64]) {
        assert_eq!(s.len(), a.limbs(), "mul_scalar_assign: one scalar per limb");
        self.elem(a, ElemOp::MulScalar);
        if !a.is_symbolic() {
            self.par_limbs(a, |i, _, m, x| {
                let w = m.reduce(s[i]);
                let ws = m.shoup(w);
                x.iter_mut().for_each(|x| *x = m.mul_shoup(*x, w, ws));
            });
        }
    }

    /// Multiply by a signed integer constant.
    pub fn mul_i64_assign(&self, a: &mut RnsPoly, c: i64) {
        let s: Vec<u64> = (0..a.limbs()).map(|i| self.modulus_of(a, i).from_i64(c)).collect();
        self.mul_scalar_assign(a, &s);
    }

    /// Add the constant polynomial with residue `s[i]` in limb `i`: every slot in the NTT
    /// domain, the constant coefficient in the coefficient domain.
    pub fn add_const_assign(&self, a: &mut RnsPoly, s: &[u64]) {
        assert_eq!(s.len(), a.limbs(), "add_const_assign: one scalar per limb");
        self.elem(a, ElemOp::Add);
        if a.is_symbolic() {
            return;
        }
        let ntt = a.domain() == Domain::Ntt;
        self.par_limbs(a, |i, _, m, x| {
            let c = m.reduce(s[i]);
            if ntt {
                x.iter_mut().for_each(|x| *x = m.add(*x, c));
            } else {
                x[0] = m.add(x[0], c);
            }
        });
    }

    /// Report the trace kernel of [`RingContext::automorphism`] of `a` without computing it:
    /// for fused kernels that apply the permutation inside another pass
    /// ([`crate::rns::mod_down_automorphism`]).
    pub fn report_automorphism(&self, a: &RnsPoly, galois: u64) {
        let galois = galois % (2 * a.n() as u64);
        emit(Kernel::Automorph { n: a.n() as u32, limbs: a.limbs() as u32, galois });
    }

    /// The automorphism `a(X) -> a(X^galois)` (`galois` odd), in either domain.
    pub fn automorphism(&self, a: &RnsPoly, galois: u64) -> RnsPoly {
        let n = a.n();
        assert!(galois % 2 == 1, "automorphism: Galois element {galois} must be odd");
        let galois = galois % (2 * n as u64);
        self.report_automorphism(a, galois);
        let mut out = a.zero_like();
        if a.is_symbolic() {
            return out;
        }
        match a.domain() {
            Domain::Ntt => {
                let perm = self.galois_permutation(galois);
                let src = a.data();
                self.par_limbs(&mut out, |i, _, _, dst| {
                    let s = &src[i * n..(i + 1) * n];
                    dst.iter_mut().zip(perm.iter()).for_each(|(d, &p)| *d = s[p as usize]);
                });
            }
            Domain::Coeff => {
                let src = a.data();
                let mask = 2 * n - 1;
                self.par_limbs(&mut out, |i, _, m, dst| {
                    let s = &src[i * n..(i + 1) * n];
                    let mut t = 0usize;
                    for &c in s {
                        if t < n {
                            dst[t] = c
                        } else {
                            dst[t - n] = m.neg(c)
                        }
                        t = (t + galois as usize) & mask;
                    }
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::ntt_primes;
    use basalt_trace::{KernelKind, record};

    fn ctx() -> RingContext {
        let q = ntt_primes(40, 5, 3, &[]).unwrap();
        let p = ntt_primes(45, 5, 1, &q).unwrap();
        RingContext::new(5, &q, &p).unwrap()
    }

    #[test]
    fn automorphism_commutes_with_ntt() {
        let c = ctx();
        let coeffs: Vec<i64> = (0..32).map(|i| i * 7 - 100).collect();
        let a = c.from_i64(&coeffs, 3, 1);
        for g in [5u64, 25, 63, 3] {
            let mut via_coeff = c.automorphism(&a, g);
            c.ntt_assign(&mut via_coeff);
            let mut a_ntt = a.clone();
            c.ntt_assign(&mut a_ntt);
            assert_eq!(c.automorphism(&a_ntt, g), via_coeff, "galois {g}");
        }
    }

    #[test]
    fn elementwise_kernels_match_scalar_arithmetic() {
        let c = ctx();
        let x: Vec<i64> = (0..32).map(|i| i * 12_345_678_901 - 7).collect();
        let y: Vec<i64> = (0..32).map(|i| 98_765_432_109 - i * i * 31).collect();
        let (a, b) = (c.from_i64(&x, 3, 1), c.from_i64(&y, 3, 1));
        let (mut an, mut bn) = (a.clone(), b.clone());
        an.set_domain(Domain::Ntt); // pointwise kernels do not care what the values mean
        bn.set_domain(Domain::Ntt);
        let mut prod = an.clone();
        c.mul_assign(&mut prod, &bn);
        assert_eq!(c.mul(&an, &bn), prod);
        let mut acc = an.clone();
        c.mul_acc(&mut acc, &an, &bn);
        let mut sum = a.clone();
        c.add_assign(&mut sum, &b);
        for i in 0..a.limbs() {
            let m = c.modulus_of(&a, i);
            for j in 0..32 {
                let (u, v) = (a.limb(i)[j], b.limb(i)[j]);
                assert_eq!(prod.limb(i)[j], m.mul(u, v));
                assert_eq!(acc.limb(i)[j], m.add(u, m.mul(u, v)));
                assert_eq!(sum.limb(i)[j], m.add(u, v));
            }
        }
    }

    #[test]
    fn coefficient_automorphism_matches_definition() {
        let c = ctx();
        let n = 32usize;
        let coeffs: Vec<i64> = (0..n as i64).map(|i| i + 1).collect();
        let out = c.automorphism(&c.from_i64(&coeffs, 1, 0), 5);
        let m = c.q()[0];
        let mut want = vec![0i64; n];
        for (i, &v) in coeffs.iter().enumerate() {
            let t = i * 5 % (2 * n);
            if t < n { want[t] += v } else { want[t - n] -= v }
        }
        let got: Vec<i64> = out.limb(0).iter().map(|&x| m.center(x)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn symbolic_operands_record_the_same_kernels_without_data() {
        let c = ctx();
        let run = |mut a: RnsPoly, b: RnsPoly| {
            c.ntt_assign(&mut a);
            let mut b2 = b;
            c.ntt_assign(&mut b2);
            c.mul_assign(&mut a, &b2);
            let r = c.automorphism(&a, 5);
            c.add_assign(&mut a, &r);
            c.intt_assign(&mut a);
            a
        };
        let real = c.from_i64(&[1; 32], 3, 0);
        let ((), t_real) = record(|| {
            run(real.clone(), real.clone());
        });
        let sym = RnsPoly::symbolic(32, 3, 0, Domain::Coeff);
        let (out, t_sym) = record(|| run(sym.clone(), sym.clone()));
        assert!(out.is_symbolic() && out.data().is_empty());
        assert_eq!(t_real, t_sym);
        assert_eq!(t_sym.count(KernelKind::Ntt), 6);
        assert_eq!(t_sym.count(KernelKind::Automorph), 3);
    }
}
