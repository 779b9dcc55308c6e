//! CKKS encoding: the canonical embedding, computed with the "special FFT".
//!
//! A plaintext polynomial `m(X) ∈ Z[X]/(X^N+1)` packs `n ≤ N/2` complex slots (n a power of
//! two). Fully packed (`n = N/2`), slot `j` is `m(ζ^{5^j}) / Δ` with `ζ = e^{iπ/N}`; the
//! conjugate roots `ζ^{-5^j}` hold the conjugates, which is why real coefficients suffice.
//! Sparsely packed (`n < N/2`), `m` lives in the subring `Z[Y]`, `Y = X^{N/(2n)}`, and the
//! slots are the values at `ψ^{5^j}`, `ψ = e^{2πi/(4n)}`; rotations by the Galois element
//! `5^k` rotate these `n` slots cyclically.
//!
//! # Algorithm
//! At every slot root `Y^n = i` (because `5^j ≡ 1 mod 4`), so with `c_k = m_k + i·m_{k+n}`
//! (`k < n`) the slots are `z_j = Σ_k c_k ψ^{5^j k}`: an n-point transform with the
//! rotation-group ordering, evaluated in O(n log n) by a radix-2 butterfly network whose twiddle
//! at stage `len` and position `j` is `e^{2πi·(5^j mod 4·len)/(4·len)}` (the "special FFT" of
//! HEAAN/Lattigo/SEAL). Decoding: read `c` from the coefficients, special FFT. Encoding: the
//! inverse butterflies, then `m_k = round(Δ·Re c_k)`, `m_{k+n} = round(Δ·Im c_k)`.
//!
//! # Source
//! Cheon, Kim, Kim, Song, "Homomorphic encryption for arithmetic of approximate numbers",
//! ASIACRYPT 2017, §3; the rotation-group FFT from the HEAAN library.
//!
//! # Cost
//! Encode: one inverse special FFT (n/2·log n complex butterflies), an exact rounding into
//! `l+1` limbs, and one NTT of `l+1` limbs. Decode: one INTT of `l+1` limbs, an exact CRT lift
//! (`to_f64_centered`), one special FFT.

use basalt_math::{Domain, RnsPoly};
use num_complex::Complex64;

use crate::ciphertext::{Plaintext, PlaintextQP};
use crate::error::{CkksError, Result};
use crate::params::Parameters;

/// Encoder for one parameter set (precomputed roots and rotation group).
#[derive(Clone, Debug)]
pub struct Encoder {
    params: Parameters,
    /// `5^j mod 4·(N/2)` for `j < N/2` (reduced further per stage).
    rot_group: Vec<u64>,
    /// `e^{2πi k / M}` for `k < M`, `M = 2N`.
    roots: Vec<Complex64>,
}

fn bit_reverse<T>(v: &mut [T]) {
    let n = v.len();
    let mut j = 0usize;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            v.swap(i, j);
        }
    }
}

impl Encoder {
    pub fn new(params: &Parameters) -> Encoder {
        let n = params.n();
        let m = 2 * n;
        let mut rot_group = Vec::with_capacity(n / 2);
        let mut g = 1u64;
        for _ in 0..n / 2 {
            rot_group.push(g);
            g = (g * 5) % m as u64;
        }
        let roots = (0..m)
            .map(|k| Complex64::from_polar(1.0, 2.0 * std::f64::consts::PI * k as f64 / m as f64))
            .collect();
        Encoder { params: params.clone(), rot_group, roots }
    }

    pub fn params(&self) -> &Parameters {
        &self.params
    }

    fn twiddle(&self, j: usize, len: usize) -> Complex64 {
        let lenq = 4 * len as u64;
        let m = self.roots.len() as u64;
        self.roots[((self.rot_group[j] % lenq) * (m / lenq)) as usize]
    }

    /// The special FFT in place: `v[k] = c_k` in, `v[j] = Σ_k c_k ψ^{5^j k}` out.
    pub fn special_fft(&self, v: &mut [Complex64]) {
        let n = v.len();
        bit_reverse(v);
        let mut len = 2;
        while len <= n {
            let h = len / 2;
            for i in (0..n).step_by(len) {
                for j in 0..h {
                    let u = v[i + j];
                    let w = v[i + j + h] * self.twiddle(j, len);
                    v[i + j] = u + w;
                    v[i + j + h] = u - w;
                }
            }
            len *= 2;
        }
    }

