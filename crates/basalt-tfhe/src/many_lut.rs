//! Many-LUT programmable bootstrapping: `k` functions of one input from one blind rotation.
//!
//! # Why
//! After a radix addition every block needs its digit `v mod m` and its carry `⌊v/m⌋`: two
//! lookup tables on the same input, so two blind rotations, and the blind rotation is nearly
//! all of a bootstrap's cost. When the input is known to be small (its *degree*, the largest
//! value it can hold, is low) one blind rotation can serve several tables.
//!
//! # Algorithm
//! Plaintext space `p` (message × carry values, one padding bit), input value `x ∈ 0..=d`,
//! functions `f_0 … f_{k−1}`. An ordinary test vector gives each of the `p` values a box of
//! `N/p` coefficients. Only `d + 1` values occur, so the `p` boxes are cut into `k` segments of
//! `s = ⌊p/k⌋ ≥ d + 1` boxes and box `i·s + x` holds `f_i(x)` (boxes past `d` in a segment are
//! never read and hold 0). The blind rotation is the ordinary one, by the input's phase; the
//! accumulator then holds, at coefficient `i·s·N/p`, what coefficient 0 holds for a test vector
//! of `f_i` alone, and [`sample_extract_at`] reads it. Condition: `(d + 1)·k ≤ p`.
//!
//! Splitting each value's box into `k` sub-boxes (one per function) would work too, but each
//! sub-box would be `k` times narrower than the noise it must absorb; segments keep every used
//! value's box at full width.
//!
//! # Noise
//! Value `x` of function `i` is read from the run of coefficients around `(i·s + x)·N/p`; the run
//! is a whole box, `N/p` coefficients, exactly as for an ordinary table (the last used box
//! `(k−1)·s + d` ends at or before coefficient `N` because `k·s ≤ p`; the first, `x = 0` of
//! `f_0`, wraps negacyclically as an ordinary table's does). All `k` outputs are right when the
//! switched phase stays within half a box of `x·N/p`, the very event that decides an ordinary
//! PBS: the failure probability of one many-LUT bootstrap, all `k` outputs together, is that of
//! one ordinary bootstrap ([`ManyLut::half_width`] measures the run on the actual test vector and
//! [`ManyLut::noise`] feeds it to the noise model), where `k` separate bootstraps would fail
//! about `k` times as often. Each output is one coefficient of the blind-rotated accumulator,
//! whose error has per coefficient the variance of an ordinary output (CGGI Thm. 4.3 bounds every
//! coefficient alike), so the outputs chain like any bootstrap output (noise level 1). Their
//! errors are not independent of one another; noise levels that add as bounds on standard
//! deviations (the integer layer's L1 rule) hold whatever the correlation.
//!
//! # Source
//! Carpov, Izabachène, Mollimard, "New techniques for multi-value input homomorphic evaluation
//! and applications" (CT-RSA 2019), multi-output PBS; TFHE-rs shortint
//! (`generate_many_lookup_table`, `apply_many_lookup_table`), re-derived here.

use basalt_trace::TfheStep;
use rayon::prelude::*;

use crate::batch::{BatchConfig, blind_rotate_batched, keyswitch_batch};
use crate::blind_rotate::emit_blind_rotate_trace;
use crate::bsk::FourierBsk;
use crate::error::{Result, TfheError};
use crate::keys::{Ciphertext, Encoding, ServerKey, check_encoding};
use crate::lut::{Lut, delta};
use crate::lwe::LweCiphertext;
use crate::noise::{NoiseReport, estimate_with_half_width};
use crate::params::{AtomicPattern, TfheParams};
use crate::sample_extract::sample_extract_at;
use crate::torus::Torus;
use crate::trace::emit_tfhe;

/// A test vector packing `k` functions of an input of degree at most `max_value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManyLut<T: Torus> {
    lut: Lut<T>,
    tables: Vec<Vec<u64>>,
    max_value: u64,
    plaintext_modulus: u64,
    /// Coefficients between the segments of consecutive functions (`s·N/p`).
    stride: usize,
}

impl<T: Torus> ManyLut<T> {
    /// How many functions of an input up to `max_value` fit a plaintext space of
    /// `plaintext_modulus` values: `⌊p / (d + 1)⌋` (0 when `d ≥ p`).
    pub fn capacity(plaintext_modulus: u64, max_value: u64) -> usize {
        if max_value >= plaintext_modulus {
            return 0;
        }
        (plaintext_modulus / (max_value + 1)) as usize
    }

