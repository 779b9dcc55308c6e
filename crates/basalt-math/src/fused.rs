//! Fused element-wise kernels: one pass over memory where the unfused form takes two and an
//! allocation. They emit the kernels of the unfused form, so traces stay comparable
//! ([`dot_pair`], a slice kernel, leaves that to its caller).

use basalt_trace::{ElemOp, Kernel, emit};

use crate::modular::{Modulus, WideReducer};
use crate::poly::RnsPoly;
use crate::ring::RingContext;

/// Coefficients per block of [`dot_pair`]: its two 128-bit accumulator rows stay in L1.
const DOT_BLOCK: usize = 256;

/// `out0[c] = Σ_j x_j[c]·b_j[c] mod p` and `out1[c] = Σ_j x_j[c]·a_j[c] mod p`, every input
/// reduced modulo `m`: one limb of the key-switching inner product (`x_j` the extended digits,
/// `(b_j, a_j)` the key), all digits at once. Reports no trace kernel (the caller reports the
/// `MulAcc` products its unfused form would).
///
/// # Why
/// Digit by digit (one `acc += x·k` pass per digit), the two accumulator limbs go through
/// memory `2β` times and every product is reduced on its own. Here each block of coefficients
/// sums its products lazily in 128 bits (products are below `p² < 2^124`, so at least 16 fit)
/// and reduces each sum once; the result is the same canonical residue.
///
/// # Panics
/// If the slices disagree in number or length.
pub fn dot_pair(
    m: Modulus,
    xs: &[&[u64]],
    bs: &[&[u64]],
    as_: &[&[u64]],
    out0: &mut [u64],
    out1: &mut [u64],
) {
    let n = out0.len();
    assert!(xs.len() == bs.len() && xs.len() == as_.len(), "dot_pair: one key pair per digit");
    assert_eq!(out1.len(), n, "dot_pair: output lengths differ");
    assert!(xs.iter().chain(bs).chain(as_).all(|l| l.len() == n), "dot_pair: limb lengths differ");
    // Products that fit one accumulator with a reduced residue carried in.
    let p = m.value() as u128;
    let sq = (p - 1) * (p - 1);
    let chunk = ((u128::MAX - p) / sq).clamp(1, 1 << 20) as usize;
    // The largest sum one reduction sees: `min(β, chunk)` products plus a carried residue.
    let max = sq * xs.len().min(chunk) as u128 + (p - 1);
    match WideReducer::new(m, max) {
        Some(r) => dot_lazy(xs, bs, as_, out0, out1, chunk, |v| r.reduce(v)),
        None => dot_lazy(xs, bs, as_, out0, out1, chunk, |v| m.reduce_u128(v)),
    }
}

/// [`dot_pair`]'s sums, each reduced by `red` (exact on every value below `chunk` products of
/// residues plus one residue).
fn dot_lazy(
    xs: &[&[u64]],
    bs: &[&[u64]],
    as_: &[&[u64]],
    out0: &mut [u64],
    out1: &mut [u64],
    chunk: usize,
    red: impl Fn(u128) -> u64 + Copy,
) {
    let n = out0.len();
    if xs.len() <= chunk && dot_in_registers(xs, bs, as_, out0, out1, red) {
        return;
    }
    let mut acc0 = [0u128; DOT_BLOCK];
    let mut acc1 = [0u128; DOT_BLOCK];
    for start in (0..n).step_by(DOT_BLOCK) {
        let len = DOT_BLOCK.min(n - start);
        let (acc0, acc1) = (&mut acc0[..len], &mut acc1[..len]);
        acc0.fill(0);
        acc1.fill(0);
        for (j, ((x, b), a)) in xs.iter().zip(bs).zip(as_).enumerate() {
            let (x, b, a) =
                (&x[start..start + len], &b[start..start + len], &a[start..start + len]);
            let products = acc0.iter_mut().zip(acc1.iter_mut()).zip(x.iter().zip(b.iter().zip(a)));
            for ((s0, s1), (&xv, (&bv, &av))) in products {
                *s0 += xv as u128 * bv as u128;
                *s1 += xv as u128 * av as u128;
            }
            if (j + 1) % chunk == 0 {
                acc0.iter_mut().chain(acc1.iter_mut()).for_each(|v| *v = red(*v) as u128);
            }
        }
        let (o0, o1) = (&mut out0[start..start + len], &mut out1[start..start + len]);
        o0.iter_mut().zip(acc0.iter()).for_each(|(o, &v)| *o = red(v));
        o1.iter_mut().zip(acc1.iter()).for_each(|(o, &v)| *o = red(v));
    }
}