    /// Inverse of [`Encoder::special_fft`] (including the 1/n).
    pub fn special_ifft(&self, v: &mut [Complex64]) {
        let n = v.len();
        let mut len = n;
        while len >= 2 {
            let h = len / 2;
            for i in (0..n).step_by(len) {
                for j in 0..h {
                    let (a, b) = (v[i + j], v[i + j + h]);
                    v[i + j] = a + b;
                    v[i + j + h] = (a - b) * self.twiddle(j, len).conj();
                }
            }
            len /= 2;
        }
        bit_reverse(v);
        let inv = 1.0 / n as f64;
        v.iter_mut().for_each(|x| *x *= inv);
    }

    fn check_slots(&self, slots: usize) -> Result<()> {
        let max = self.params.max_slots();
        if slots == 0 || !slots.is_power_of_two() || slots > max {
            return Err(CkksError::BadSlots { slots, max });
        }
        Ok(())
    }

    /// Coefficients (as f64, already multiplied by `scale`) of the polynomial packing `values`
    /// into `slots` slots.
    pub fn embed(&self, values: &[Complex64], slots: usize, scale: f64) -> Result<Vec<f64>> {
        self.check_slots(slots)?;
        if values.len() > slots {
            return Err(CkksError::TooManyValues { count: values.len(), slots });
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(CkksError::BadScale(scale.log2()));
        }
        let mut v = vec![Complex64::new(0.0, 0.0); slots];
        v[..values.len()].copy_from_slice(values);
        if let Some(bad) = v.iter().find(|z| !(z.re.is_finite() && z.im.is_finite())) {
            return Err(CkksError::Overflow { value: bad.re + bad.im });
        }
        self.special_ifft(&mut v);
        let n = self.params.n();
        let gap = n / (2 * slots);
        let mut coeffs = vec![0.0f64; n];
        for (k, c) in v.iter().enumerate() {
            coeffs[k * gap] = c.re * scale;
            coeffs[(k + slots) * gap] = c.im * scale;
        }
        Ok(coeffs)
    }

    /// Encode complex `values` (at most `slots`, zero-padded) at `level` with `scale`.
    ///
    /// # Errors
    /// Bad slot count, too many values, non-finite values or scale, level above the maximum,
    /// or coefficients that would not fit below `Q_level / 2`.
    pub fn encode(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        let coeffs = self.checked_embed(values, slots, level, scale)?;
        let ring = self.params.ring();
        let mut poly = ring.from_f64_round(&coeffs, level + 1, 0);
        ring.ntt_assign(&mut poly);
        Ok(Plaintext { poly, scale, slots, params_id: self.params.id() })
    }

    /// [`Encoder::embed`] plus the level and `Q_level / 2` overflow checks of encoding.
    fn checked_embed(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Vec<f64>> {
        if level > self.params.max_level() {
            return Err(CkksError::LevelTooHigh { requested: level, max: self.params.max_level() });
        }
        let coeffs = self.embed(values, slots, scale)?;
        let log_q: f64 = self.params.q()[..=level].iter().map(|&q| (q as f64).log2()).sum();
        if let Some(&big) = coeffs.iter().find(|c| c.abs() >= (log_q - 1.0).exp2()) {
            return Err(CkksError::Overflow { value: big / scale });
        }
        Ok(coeffs)
    }

    /// Encode `values` over the extended basis `Q_level ∪ P_level` (the special primes key
    /// switching uses at `level`): the same integer polynomial as
    /// [`Encoder::encode`], also reduced modulo the special primes, for products with lazy
    /// (`Q ∪ P`) ciphertexts in double-hoisted linear transforms.
    ///
    /// # Cost
    /// As [`Encoder::encode`] with `l+1+k` limbs to round and NTT.
    ///
    /// # Errors
    /// As [`Encoder::encode`] (the overflow bound stays `Q_level / 2`, so the `Q` limbs are
    /// exactly those of [`Encoder::encode`]).
    pub fn encode_qp(
        &self,
        values: &[Complex64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<PlaintextQP> {
        let coeffs = self.checked_embed(values, slots, level, scale)?;
        let ring = self.params.ring();
        let mut poly = ring.from_f64_round(&coeffs, level + 1, self.params.k_at(level));
        ring.ntt_assign(&mut poly);
        Ok(PlaintextQP { poly, scale, slots, params_id: self.params.id() })
    }

    /// Encode real values.
    pub fn encode_real(
        &self,
        values: &[f64],
        slots: usize,
        level: usize,
        scale: f64,
    ) -> Result<Plaintext> {
        let v: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&v, slots, level, scale)
    }

    /// Encode the same complex constant in every slot (a polynomial with two non-zero
    /// coefficients, `X^0` and `X^{N/2}`).
    pub fn encode_constant(&self, c: Complex64, level: usize, scale: f64) -> Result<Plaintext> {
        self.encode(&[c], 1, level, scale).map(|mut pt| {
            pt.slots = self.params.max_slots();
            pt
        })
    }

    /// Decode a plaintext into its `slots` complex values (exact CRT lift, then FFT).
    ///
    /// # Errors
    /// Wrong parameter set, or a symbolic plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        if pt.params_id != self.params.id() {
            return Err(CkksError::WrongParams { expected: self.params.id(), found: pt.params_id });
        }
        if pt.is_symbolic() {
            return Err(CkksError::Symbolic);
        }
        let ring = self.params.ring();
        let mut p: RnsPoly = pt.poly.clone();
        if p.domain() == Domain::Ntt {
            ring.intt_assign(&mut p);
        }
        let coeffs = ring.to_f64_centered(&p);
        Ok(self.unembed(&coeffs, pt.slots, pt.scale))
    }

