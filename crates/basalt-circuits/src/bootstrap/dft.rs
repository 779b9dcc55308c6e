//! The homomorphic DFTs of bootstrapping as products of sparse-diagonal matrices.
//!
//! CKKS decoding of `n` slots is `z = U·w` with `U[j][k] = ψ^{5^j·k}` (`ψ` a primitive
//! `4n`-th root of unity) and `w = a_lo + i·a_hi` the packed coefficients; the encoder's
//! special FFT computes it as `U = F·BR` with `BR` the bit reversal and `F = S_{log n} ⋯ S_1`
//! radix-2 butterfly stages. Each stage has three non-zero diagonals (`0`, `+h`, `−h` for
//! half-width `h`), so a product of `r` consecutive stages has at most `2^{r+1} − 1`: merging
//! the `log n` stages into a few groups trades depth (one level per group, FAB's `fftIter`)
//! against rotations per level.
//!
//! Bootstrapping never applies `BR`: CoeffToSlot computes `F^{-1}·z = BR·w`, EvalMod works slot
//! by slot so the order does not matter, and SlotToCoeff applies `F` to `BR·w'`, which is
//! `U·w'`. (Cheon–Han–Kim–Kim–Song, SAC 2018; Chen–Chillotti–Song, EUROCRYPT 2019.)
//!
//! Sparse packing (`n < N/2`): the ciphertext seen over `2n` slots repeats its `n` values, which
//! leaves room to put real and imaginary parts side by side and run EvalMod once. The last
//! CoeffToSlot group is therefore lifted to `2n` slots with its lower half masked to zero
//! ([`lift_masked`]), and the first SlotToCoeff group to a `2n`-slot map that recombines
//! `x_lo + i·x_hi` ([`lift_recombine`]) — both without extra rotations or levels.

use std::collections::BTreeMap;

use num_complex::Complex64;

use crate::error::Result;
use crate::lintrans::{Diagonals, rotate_slots};

const ZERO: Complex64 = Complex64 { re: 0.0, im: 0.0 };

/// A matrix over `n` slots as its non-zero diagonals (`d_k[t] = M[t][(t + k) mod n]`), with
/// the products bootstrapping needs.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagMatrix {
    pub n: usize,
    pub diags: BTreeMap<usize, Vec<Complex64>>,
}

impl DiagMatrix {
    pub fn identity(n: usize) -> DiagMatrix {
        DiagMatrix { n, diags: BTreeMap::from([(0, vec![Complex64::new(1.0, 0.0); n])]) }
    }

    /// `self · other` (apply `other` first): `(AB)` diagonal `p + q` gains `a_p ⊙ rot_p(b_q)`.
    pub fn mul(&self, other: &DiagMatrix) -> DiagMatrix {
        assert_eq!(self.n, other.n);
        let n = self.n;
        let mut diags: BTreeMap<usize, Vec<Complex64>> = BTreeMap::new();
        for (&p, a) in &self.diags {
            for (&q, b) in &other.diags {
                let rb = rotate_slots(b, p as i64);
                let e = diags.entry((p + q) % n).or_insert_with(|| vec![ZERO; n]);
                e.iter_mut().zip(a.iter().zip(&rb)).for_each(|(o, (x, y))| *o += x * y);
            }
        }
        diags.retain(|_, v| v.iter().any(|z| z.norm() > 1e-300));
        DiagMatrix { n, diags }
    }

    pub fn scale(mut self, c: f64) -> DiagMatrix {
        self.diags.values_mut().flatten().for_each(|z| *z *= c);
        self
    }

    pub fn to_diagonals(&self) -> Result<Diagonals> {
        Diagonals::from_map(
            self.n,
            self.diags.iter().map(|(&k, v)| (k as i64, v.clone())).collect(),
        )
    }

    /// Cleartext application (tests).
    pub fn apply(&self, x: &[Complex64]) -> Vec<Complex64> {
        let mut y = vec![ZERO; self.n];
        for (&k, d) in &self.diags {
            let r = rotate_slots(x, k as i64);
            y.iter_mut().zip(d.iter().zip(&r)).for_each(|(o, (a, b))| *o += a * b);
        }
        y
    }
}

/// `exp(2πi·(5^j mod 4·len)/(4·len))` for `j` in `0..len/2`: the twiddles of the butterflies
/// of a stage of width `len` (the encoder's special FFT). Each power of 5 is the previous one
/// times 5, so a stage costs `O(len)`; a power taken from scratch per butterfly made the
/// stages of N = 2^16 quadratic (seconds for the circuit's shape alone).
fn twiddles(len: usize) -> Vec<Complex64> {
    let m = 4 * len as u64;
    let mut g = 1u64;
    (0..len / 2)
        .map(|_| {
            let t = Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * g as f64 / m as f64);
            g = g * 5 % m;
            t
        })
        .collect()
}