    /// Pack `fns`, each evaluated on `0..=max_value`.
    ///
    /// # Errors
    /// [`TfheError::ManyLutCapacity`] when there are no functions or
    /// `(max_value + 1)·fns.len() > p`; [`TfheError::ManyLutValueOutOfRange`] when a function
    /// leaves the message space `0..p`.
    pub fn from_fns(
        params: &TfheParams,
        max_value: u64,
        fns: &[&dyn Fn(u64) -> u64],
    ) -> Result<Self> {
        check_capacity(params.plaintext_modulus(), max_value, fns.len())?;
        let tables: Vec<Vec<u64>> = fns.iter().map(|f| (0..=max_value).map(f).collect()).collect();
        Self::from_tables(params, max_value, &tables)
    }

    /// Pack explicit tables, `tables[i][x] = f_i(x)` for `x ∈ 0..=max_value`.
    ///
    /// # Errors
    /// As [`ManyLut::from_fns`], plus [`TfheError::ManyLutTableLength`] for a table without
    /// exactly `max_value + 1` entries.
    pub fn from_tables(params: &TfheParams, max_value: u64, tables: &[Vec<u64>]) -> Result<Self> {
        let p = params.plaintext_modulus();
        check_capacity(p, max_value, tables.len())?;
        for (i, t) in tables.iter().enumerate() {
            if t.len() as u64 != max_value + 1 {
                return Err(TfheError::ManyLutTableLength {
                    function: i,
                    max_value,
                    found: t.len(),
                });
            }
            if let Some((x, &v)) = t.iter().enumerate().find(|(_, v)| **v >= p) {
                return Err(TfheError::ManyLutValueOutOfRange {
                    function: i,
                    input: x as u64,
                    value: v,
                    modulus: p,
                });
            }
        }
        let s = (p / tables.len() as u64) as usize;
        let mut packed = vec![0u64; p as usize];
        for (i, t) in tables.iter().enumerate() {
            packed[i * s..i * s + t.len()].copy_from_slice(t);
        }
        let lut = Lut::from_table(params, &packed)?;
        let box_len = params.polynomial_size / p as usize;
        Ok(ManyLut {
            lut,
            tables: tables.to_vec(),
            max_value,
            plaintext_modulus: p,
            stride: s * box_len,
        })
    }

    /// Number of functions `k` (outputs per bootstrap).
    pub fn functions(&self) -> usize {
        self.tables.len()
    }

    /// The degree bound `d` the table was built for.
    pub fn max_value(&self) -> u64 {
        self.max_value
    }

    /// `f_i` on `0..=max_value`.
    pub fn table(&self, i: usize) -> &[u64] {
        &self.tables[i]
    }

    /// Accumulator coefficient holding `f_i`'s output.
    pub fn offset(&self, i: usize) -> usize {
        i * self.stride
    }

    /// Largest value output `i` can hold for an input of degree `input_degree` (the output's
    /// degree): the maximum of `f_i` on `0..=min(input_degree, d)`.
    pub fn output_degree(&self, i: usize, input_degree: u64) -> u64 {
        let top = input_degree.min(self.max_value) as usize;
        self.tables[i][..=top].iter().copied().max().unwrap_or(0)
    }

    /// The packed test vector.
    pub fn test_vector(&self) -> &[T] {
        self.lut.test_vector()
    }

    /// The packed test vector as an ordinary [`Lut`] (its `table()` is the packed table of `p`
    /// entries).
    pub fn lut(&self) -> &Lut<T> {
        &self.lut
    }

    /// Smallest half-width, in coefficients, of the run around an exactly switched input that
    /// still reads the right output, over every used input `x ≤ d` and every output: the
    /// switched phase may be off by `e` coefficients with `−w ≤ e < w` for `w` this value.
    /// Measured on the test vector itself (negacyclic extension included), not assumed; an
    /// ordinary table's is `N/(2p)`.
    pub fn half_width(&self) -> usize {
        let tv = self.lut.test_vector();
        let n = tv.len();
        let p = self.plaintext_modulus;
        let box_len = n / p as usize;
        let d: T = delta(p);
        // Coefficient j of the negacyclic extension (X^N = −1) of the test vector.
        let ext = |j: usize| {
            let j = j % (2 * n);
            if j < n { tv[j] } else { tv[j - n].wneg() }
        };
        let mut best = usize::MAX;
        for (i, t) in self.tables.iter().enumerate() {
            for (x, &v) in t.iter().enumerate() {
                let want = T::from_u64(v).wmul(d);
                // Reading at rotation φ̄ gives coefficient φ̄ + offset of the extension.
                let centre = x * box_len + self.offset(i);
                let right = (0..n).take_while(|&e| ext(centre + e) == want).count();
                let left = (1..=n).take_while(|&e| ext(centre + 2 * n - e) == want).count();
                best = best.min(left.min(right));
            }
        }
        best
    }