    /// Decode real parts only.
    pub fn decode_real(&self, pt: &Plaintext) -> Result<Vec<f64>> {
        Ok(self.decode(pt)?.into_iter().map(|z| z.re).collect())
    }

    /// Slot values of the polynomial with (real) coefficients `coeffs`, scaled down by `scale`.
    pub fn unembed(&self, coeffs: &[f64], slots: usize, scale: f64) -> Vec<Complex64> {
        let n = self.params.n();
        let gap = n / (2 * slots);
        let mut v: Vec<Complex64> = (0..slots)
            .map(|k| Complex64::new(coeffs[k * gap] / scale, coeffs[(k + slots) * gap] / scale))
            .collect();
        self.special_fft(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParametersLiteral;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Naive O(N²) canonical embedding: evaluate m(X) at ζ^{5^j}, ζ = e^{iπ/N}.
    fn naive_slots(coeffs: &[f64], slots: usize) -> Vec<Complex64> {
        let n = coeffs.len();
        let m = 2 * n as u64;
        let gap = n / (2 * slots);
        (0..slots)
            .map(|j| {
                let mut e = 1u64;
                for _ in 0..j {
                    e = e * 5 % m;
                }
                // Y = X^gap; evaluate Σ m_k X^k at X = ζ^e.
                let mut acc = Complex64::new(0.0, 0.0);
                for (k, &c) in coeffs.iter().enumerate() {
                    if c != 0.0 {
                        let ang = std::f64::consts::PI * ((e * k as u64) % m) as f64 / n as f64;
                        acc += Complex64::from_polar(c, ang);
                    }
                }
                let _ = gap;
                acc
            })
            .collect()
    }

    fn params(log_n: u32) -> Parameters {
        Parameters::new(ParametersLiteral::toy(log_n, 55, 45, 2, 55, 1, 3)).unwrap()
    }

    #[test]
    fn special_fft_matches_naive_embedding() {
        let p = params(10);
        let enc = Encoder::new(&p);
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for log_slots in 0..=9 {
            let slots = 1 << log_slots;
            let vals: Vec<Complex64> = (0..slots)
                .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
                .collect();
            let coeffs = enc.embed(&vals, slots, 1.0).unwrap();
            // The coefficients are real and their embedding equals the input.
            let naive = naive_slots(&coeffs, slots);
            for (a, b) in naive.iter().zip(&vals) {
                assert!((a - b).norm() < 1e-9, "slots={slots}: {a} vs {b}");
            }
            // And the fast decode agrees with the naive one.
            let fast = enc.unembed(&coeffs, slots, 1.0);
            for (a, b) in fast.iter().zip(&naive) {
                assert!((a - b).norm() < 1e-9);
            }
        }
    }

    #[test]
    fn encode_decode_round_trip_at_every_level() {
        let p = params(11);
        let enc = Encoder::new(&p);
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let vals: Vec<Complex64> = (0..p.max_slots())
            .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
            .collect();
        for level in 0..=p.max_level() {
            let pt = enc.encode(&vals, p.max_slots(), level, 2f64.powi(40)).unwrap();
            let out = enc.decode(&pt).unwrap();
            let stats = crate::precision::PrecisionStats::new(&vals, &out);
            assert!(stats.min.l2 > 30.0, "level {level}: {stats:?}");
        }
        // Errors are named.
        assert!(matches!(enc.encode(&vals, 3, 0, 1.0), Err(CkksError::BadSlots { .. })));
        assert!(matches!(enc.encode(&vals, 4, 0, 1.0), Err(CkksError::TooManyValues { .. })));
        assert!(matches!(enc.encode(&vals[..4], 4, 9, 1.0), Err(CkksError::LevelTooHigh { .. })));
        assert!(matches!(
            enc.encode(&[Complex64::new(1.0, 0.0)], 4, 0, 2f64.powi(60)),
            Err(CkksError::Overflow { .. })
        ));
    }
}
