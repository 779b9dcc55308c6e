//! Sample extraction: the constant coefficient of a GLWE as an LWE of dimension `kN` under the
//! flattened GLWE key.
//!
//! # Algorithm
//! `(A·S)_0 = Σ_c (A_{c,0}·S_{c,0} − Σ_{t≥1} A_{c,N−t}·S_{c,t})`, so the mask block of column `c`
//! is `(A_{c,0}, −A_{c,N−1}, …, −A_{c,1})` and the body is `B_0`.
//!
//! # Source
//! Strix Alg. 1 line 13 (`SampleExtract`); CGGI JoC 2019 §4.

use crate::torus::Torus;

/// Extract coefficient 0 of `glwe` (`(k+1)·N` words) into `out` (`kN + 1` words).
pub fn sample_extract<T: Torus>(glwe: &[T], k: usize, n: usize, out: &mut [T]) {
    debug_assert_eq!(out.len(), k * n + 1);
    for c in 0..k {
        let a = &glwe[c * n..(c + 1) * n];
        let o = &mut out[c * n..(c + 1) * n];
        o[0] = a[0];
        for t in 1..n {
            o[t] = a[n - t].wneg();
        }
    }
    out[k * n] = glwe[k * n];
}

/// Extract coefficient `h < N` of `glwe` into `out` (`kN + 1` words): the LWE whose phase is
/// the `h`-th coefficient of the GLWE phase. Many-LUT bootstrapping reads one output per
/// function this way from a single accumulator ([`crate::many_lut`]).
///
/// `(A·S)_h = Σ_c (Σ_{u≤h} A_{c,h−u}·S_{c,u} − Σ_{u>h} A_{c,N+h−u}·S_{c,u})`, so the mask
/// block of column `c` is `(A_{c,h}, …, A_{c,0}, −A_{c,N−1}, …, −A_{c,h+1})` and the body `B_h`;
/// `h = 0` is [`sample_extract`].
pub fn sample_extract_at<T: Torus>(glwe: &[T], k: usize, n: usize, h: usize, out: &mut [T]) {
    debug_assert_eq!(out.len(), k * n + 1);
    debug_assert!(h < n);
    for c in 0..k {
        let a = &glwe[c * n..(c + 1) * n];
        let o = &mut out[c * n..(c + 1) * n];
        for (u, x) in o.iter_mut().enumerate() {
            *x = if u <= h { a[h - u] } else { a[n + h - u].wneg() };
        }
    }
    out[k * n] = glwe[k * n + h];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glwe::GlweSecretKey;
    use crate::params::NoiseDistribution;
    use crate::random::Csprng;

    #[test]
    fn extracted_phase_is_constant_coefficient() {
        let mut rng = Csprng::from_seed(5);
        let (k, n) = (2, 128);
        let sk = GlweSecretKey::<u32>::generate(k, n, &mut rng);
        let m: Vec<u32> = (0..n as u32).map(|j| j << 24).collect();
        let ct = sk.encrypt(&m, NoiseDistribution::Gaussian { std_dev: 1e-8 }, &mut rng);
        let glwe_phase = sk.phase(&ct);
        let mut lwe = vec![0u32; k * n + 1];
        sample_extract(&ct.data, k, n, &mut lwe);
        let lwe = crate::lwe::LweCiphertext::from_vec(lwe);
        assert_eq!(sk.as_lwe_key().phase(&lwe), glwe_phase[0]);
    }

    #[test]
    fn extraction_at_h_is_coefficient_h() {
        let mut rng = Csprng::from_seed(6);
        let (k, n) = (2, 64);
        let sk = GlweSecretKey::<u64>::generate(k, n, &mut rng);
        let m: Vec<u64> = (0..n as u64).map(|j| (j * 7 + 1) << 56).collect();
        let ct = sk.encrypt(&m, NoiseDistribution::Gaussian { std_dev: 1e-12 }, &mut rng);
        let glwe_phase = sk.phase(&ct);
        let key = sk.as_lwe_key();
        let mut at0 = vec![0u64; k * n + 1];
        sample_extract(&ct.data, k, n, &mut at0);
        for (h, &want) in glwe_phase.iter().enumerate() {
            let mut lwe = vec![0u64; k * n + 1];
            sample_extract_at(&ct.data, k, n, h, &mut lwe);
            if h == 0 {
                assert_eq!(lwe, at0);
            }
            let lwe = crate::lwe::LweCiphertext::from_vec(lwe);
            assert_eq!(key.phase(&lwe), want, "coefficient {h}");
        }
    }
}
