//! Precision statistics in bits, as Lattigo's `GetPrecisionStats` reports them.
//!
//! For each slot the absolute error `|want − have|` is taken for the real part, the imaginary
//! part and the complex value (L2), and its precision is `−log2(error)`. `min` is the worst
//! slot's precision, `max` the best's, `median` the median slot's, and `mean` the **mean of the
//! per-slot precisions** — Lattigo v6's `AVGLog2Prec` (`schemes/ckks/precision.go`). Because
//! −log2 is convex, that mean is never below `−log2(mean error)`, which we also report as the
//! stricter `mean_error` (for Rayleigh-distributed complex errors the two differ by ≈0.24 bit).
//! Errors are floored at 2^-60 so exact results read as 60 bits rather than infinity.
//!
//! Lattigo v6.2's L2 statistic is not comparable: it adds the real error's square twice
//! (`errL2.Add(errL2, tmp.Mul(errReal, errReal))`), so its "L2" is `√2·|real error|`, i.e. its
//! real precision minus 0.5 bit. Compare against Lattigo with the `real` (and `imag`) fields.

use num_complex::Complex64;
use serde::{Deserialize, Serialize};

/// Bits of precision for the real part, the imaginary part and the complex value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bits {
    pub real: f64,
    pub imag: f64,
    pub l2: f64,
}

/// Min, max, mean and median precision (bits) over the slots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrecisionStats {
    pub min: Bits,
    pub max: Bits,
    /// Mean of the per-slot precisions (Lattigo's `AVGLog2Prec`).
    pub mean: Bits,
    pub median: Bits,
    /// `−log2(mean error)`: at most `mean`.
    pub mean_error: Bits,
    pub slots: usize,
}

const FLOOR: f64 = 8.673617379884035e-19; // 2^-60

fn bits(err: f64) -> f64 {
    -(err.max(FLOOR)).log2()
}

/// (min, max, mean, median, mean_error) precision of one component's per-slot errors.
fn stats_of(mut e: Vec<f64>) -> [f64; 5] {
    if e.is_empty() {
        return [0.0; 5];
    }
    e.sort_by(f64::total_cmp);
    let n = e.len();
    let mean_bits = e.iter().map(|&x| bits(x)).sum::<f64>() / n as f64;
    let mean_err = e.iter().sum::<f64>() / n as f64;
    let median = if n % 2 == 1 { e[n / 2] } else { (e[n / 2 - 1] + e[n / 2]) / 2.0 };
    [bits(e[n - 1]), bits(e[0]), mean_bits, bits(median), bits(mean_err)]
}

impl PrecisionStats {
    /// Compare `have` against the reference `want` over their common length.
    pub fn new(want: &[Complex64], have: &[Complex64]) -> PrecisionStats {
        let pairs = want.iter().zip(have);
        let re: Vec<f64> = pairs.clone().map(|(a, b)| (a.re - b.re).abs()).collect();
        let im: Vec<f64> = pairs.clone().map(|(a, b)| (a.im - b.im).abs()).collect();
        let l2: Vec<f64> = pairs.map(|(a, b)| (a - b).norm()).collect();
        let slots = re.len();
        let (r, i, c) = (stats_of(re), stats_of(im), stats_of(l2));
        let pick = |k: usize| Bits { real: r[k], imag: i[k], l2: c[k] };
        PrecisionStats {
            min: pick(0),
            max: pick(1),
            mean: pick(2),
            median: pick(3),
            mean_error: pick(4),
            slots,
        }
    }

    /// Real-valued comparison.
    pub fn new_real(want: &[f64], have: &[f64]) -> PrecisionStats {
        let w: Vec<Complex64> = want.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        let h: Vec<Complex64> = have.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        Self::new(&w, &h)
    }
}

impl std::fmt::Display for PrecisionStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "precision (bits, real/imag/l2): min {:.2}/{:.2}/{:.2}, mean {:.2}/{:.2}/{:.2}, median {:.2}/{:.2}/{:.2}, max {:.2}/{:.2}/{:.2}",
            self.min.real,
            self.min.imag,
            self.min.l2,
            self.mean.real,
            self.mean.imag,
            self.mean.l2,
            self.median.real,
            self.median.imag,
            self.median.l2,
            self.max.real,
            self.max.imag,
            self.max.l2
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_minus_log2_of_errors() {
        let want = [Complex64::new(1.0, 1.0); 4];
        let have = [
            Complex64::new(1.0 + 2f64.powi(-10), 1.0),
            Complex64::new(1.0 + 2f64.powi(-20), 1.0 - 2f64.powi(-30)),
            Complex64::new(1.0 + 2f64.powi(-20), 1.0),
            Complex64::new(1.0 + 2f64.powi(-30), 1.0),
        ];
        let s = PrecisionStats::new(&want, &have);
        assert!((s.min.real - 10.0).abs() < 1e-9);
        assert!((s.max.real - 30.0).abs() < 1e-6);
        assert!((s.median.real - 20.0).abs() < 1e-6);
        assert!((s.max.imag - 60.0).abs() < 1e-9);
        assert!((s.min.imag - 30.0).abs() < 1e-9);
        // Mean of the per-slot precisions (10 + 20 + 20 + 30) / 4 = 20 (Lattigo's AVGLog2Prec);
        // −log2 of the mean error is dominated by the 2^-10 slot.
        assert!((s.mean.real - 20.0).abs() < 1e-6);
        assert!(s.mean_error.real > 11.0 && s.mean_error.real < 12.0);
        assert!(s.mean_error.l2 <= s.mean.l2);
    }
}
