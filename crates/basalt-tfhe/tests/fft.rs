//! Claims T4/T5: folded negacyclic FFT products and split accumulation against the exact
//! O(N²) schoolbook product (wrapping integer arithmetic).

use basalt_tfhe::decompose::StreamingDecomposer;
use basalt_tfhe::external_product::{
    ExternalProductShape, ExternalProductWorkspace, external_product_add,
};
use basalt_tfhe::fft::{NegacyclicFft, schoolbook_negacyclic};
use basalt_tfhe::ggsw::GgswCiphertext;
use basalt_tfhe::glwe::GlweSecretKey;
use basalt_tfhe::params::NoiseDistribution;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::torus::Torus;
use dyn_stack::PodStack;
use tfhe_fft::c64;

/// FFT product of a torus polynomial and a small-digit polynomial.
fn fft_product<T: Torus>(fft: &NegacyclicFft, a: &[T], d: &[T]) -> Vec<T> {
    let m = a.len() / 2;
    let mut mem = fft.new_scratch();
    let stack = PodStack::new(&mut mem);
    let mut fa = vec![c64::default(); m];
    let mut fd = vec![c64::default(); m];
    fft.forward(&mut fa, a, stack);
    fft.forward(&mut fd, d, stack);
    for (x, y) in fa.iter_mut().zip(&fd) {
        *x *= *y;
    }
    let mut out = vec![T::ZERO; a.len()];
    fft.backward_set(&mut out, &mut fa, stack);
    out
}

fn random_digits<T: Torus>(rng: &mut Csprng, n: usize, base_log: u32) -> Vec<T> {
    (0..n)
        .map(|_| {
            let v = (rng.next_u64() % (1 << base_log)) as i64 - (1i64 << (base_log - 1));
            T::from_i64(v)
        })
        .collect()
}

/// Stated bound for the 64-bit torus: |err| ≤ 2^(w−53) · (B/2) · N · log2 N (f64 relative
/// precision times ‖a‖·‖d‖ with a log N growth factor; the typical error is ~2^6 smaller).
fn bound64(n: usize, base_log: u32) -> f64 {
    2f64.powi(64 - 53) * 2f64.powi(base_log as i32 - 1) * n as f64 * (n as f64).log2()
}

fn max_err<T: Torus>(x: &[T], y: &[T]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a.wsub(*b).to_signed_f64().abs()).fold(0.0, f64::max)
}

#[test]
fn folded_fft_product_u64_within_bound_1024_to_16384() {
    let mut rng = Csprng::from_seed(21);
    for log_n in 10..=14 {
        let n = 1usize << log_n;
        let fft = NegacyclicFft::new(n);
        for base_log in [10u32, 23] {
            let mut a = vec![0u64; n];
            rng.fill_uniform(&mut a);
            let d: Vec<u64> = random_digits(&mut rng, n, base_log);
            let got = fft_product(&fft, &a, &d);
            let want = schoolbook_negacyclic(&a, &d);
            let err = max_err(&got, &want);
            let b = bound64(n, base_log);
            assert!(
                err <= b,
                "N={n} B=2^{base_log}: max err 2^{:.1} > bound 2^{:.1}",
                err.log2(),
                b.log2()
            );
            eprintln!(
                "T4 N={n} B=2^{base_log}: max err 2^{:.1}, bound 2^{:.1}",
                err.max(1.0).log2(),
                b.log2()
            );
        }
    }
}

#[test]
fn folded_fft_product_u32_is_exact() {
    // 32-bit torus, 10-bit digits: |product| < 2^(31+9+11), f64 error ≪ 1/2, so the rounded
    // FFT result must equal the schoolbook product exactly.
    let mut rng = Csprng::from_seed(22);
    for log_n in 10..=11 {
        let n = 1usize << log_n;
        let fft = NegacyclicFft::new(n);
        let mut a = vec![0u32; n];
        rng.fill_uniform(&mut a);
        let d: Vec<u32> = random_digits(&mut rng, n, 10);
        assert_eq!(fft_product(&fft, &a, &d), schoolbook_negacyclic(&a, &d), "N={n}");
    }
}

#[test]
fn exact_limb_product_matches_schoolbook_16384() {
    let mut rng = Csprng::from_seed(23);
    let n = 16384;
    let fft = NegacyclicFft::new(n);
    let mut a = vec![0u64; n];
    rng.fill_uniform(&mut a);
    let s: Vec<u64> = (0..n).map(|_| rng.next_u64() & 1).collect();
    let mut got = vec![0u64; n];
    fft.mul_exact_small(&a, &s, &mut got);
    assert_eq!(got, schoolbook_negacyclic(&a, &s));
}