    /// The noise model's report for this test vector: the variances of an ordinary bootstrap
    /// with the failure threshold set to [`ManyLut::half_width`] (torus units: `w / 2N`).
    pub fn noise(&self, params: &TfheParams, norm2: f64) -> NoiseReport {
        let two_n = 2.0 * self.lut.test_vector().len() as f64;
        estimate_with_half_width(params, norm2, self.half_width() as f64 / two_n)
    }
}

fn check_capacity(p: u64, max_value: u64, functions: usize) -> Result<()> {
    let cap = ManyLut::<u64>::capacity(p, max_value);
    if functions == 0 || functions > cap {
        return Err(TfheError::ManyLutCapacity { functions, max_value, plaintext_modulus: p });
    }
    Ok(())
}

/// Many-LUT PBS of LWEs under the bsk's key, two-level batched on the current rayon pool (one
/// blind rotation per input, the ordinary batched one): `outs[j·k + i]` (`kN + 1` words) is
/// `f_i` of input `j`.
pub fn many_lut_pbs_batch<T: Torus>(
    inputs: &[&[T]],
    lut: &ManyLut<T>,
    bsk: &FourierBsk,
    cfg: &BatchConfig,
    outs: &mut [Vec<T>],
) {
    let f = lut.functions();
    assert_eq!(inputs.len() * f, outs.len());
    if inputs.is_empty() {
        return;
    }
    let _r = basalt_trace::region("PBS");
    emit_blind_rotate_trace(bsk, inputs.len());
    emit_tfhe(TfheStep::SampleExtract, bsk.n, (inputs.len() * f) as u64);
    let (k, n) = (bsk.k, bsk.n);
    blind_rotate_batched(inputs, lut.test_vector(), bsk, cfg, outs, f, |acc, outs| {
        for (i, out) in outs.iter_mut().enumerate() {
            out.clear();
            out.resize(k * n + 1, T::ZERO);
            sample_extract_at(acc, k, n, lut.offset(i), out);
        }
    });
}

impl<T: Torus> ServerKey<T> {
    /// Check that `lut` was built for this key's set (ring size and message space).
    pub(crate) fn check_many_lut(&self, lut: &ManyLut<T>) -> Result<()> {
        self.check_lut(&lut.lut)?;
        let p = self.params.plaintext_modulus();
        if lut.plaintext_modulus != p {
            return Err(TfheError::Dimension {
                what: "many-LUT message space",
                expected: p as usize,
                found: lut.plaintext_modulus as usize,
            });
        }
        Ok(())
    }

    /// Raw many-LUT bootstraps of checked inputs: key switching and the modulus-switch noise
    /// reduction where the set has them, in the atomic pattern's order; `k` outputs per input.
    pub(crate) fn many_lut_raw(
        &self,
        inputs: &[&[T]],
        lut: &ManyLut<T>,
        cfg: &BatchConfig,
    ) -> Vec<Vec<T>> {
        let f = lut.functions();
        let mut out = vec![Vec::new(); inputs.len() * f];
        match self.params.atomic_pattern {
            AtomicPattern::KsPbs => {
                let mut mid = vec![Vec::new(); inputs.len()];
                keyswitch_batch(&self.ksk, inputs, cfg.ks_tile, &mut mid);
                if self.msnr.is_some() {
                    mid.par_iter_mut().for_each(|v| self.reduce_ms_noise(v));
                }
                let m: Vec<&[T]> = mid.iter().map(|v| v.as_slice()).collect();
                many_lut_pbs_batch(&m, lut, &self.bsk, cfg, &mut out);
            }
            AtomicPattern::PbsKs => {
                let reduced: Vec<Vec<T>> = inputs
                    .par_iter()
                    .map(|x| {
                        let mut v = x.to_vec();
                        self.reduce_ms_noise(&mut v);
                        v
                    })
                    .collect();
                let r: Vec<&[T]> = reduced.iter().map(|v| v.as_slice()).collect();
                let mut mid = vec![Vec::new(); inputs.len() * f];
                many_lut_pbs_batch(&r, lut, &self.bsk, cfg, &mut mid);
                let m: Vec<&[T]> = mid.iter().map(|v| v.as_slice()).collect();
                keyswitch_batch(&self.ksk, &m, cfg.ks_tile, &mut out);
            }
        }
        out
    }