thread_local! {
    /// A copy of the limb being permuted ([`permute_in_place`]).
    static PERMUTE_SCRATCH: std::cell::RefCell<Vec<u64>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `limb[k] = old[perm[k]]` in place (`perm` from [`RingContext::galois_permutation`]: an
/// automorphism of one NTT-domain limb), through a per-thread copy of the limb. Fused kernels
/// call it right after the pass that produced the limb, while it is in cache, instead of a
/// separate automorphism over a fresh polynomial. Reports no trace kernel.
///
/// # Panics
/// If `perm` and `limb` differ in length or an index is out of range.
pub fn permute_in_place(limb: &mut [u64], perm: &[u32]) {
    assert_eq!(limb.len(), perm.len(), "permute_in_place: one index per coefficient");
    // Taken out of the thread-local (not borrowed) so that a nested use allocates its own.
    let mut old = PERMUTE_SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    old.clear();
    old.extend_from_slice(limb);
    limb.iter_mut().zip(perm).for_each(|(d, &p)| *d = old[p as usize]);
    PERMUTE_SCRATCH.with(|s| *s.borrow_mut() = old);
}

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

/// [`dot_pair`] for up to 8 digits whose products all fit one accumulator: each
/// coefficient's two sums stay in registers. Returns false, doing nothing, for other counts.
fn dot_in_registers(
    xs: &[&[u64]],
    bs: &[&[u64]],
    as_: &[&[u64]],
    out0: &mut [u64],
    out1: &mut [u64],
    red: impl Fn(u128) -> u64 + Copy,
) -> bool {
    #[inline(always)]
    fn regs<const F: usize>(
        xs: &[&[u64]],
        bs: &[&[u64]],
        as_: &[&[u64]],
        out0: &mut [u64],
        out1: &mut [u64],
        red: impl Fn(u128) -> u64,
    ) -> bool {
        let n = out0.len();
        let x: [&[u64]; F] = std::array::from_fn(|j| &xs[j][..n]);
        let b: [&[u64]; F] = std::array::from_fn(|j| &bs[j][..n]);
        let a: [&[u64]; F] = std::array::from_fn(|j| &as_[j][..n]);
        let out1 = &mut out1[..n];
        for (c, o0) in out0.iter_mut().enumerate() {
            let (mut s0, mut s1) = (0u128, 0u128);
            for j in 0..F {
                let xv = x[j][c] as u128;
                s0 += xv * b[j][c] as u128;
                s1 += xv * a[j][c] as u128;
            }
            *o0 = red(s0);
            out1[c] = red(s1);
        }
        true
    }
    /// [`regs`] compiled for BMI2 (every x86-64 CPU since 2013–2015; checked at run time).
    ///
    /// # Why
    /// The baseline target has only the one-operand `mul`, which writes its product to
    /// `rax:rdx` and clobbers the flags, so each product must wait for the registers and the
    /// carry chain of the previous `add`/`adc`. `mulx` takes any registers and leaves the flags
    /// alone, and the ten products of a coefficient overlap. The sums and reductions are the
    /// same code, hence the same canonical residues. `cargo run --release -p basalt-bench
    /// --example bconv_probe` times the kernel per coefficient (five digits).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2,adx")]
    fn regs_bmi2<const F: usize>(
        xs: &[&[u64]],
        bs: &[&[u64]],
        as_: &[&[u64]],
        out0: &mut [u64],
        out1: &mut [u64],
        red: impl Fn(u128) -> u64,
    ) -> bool {
        regs::<F>(xs, bs, as_, out0, out1, red)
    }
    fn dispatch<const F: usize>(
        xs: &[&[u64]],
        bs: &[&[u64]],
        as_: &[&[u64]],
        out0: &mut [u64],
        out1: &mut [u64],
        red: impl Fn(u128) -> u64,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if has_bmi2() {
            // SAFETY: the CPU supports BMI2 and ADX (checked at run time by `has_bmi2`); the
            // function is otherwise safe code.
            return unsafe { regs_bmi2::<F>(xs, bs, as_, out0, out1, red) };
        }
        regs::<F>(xs, bs, as_, out0, out1, red)
    }
    match xs.len() {
        1 => dispatch::<1>(xs, bs, as_, out0, out1, red),
        2 => dispatch::<2>(xs, bs, as_, out0, out1, red),
        3 => dispatch::<3>(xs, bs, as_, out0, out1, red),
        4 => dispatch::<4>(xs, bs, as_, out0, out1, red),
        5 => dispatch::<5>(xs, bs, as_, out0, out1, red),
        6 => dispatch::<6>(xs, bs, as_, out0, out1, red),
        7 => dispatch::<7>(xs, bs, as_, out0, out1, red),
        8 => dispatch::<8>(xs, bs, as_, out0, out1, red),
        _ => false,
    }
}

/// True when this CPU has BMI2 and ADX (checked once).
#[cfg(target_arch = "x86_64")]
fn has_bmi2() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| is_x86_feature_detected!("bmi2") && is_x86_feature_detected!("adx"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn view(v: &[Vec<u64>]) -> Vec<&[u64]> {
        v.iter().map(|l| l.as_slice()).collect()
    }

    #[test]
    fn lazy_dot_pair_matches_u128_sums() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        // Prime sizes of the presets (20–61 bits, one just above 2^61), a 62-bit one (16
        // products per chunk), and digit counts on both sides of the chunk; lengths not a
        // multiple of the block.
        let below =
            |bits: u32| (1..).map(|k| (1u64 << bits) - k).find(|&q| crate::primes::is_prime(q));
        let above =
            |bits: u32| (1..).map(|k| (1u64 << bits) + k).find(|&q| crate::primes::is_prime(q));
        let qs = [below(20), below(36), Some((1 << 61) - 1), above(61), below(62)];
        for q in qs.map(Option::unwrap) {
            let m = Modulus::new(q).unwrap();
            for beta in [1usize, 2, 5, 8, 9, 17, 40] {
                let n = 300;
                let limb = |rng: &mut ChaCha8Rng| -> Vec<u64> {
                    let mut v: Vec<u64> = (0..n).map(|_| rng.random_range(0..q)).collect();
                    (v[0], v[1], v[2]) = (0, q - 1, q - 1);
                    v
                };
                let xs: Vec<Vec<u64>> = (0..beta).map(|_| limb(&mut rng)).collect();
                let bs: Vec<Vec<u64>> = (0..beta).map(|_| limb(&mut rng)).collect();
                let as_: Vec<Vec<u64>> = (0..beta).map(|_| limb(&mut rng)).collect();
                let (mut o0, mut o1) = (vec![0u64; n], vec![0u64; n]);
                dot_pair(m, &view(&xs), &view(&bs), &view(&as_), &mut o0, &mut o1);
                for c in 0..n {
                    let (mut w0, mut w1) = (0u128, 0u128);
                    for j in 0..beta {
                        let x = xs[j][c] as u128;
                        w0 = (w0 + x * bs[j][c] as u128 % q as u128) % q as u128;
                        w1 = (w1 + x * as_[j][c] as u128 % q as u128) % q as u128;
                    }
                    assert_eq!((o0[c] as u128, o1[c] as u128), (w0, w1), "q={q} β={beta} c={c}");
                }
            }
        }
    }

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
