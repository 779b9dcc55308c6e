//! Precision statistics in bits, as Lattigo's `GetPrecisionStats` reports them.
//!
//! For each slot the absolute error `|want − have|` is taken for the real part, the imaginary
//! part and the complex value (L2). Each statistic is `−log2` of an error: `min` precision is
//! `−log2(max error)`, `max` precision `−log2(min error)`, `mean` is `−log2(mean error)` and
//! `median` `−log2(median error)`. Errors are floored at 2^-60 so exact results read as 60 bits
//! rather than infinity.

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
    pub mean: Bits,
    pub median: Bits,
    pub slots: usize,
}

const FLOOR: f64 = 8.673617379884035e-19; // 2^-60

fn bits(err: f64) -> f64 {
    -(err.max(FLOOR)).log2()
}

fn stats_of(mut e: Vec<f64>) -> (f64, f64, f64, f64) {
    if e.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    e.sort_by(f64::total_cmp);
    let n = e.len();
    let mean = e.iter().sum::<f64>() / n as f64;
    let median = if n % 2 == 1 { e[n / 2] } else { (e[n / 2 - 1] + e[n / 2]) / 2.0 };
    (bits(e[n - 1]), bits(e[0]), bits(mean), bits(median))
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
        PrecisionStats {
            min: Bits { real: r.0, imag: i.0, l2: c.0 },
            max: Bits { real: r.1, imag: i.1, l2: c.1 },
            mean: Bits { real: r.2, imag: i.2, l2: c.2 },
            median: Bits { real: r.3, imag: i.3, l2: c.3 },
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
        assert!(s.mean.real > 11.0 && s.mean.real < 12.0);
    }
}