/// Butterfly stage `S` of width `len = 2h` over `n` slots (forward, SlotToCoeff), or `S^{-1}`
/// (CoeffToSlot): `S` maps `(u, w)` at positions `(p, p + h)` of each block to
/// `(u + t·w, u − t·w)`; `S^{-1}` maps `(a, b)` to `((a + b)/2, t̄·(a − b)/2)`.
pub fn stage(n: usize, len: usize, inverse: bool) -> DiagMatrix {
    let h = len / 2;
    let mut d0 = vec![ZERO; n];
    let mut dp = vec![ZERO; n]; // diagonal +h
    let mut dm = vec![ZERO; n]; // diagonal −h (n − h)
    let one = Complex64::new(1.0, 0.0);
    let tw = twiddles(len);
    for p in 0..n {
        let r = p % len;
        if r < h {
            let t = tw[r];
            if inverse {
                d0[p] = one * 0.5;
                dp[p] = one * 0.5;
            } else {
                d0[p] = one;
                dp[p] = t;
            }
        } else {
            let t = tw[r - h];
            if inverse {
                d0[p] = -t.conj() * 0.5;
                dm[p] = t.conj() * 0.5;
            } else {
                d0[p] = -t;
                dm[p] = one;
            }
        }
    }
    let mut diags = BTreeMap::from([(0, d0)]);
    for (k, v) in [(h % n, dp), ((n - h) % n, dm)] {
        let e = diags.entry(k).or_insert_with(|| vec![ZERO; n]);
        e.iter_mut().zip(&v).for_each(|(a, b)| *a += b);
    }
    DiagMatrix { n, diags }
}

/// Split `stages` stages into `groups` consecutive groups, the larger groups first.
pub fn group_sizes(stages: usize, groups: usize) -> Vec<usize> {
    let g = groups.clamp(1, stages.max(1));
    (0..g).map(|i| stages / g + usize::from(i < stages % g)).collect()
}

/// The CoeffToSlot groups in application order: `F^{-1}` split into `groups` factors (stages
/// of width `n, n/2, …, 2`), each multiplied by `c^{1/groups}`.
pub fn coeff_to_slot(n: usize, groups: usize, c: f64) -> Vec<DiagMatrix> {
    let log_n = n.trailing_zeros() as usize;
    let widths: Vec<usize> = (1..=log_n).rev().map(|s| 1usize << s).collect();
    build(n, &widths, groups, c, true)
}

/// The SlotToCoeff groups in application order: `F` (stages of width `2, 4, …, n`), each
/// multiplied by `c^{1/groups}`. The smaller groups come first, where diagonals are many.
pub fn slot_to_coeff(n: usize, groups: usize, c: f64) -> Vec<DiagMatrix> {
    let log_n = n.trailing_zeros() as usize;
    let widths: Vec<usize> = (1..=log_n).map(|s| 1usize << s).collect();
    let mut sizes = group_sizes(widths.len(), groups);
    sizes.reverse();
    build_sized(n, &widths, &sizes, c, false)
}

fn build(n: usize, widths: &[usize], groups: usize, c: f64, inverse: bool) -> Vec<DiagMatrix> {
    let sizes = group_sizes(widths.len(), groups);
    build_sized(n, widths, &sizes, c, inverse)
}

fn build_sized(
    n: usize,
    widths: &[usize],
    sizes: &[usize],
    c: f64,
    inverse: bool,
) -> Vec<DiagMatrix> {
    let per = c.powf(1.0 / sizes.len() as f64);
    let mut out = Vec::with_capacity(sizes.len());
    let mut it = widths.iter();
    for &s in sizes {
        let mut m = DiagMatrix::identity(n);
        for &len in it.by_ref().take(s) {
            m = stage(n, len, inverse).mul(&m);
        }
        out.push(m.scale(per));
    }
    out
}

/// `M` over `n` slots as a `2n`-slot matrix with rows `n..2n` zero, for an input that repeats
/// its `n` values (`[z, z]`): the output is `[M·z, 0]`, with the same rotations as `M`.
pub fn lift_masked(m: &DiagMatrix) -> DiagMatrix {
    let n = m.n;
    let diags = m
        .diags
        .iter()
        .map(|(&k, v)| {
            let mut w = v.clone();
            w.resize(2 * n, ZERO);
            (k, w)
        })
        .collect();
    DiagMatrix { n: 2 * n, diags }
}