/// T5: split accumulation (PLP-wide frequency-domain partial sums, one IFFT each, then time-
/// domain accumulation) equals full frequency-domain accumulation and the exact external
/// product up to FFT rounding.
#[test]
fn split_accumulation_matches_exact_external_product() {
    let mut rng = Csprng::from_seed(24);
    let (k, n, base_log, level) = (1usize, 1024usize, 15u32, 2usize);
    let sk = GlweSecretKey::<u64>::generate(k, n, &mut rng);
    let ggsw = GgswCiphertext::encrypt(
        &sk,
        1,
        base_log,
        level,
        NoiseDistribution::TUniform { bound_log2: 17 },
        &mut rng,
    );
    let fft = NegacyclicFft::new(n);
    let mut fg = vec![c64::default(); (k + 1) * level * (k + 1) * n / 2];
    ggsw.to_fourier(&fft, &mut fg);
    let mut input = vec![0u64; (k + 1) * n];
    rng.fill_uniform(&mut input);
    // Exact reference: Σ_r schoolbook(digit_r, row_r[c]) with the reference decomposition.
    let dec = StreamingDecomposer::new(base_log, level);
    let rows = (k + 1) * level;
    let mut digits = vec![0u64; rows * n];
    for c in 0..=k {
        dec.decompose_poly(
            &input[c * n..(c + 1) * n],
            &mut digits[c * level * n..(c + 1) * level * n],
        );
    }
    let mut exact = vec![0u64; (k + 1) * n];
    for r in 0..rows {
        for c in 0..=k {
            let row = &ggsw.rows()[r].as_slice()[c * n..(c + 1) * n];
            let p = schoolbook_negacyclic(&digits[r * n..(r + 1) * n], row);
            for (o, x) in exact[c * n..(c + 1) * n].iter_mut().zip(p) {
                *o = o.wrapping_add(x);
            }
        }
    }
    let mut results = Vec::new();
    for group in [1, 2, rows] {
        let shape = ExternalProductShape { k, decomposer: dec, group };
        let mut ws = ExternalProductWorkspace::new(&fft, k, level);
        let mut out = vec![0u64; (k + 1) * n];
        external_product_add(&mut out, &fg, &input, shape, &fft, &mut ws, &[]);
        let err = max_err(&out, &exact);
        let b = bound64(n, base_log) * rows as f64;
        assert!(err <= b, "group {group}: err 2^{:.1} > 2^{:.1}", err.log2(), b.log2());
        eprintln!(
            "T5 group={group}: IFFTs/product = {}, max err vs exact 2^{:.1}",
            (k + 1) * rows.div_ceil(group),
            err.max(1.0).log2()
        );
        results.push(out);
    }
    // Strix's PLP = 2 for k = 1: (k+1)·l FFTs and (k+1)·⌈(k+1)l/2⌉ = 2·l IFFTs — a 1:1 ratio.
    assert_eq!((k + 1) * rows.div_ceil(2), 2 * level);
    let d = max_err(&results[1], &results[2]);
    assert!(d <= 2.0 * bound64(n, base_log) * rows as f64);
}

/// The fused decomposition + forward transform of one level equals decomposing the polynomial
/// and transforming that level's digit polynomial, bit for bit, on both torus widths.
#[test]
fn forward_of_one_digit_level_equals_decompose_then_forward() {
    fn check<T: Torus>(rng: &mut Csprng, n: usize, base_log: u32, level: usize) {
        let fft = NegacyclicFft::new(n);
        let m = n / 2;
        let mut mem = fft.new_scratch();
        let stack = PodStack::new(&mut mem);
        let mut a = vec![T::ZERO; n];
        rng.fill_uniform(&mut a);
        let dec = StreamingDecomposer::new(base_log, level);
        let mut digits = vec![T::ZERO; level * n];
        dec.decompose_poly(&a, &mut digits);
        for j in 0..level {
            let mut want = vec![c64::default(); m];
            fft.forward(&mut want, &digits[j * n..(j + 1) * n], stack);
            let mut got = vec![c64::default(); m];
            fft.forward_digits(&mut got, &a, dec.digit_level::<T>(j + 1), stack);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(x, y)| x.re.to_bits() == y.re.to_bits()
                        && x.im.to_bits() == y.im.to_bits()),
                "B=2^{base_log} l={level} level {}",
                j + 1
            );
        }
    }
    let mut rng = Csprng::from_seed(31);
    for (b, l) in [(23u32, 1usize), (15, 2), (10, 3), (4, 4)] {
        check::<u64>(&mut rng, 256, b, l);
    }
    for (b, l) in [(10u32, 2usize), (7, 3), (16, 1)] {
        check::<u32>(&mut rng, 128, b, l);
    }
}