    /// Evaluate every function of `lut` on `ct` with one blind rotation: one ciphertext per
    /// function, each with an ordinary bootstrap's noise. The input must hold a value in
    /// `0..=lut.max_value()` (outputs for larger values are not defined).
    ///
    /// # Errors
    /// Identity, dimension and encoding errors as [`ServerKey::apply_lut`]; a table built for
    /// another set.
    pub fn apply_many_lut(
        &self,
        ct: &Ciphertext<T>,
        lut: &ManyLut<T>,
    ) -> Result<Vec<Ciphertext<T>>> {
        let mut v =
            self.apply_many_lut_batch(std::slice::from_ref(ct), lut, &BatchConfig::default())?;
        Ok(v.pop().expect("one input, one result"))
    }

    /// [`ServerKey::apply_many_lut`] on many ciphertexts, batched.
    pub fn apply_many_lut_batch(
        &self,
        cts: &[Ciphertext<T>],
        lut: &ManyLut<T>,
        cfg: &BatchConfig,
    ) -> Result<Vec<Vec<Ciphertext<T>>>> {
        for c in cts {
            self.check(c)?;
            check_encoding(c, Encoding::Integer)?;
        }
        self.check_many_lut(lut)?;
        let inputs: Vec<&[T]> = cts.iter().map(|c| c.lwe.as_slice()).collect();
        let raw = self.many_lut_raw(&inputs, lut, cfg);
        let mut raw = raw.into_iter();
        Ok(cts
            .iter()
            .map(|c| {
                (0..lut.functions())
                    .map(|_| Ciphertext {
                        params_id: c.params_id,
                        key_id: c.key_id,
                        encoding: c.encoding,
                        lwe: LweCiphertext::from_vec(raw.next().expect("k outputs per input")),
                    })
                    .collect()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::ClientKey;
    use crate::noise::estimate;
    use crate::params::{NoiseDistribution, toy};
    use crate::random::Csprng;
    use crate::torus::to_real;

    /// Distinct neighbouring outputs everywhere, so that no box is widened by its neighbour.
    fn f(i: usize, p: u64) -> impl Fn(u64) -> u64 {
        move |x| (x * (2 * i as u64 + 1) + i as u64 + 1) % p
    }

    fn tables(k: usize, d: u64, p: u64) -> Vec<Vec<u64>> {
        (0..k).map(|i| (0..=d).map(f(i, p)).collect()).collect()
    }

    /// For every degree bound and every allowed k, on the 2+2 set and a toy set: the measured
    /// half-width of every used box is a whole ordinary half box `N/(2p)`, and the noise model
    /// gives exactly the ordinary bootstrap's failure probability.
    #[test]
    fn every_used_box_keeps_its_width_and_p_fail_is_unchanged() {
        for params in [TfheParams::preset("2_2", false).unwrap(), toy::u64_small()] {
            let p = params.plaintext_modulus();
            let n = params.polynomial_size;
            let single = estimate(&params);
            for d in 0..p {
                for k in 1..=ManyLut::<u64>::capacity(p, d) {
                    let lut = ManyLut::<u64>::from_tables(&params, d, &tables(k, d, p)).unwrap();
                    assert_eq!(lut.half_width(), n / (2 * p as usize), "d={d} k={k}");
                    let r = lut.noise(&params, 1.0);
                    assert_eq!(r.threshold, single.threshold);
                    assert_eq!(r.log2_p_fail, single.log2_p_fail, "d={d} k={k}");
                }
            }
        }
    }

    /// The measurement is not a tautology: an ordinary table measures `N/(2p)`, and a layout
    /// that splits each box into k sub-boxes would measure k times less.
    #[test]
    fn half_width_measures_the_layout() {
        let params = toy::u64_small();
        let p = params.plaintext_modulus();
        let n = params.polynomial_size;
        let ordinary = ManyLut::<u64>::from_tables(&params, p - 1, &tables(1, p - 1, p)).unwrap();
        assert_eq!(ordinary.test_vector(), Lut::<u64>::from_fn(&params, f(0, p)).test_vector());
        assert_eq!(ordinary.half_width(), n / (2 * p as usize));
        // Sub-box layout for k = 2 on inputs 0..p/2: box x of width N/p holds f_0 then f_1.
        let mut sub = ordinary.clone();
        let box_len = n / p as usize;
        let d: u64 = delta(p);
        let mut raw = vec![0u64; n];
        for x in 0..(p / 2) as usize {
            for (j, r) in raw[x * box_len..(x + 1) * box_len].iter_mut().enumerate() {
                let i = j * 2 / box_len;
                *r = f(i, p)(x as u64).wrapping_mul(d);
            }
        }
        let half = box_len / 4; // half of a sub-box: read at the sub-box centres
        for (j, t) in sub.lut.tv.iter_mut().enumerate() {
            let src = j + half;
            *t = if src < n { raw[src] } else { raw[src - n].wrapping_neg() };
        }
        sub.tables = tables(2, p / 2 - 1, p);
        sub.stride = box_len / 2;
        sub.max_value = p / 2 - 1;
        assert_eq!(sub.half_width(), n / (4 * p as usize));
        assert!(sub.noise(&params, 1.0).log2_p_fail > estimate(&params).log2_p_fail);
    }

    /// Each of the k outputs has the variance of an ordinary bootstrap output (the model's
    /// blind-rotation variance), so it chains like one.
    #[test]
    fn every_output_has_an_ordinary_bootstrap_variance() {
        let params = toy::u64_small();
        let model = estimate(&params);
        let mut rng = Csprng::from_seed(61);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let p = params.plaintext_modulus();
        let (d, k) = (1, 4);
        let lut = ManyLut::<u64>::from_tables(&params, d, &tables(k, d, p)).unwrap();
        let big = ck.glwe_sk.as_lwe_key();
        let trials = 300;
        let msgs: Vec<u64> = (0..trials).map(|t| t % (d + 1)).collect();
        let small: Vec<Vec<u64>> = msgs
            .iter()
            .map(|&m| ck.lwe_sk.encrypt(m.wmul(delta::<u64>(p)), params.lwe_noise, &mut rng).data)
            .collect();
        let ins: Vec<&[u64]> = small.iter().map(|v| v.as_slice()).collect();
        let mut outs = vec![Vec::new(); ins.len() * k];
        many_lut_pbs_batch(&ins, &lut, &sk.bsk, &BatchConfig::default(), &mut outs);
        for i in 0..k {
            let mut sum2 = 0.0;
            for (j, &m) in msgs.iter().enumerate() {
                let mu = lut.table(i)[m as usize].wmul(delta::<u64>(p));
                let out = LweCiphertext::from_vec(outs[j * k + i].clone());
                let e = to_real(big.phase(&out).wsub(mu));
                sum2 += e * e;
            }
            let ratio = sum2 / trials as f64 / model.blind_rotate_var;
            eprintln!("output {i}: variance / model = {ratio:.3}");
            assert!((0.7..1.4).contains(&ratio), "output {i}: ratio {ratio}");
        }
    }

    /// On a set noisy enough to fail a few percent of the time, the rate at which *any* of the
    /// k outputs is wrong matches the model's single-bootstrap p_fail.
    #[test]
    fn failure_rate_matches_the_ordinary_model_on_a_noisy_set() {
        let mut lit = toy::literal(64, 128, 512, (16, 2), (4, 5), 4, 2, AtomicPattern::KsPbs);
        lit.lwe_noise = NoiseDistribution::Gaussian { std_dev: 6.0e-5 };
        let params = TfheParams::from_literal(lit, true).unwrap();
        let p = params.plaintext_modulus();
        let (d, k) = (p / 2 - 1, 2);
        let lut = ManyLut::<u64>::from_tables(&params, d, &tables(k, d, p)).unwrap();
        let expected = lut.noise(&params, 1.0).log2_p_fail.exp2();
        assert_eq!(expected, estimate(&params).log2_p_fail.exp2());
        assert!((0.01..0.2).contains(&expected), "p_fail {expected}");
        let mut rng = Csprng::from_seed(62);
        let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
        let sk = ck.server_key_with(&mut rng);
        let trials = 1500u64;
        let msgs: Vec<u64> = (0..trials).map(|_| rng.next_u64() % (d + 1)).collect();
        let cts: Vec<_> = msgs.iter().map(|&m| ck.encrypt_with(m, &mut rng).unwrap()).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let outs =
            pool.install(|| sk.apply_many_lut_batch(&cts, &lut, &BatchConfig::default())).unwrap();
        let mut fails = 0u64;
        for (o, &m) in outs.iter().zip(&msgs) {
            let wrong = (0..k).any(|i| ck.decrypt(&o[i]).unwrap() != lut.table(i)[m as usize]);
            fails += wrong as u64;
        }
        let rate = fails as f64 / trials as f64;
        eprintln!("many-LUT failure rate: measured {rate} ({fails}/{trials}), model {expected}");
        assert!(
            rate > expected / 2.0 && rate < expected * 2.0,
            "measured {rate}, model {expected}"
        );
    }
}