/// `M` over `n` slots as a `2n`-slot matrix mapping `[x_lo, x_hi]` to `[y, y]` with
/// `y = M·(x_lo + i·x_hi)`: SlotToCoeff's first group reading EvalMod's real and imaginary
/// halves.
pub fn lift_recombine(m: &DiagMatrix) -> DiagMatrix {
    let n = m.n;
    let mut diags = BTreeMap::new();
    for (&k, v) in &m.diags {
        for shift in [0, n] {
            let d = k + shift;
            let w: Vec<Complex64> = (0..2 * n)
                .map(|t| {
                    let col = (t + d) % (2 * n);
                    let unit = if col < n { Complex64::new(1.0, 0.0) } else { Complex64::i() };
                    v[t % n] * unit
                })
                .collect();
            diags.insert(d, w);
        }
    }
    DiagMatrix { n: 2 * n, diags }
}

/// In-place bit reversal of a power-of-two-length vector (tests and the cleartext twin).
pub fn bit_reverse<T>(v: &mut [T]) {
    let n = v.len();
    let bits = n.trailing_zeros();
    if bits == 0 {
        return;
    }
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if i < j {
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{random_values, toy_params};
    use basalt_ckks::Encoder;

    fn close(a: &[Complex64], b: &[Complex64], tol: f64) {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!((x - y).norm() < tol, "slot {i}: {x} vs {y}");
        }
    }

    #[test]
    fn twiddles_are_the_powers_of_five_on_the_unit_circle() {
        for len in [2usize, 8, 64, 1 << 12] {
            let m = 4 * len as u128;
            for (j, t) in twiddles(len).into_iter().enumerate() {
                // 5^j mod 4·len by square-and-multiply on big integers, independently.
                let (mut g, mut b, mut e) = (1u128, 5u128, j);
                while e > 0 {
                    if e & 1 == 1 {
                        g = g * b % m;
                    }
                    b = b * b % m;
                    e >>= 1;
                }
                let want =
                    Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * g as f64 / m as f64);
                assert_eq!(t, want, "len {len}, j {j}");
            }
        }
    }

    #[test]
    fn groups_compose_to_the_special_fft_and_its_inverse() {
        let params = toy_params(10, 2, 40, 1);
        let enc = Encoder::new(&params);
        for (n, groups) in [(256usize, 3usize), (64, 2), (8, 3), (2, 1), (512, 4)] {
            let w = random_values(n, n as u64, false);
            let mut z = w.clone();
            enc.special_fft(&mut z);
            // CoeffToSlot: z → BR·w.
            let mut x = z.clone();
            for m in coeff_to_slot(n, groups, 1.0) {
                x = m.apply(&x);
            }
            let mut bw = w.clone();
            bit_reverse(&mut bw);
            close(&x, &bw, 1e-9);
            // SlotToCoeff: BR·w → z.
            let mut y = bw.clone();
            let stc = slot_to_coeff(n, groups, 1.0);
            assert_eq!(stc.len(), groups.min(n.trailing_zeros() as usize));
            for m in stc {
                y = m.apply(&y);
            }
            close(&y, &z, 1e-9);
        }
    }

    #[test]
    fn merged_groups_have_few_diagonals() {
        let cts = coeff_to_slot(1 << 12, 3, 1.0);
        let counts: Vec<usize> = cts.iter().map(|m| m.diags.len()).collect();
        // Widths n..n/8 merge onto multiples of n/16 (wrapping): 2^4 diagonals; the smallest
        // widths do not wrap: 2^{r+1} − 1.
        assert_eq!(counts, vec![16, 31, 31]);
    }

    #[test]
    fn lifts_pack_and_unpack_real_and_imaginary_halves() {
        let n = 16;
        let m = coeff_to_slot(n, 2, 1.0).pop().unwrap();
        let z = random_values(n, 3, false);
        let rep: Vec<Complex64> = z.iter().chain(&z).copied().collect();
        let lifted = lift_masked(&m).apply(&rep);
        close(&lifted[..n], &m.apply(&z), 1e-12);
        close(&lifted[n..], &vec![ZERO; n], 1e-12);
        let s = slot_to_coeff(n, 2, 1.0).remove(0);
        let lo = random_values(n, 4, true);
        let hi = random_values(n, 5, true);
        let x: Vec<Complex64> = lo.iter().chain(&hi).copied().collect();
        let y = lift_recombine(&s).apply(&x);
        let packed: Vec<Complex64> =
            lo.iter().zip(&hi).map(|(a, b)| a + Complex64::i() * b).collect();
        let want = s.apply(&packed);
        close(&y[..n], &want, 1e-12);
        close(&y[n..], &want, 1e-12);
    }
}
