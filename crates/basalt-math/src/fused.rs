//! Fused element-wise kernels: one pass over memory where the unfused form takes two and an
//! allocation. They emit the kernels of the unfused form, so traces stay comparable.

use basalt_trace::{ElemOp, Kernel, emit};

use crate::poly::RnsPoly;
use crate::ring::RingContext;

impl RingContext {
    /// `acc += a · s` limb by limb (`s[i]` a per-limb scalar, reduced here), reading only the
    /// first `acc.q_limbs()` limbs of `a`: a constant product, a level drop and an addition
    /// in one pass, as polynomial evaluation accumulates `Σ c_k·T_k`.
    ///
    /// # Panics
    /// If `acc` and `a` differ in degree, domain or kind, `a` has fewer Q limbs than `acc`, either
    /// has special limbs, or `s` is shorter than `acc`'s limbs.
    pub fn mul_scalar_acc_assign(&self, acc: &mut RnsPoly, a: &RnsPoly, s: &[u64]) {
        assert_eq!((acc.n(), acc.domain()), (a.n(), a.domain()), "mul_scalar_acc: shapes");
        assert_eq!(acc.is_symbolic(), a.is_symbolic(), "mul_scalar_acc: symbolic and real mixed");
        assert!(acc.p_limbs() == 0 && a.p_limbs() == 0, "mul_scalar_acc: Q limbs only");
        assert!(a.q_limbs() >= acc.q_limbs(), "mul_scalar_acc: a has fewer limbs than acc");
        assert!(s.len() >= acc.limbs(), "mul_scalar_acc: one scalar per limb");
        let (n, limbs) = (acc.n() as u32, acc.limbs() as u32);
        emit(Kernel::Elem { n, limbs, op: ElemOp::MulScalar });
        emit(Kernel::Elem { n, limbs, op: ElemOp::Add });
        if acc.is_symbolic() {
            return;
        }
        self.par_limbs2(acc, a, |g, m, x, y| {
            let w = m.reduce(s[g]);
            let ws = m.shoup(w);
            x.iter_mut().zip(y).for_each(|(x, &y)| *x = m.add(*x, m.mul_shoup(y, w, ws)));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_constant_accumulation_matches_the_unfused_kernels() {
        let ctx =
            RingContext::new(5, &crate::primes::ntt_primes(40, 5, 3, &[]).unwrap(), &[]).unwrap();
        let a = crate::bench::random_poly(&ctx, 3, 0, 1);
        let mut acc = crate::bench::random_poly(&ctx, 2, 0, 2);
        let s = [12345u64, 987654321, 5];
        let mut want = a.clone();
        want.truncate_q(2);
        ctx.mul_scalar_assign(&mut want, &s[..2]);
        ctx.add_assign(&mut want, &acc);
        ctx.mul_scalar_acc_assign(&mut acc, &a, &s);
        assert_eq!(acc, want);
    }
}
