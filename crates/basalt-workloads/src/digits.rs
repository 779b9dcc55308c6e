//! Real data for the workloads, with no network: scikit-learn's bundled digits (1,797 images of
//! 8×8, 17 grey levels; the UCI optical digits, BSD-3-Clause) and the weights trained on them,
//! as `scripts/train_weights.py` writes them under `data/weights/` (provenance in
//! `data/weights/provenance.json`). Both are compiled in, so the CLI needs neither Python nor
//! the checkout at run time.
//!
//! The papers' inputs are larger than 8×8, so the images are resized as the training script
//! does: [`to28`] (each pixel a 3×3 block, 2 zero pixels of padding per side) for LoLa and the
//! MLP, [`to14`] (each pixel a 2×2 block, the outer ring cropped) for HELR's 14×14 MNIST.

use crate::network::{Layer, Network};

const DIGITS: &[u8] = include_bytes!("../../../data/weights/digits.bin");
const MLP: &[u8] = include_bytes!("../../../data/weights/mlp.bin");
const LOLA: &[u8] = include_bytes!("../../../data/weights/lola.bin");

/// One 8×8 image (grey levels 0..=16, row-major) and its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digit {
    pub pixels: [u8; 64],
    pub label: u8,
}

/// The shuffled set, split as the training script split it.
#[derive(Clone, Debug)]
pub struct Digits {
    pub train: Vec<Digit>,
    pub test: Vec<Digit>,
}

/// A malformed embedded file (a build from a corrupted checkout).
#[derive(Debug, thiserror::Error)]
#[error("malformed {file}: {reason}")]
pub struct DataError {
    pub file: &'static str,
    pub reason: String,
}

fn bad(file: &'static str, reason: impl Into<String>) -> DataError {
    DataError { file, reason: reason.into() }
}

/// The digits, train and test split.
///
/// # Errors
/// A malformed `digits.bin`.
pub fn load() -> Result<Digits, DataError> {
    parse_digits(DIGITS)
}

fn parse_digits(b: &[u8]) -> Result<Digits, DataError> {
    const F: &str = "data/weights/digits.bin";
    let body = b.strip_prefix(b"BDIGITS1").ok_or_else(|| bad(F, "no BDIGITS1 magic"))?;
    if body.len() < 4 {
        return Err(bad(F, "truncated header"));
    }
    let n_train = u16::from_le_bytes([body[0], body[1]]) as usize;
    let n_test = u16::from_le_bytes([body[2], body[3]]) as usize;
    let rest = &body[4..];
    if rest.len() != (n_train + n_test) * 65 {
        return Err(bad(F, format!("{} bytes for {} images", rest.len(), n_train + n_test)));
    }
    let mut all = Vec::with_capacity(n_train + n_test);
    for rec in rest.chunks_exact(65) {
        let mut pixels = [0u8; 64];
        pixels.copy_from_slice(&rec[..64]);
        if pixels.iter().any(|&p| p > 16) || rec[64] > 9 {
            return Err(bad(F, "a pixel above 16 or a label above 9"));
        }
        all.push(Digit { pixels, label: rec[64] });
    }
    let test = all.split_off(n_train);
    Ok(Digits { train: all, test })
}

/// 28×28 in `[0, 1]`: each pixel a 3×3 block (24×24), 2 zero pixels of padding per side.
pub fn to28(d: &Digit) -> Vec<f64> {
    (0..28 * 28)
        .map(|t| {
            let (r, c) = (t / 28, t % 28);
            if (2..26).contains(&r) && (2..26).contains(&c) {
                f64::from(d.pixels[(r - 2) / 3 * 8 + (c - 2) / 3]) / 16.0
            } else {
                0.0
            }
        })
        .collect()
}

/// 14×14 in `[0, 1]`: each pixel a 2×2 block (16×16), the outer ring cropped.
pub fn to14(d: &Digit) -> Vec<f64> {
    (0..14 * 14)
        .map(|t| {
            let (r, c) = (t / 14 + 1, t % 14 + 1);
            f64::from(d.pixels[r / 2 * 8 + c / 2]) / 16.0
        })
        .collect()
}

/// 4×4 in `[0, 1]`: the mean of each 2×2 block (the toy size of the `--quick` runs).
pub fn to4(d: &Digit) -> Vec<f64> {
    (0..16)
        .map(|t| {
            let (r, c) = (2 * (t / 4), 2 * (t % 4));
            let s: u32 = [(0, 0), (0, 1), (1, 0), (1, 1)]
                .iter()
                .map(|(i, j)| u32::from(d.pixels[(r + i) * 8 + c + j]))
                .sum();
            f64::from(s) / 64.0
        })
        .collect()
}

/// One stored array: its shape and values.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
}

/// IEEE half precision to `f64` (the weights are stored rounded to it).
fn half(bits: u16) -> f64 {
    let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 => {
            if frac == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The arrays of a `BWEIGHT1` file.
///
/// # Errors
/// A truncated file, a bad magic or a non-finite weight.
pub fn parse_weights(file: &'static str, b: &[u8]) -> Result<Vec<Array>, DataError> {
    let mut at = b.strip_prefix(b"BWEIGHT1").ok_or_else(|| bad(file, "no BWEIGHT1 magic"))?;
    let u32_ = |at: &mut &[u8]| -> Result<usize, DataError> {
        let (h, t) = at.split_at_checked(4).ok_or_else(|| bad(file, "truncated"))?;
        *at = t;
        Ok(u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize)
    };
    let count = u32_(&mut at)?;
    let mut out = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let rank = u32_(&mut at)?;
        let shape = (0..rank).map(|_| u32_(&mut at)).collect::<Result<Vec<_>, _>>()?;
        let n: usize = shape.iter().product();
        let (data, t) = at.split_at_checked(2 * n).ok_or_else(|| bad(file, "truncated"))?;
        at = t;
        let values: Vec<f64> =
            data.chunks_exact(2).map(|h| half(u16::from_le_bytes([h[0], h[1]]))).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(bad(file, "a weight is not finite"));
        }
        out.push(Array { shape, values });
    }
    if !at.is_empty() {
        return Err(bad(file, "trailing bytes"));
    }
    Ok(out)
}

/// Check the shapes of `arrays` against `want`.
fn expect_shapes(file: &'static str, arrays: &[Array], want: &[&[usize]]) -> Result<(), DataError> {
    let have: Vec<&[usize]> = arrays.iter().map(|a| a.shape.as_slice()).collect();
    if have != want {
        return Err(bad(file, format!("shapes {have:?}, expected {want:?}")));
    }
    Ok(())
}

fn rows(a: &Array) -> Vec<Vec<f64>> {
    a.values.chunks(a.shape[1]).map(<[f64]>::to_vec).collect()
}

/// SecureML's MLP (784-128-128-10, squares) with the trained weights.
///
/// # Errors
/// A malformed `mlp.bin`.
pub fn trained_mlp() -> Result<Network, DataError> {
    const F: &str = "data/weights/mlp.bin";
    let a = parse_weights(F, MLP)?;
    expect_shapes(F, &a, &[&[128, 784], &[128], &[128, 128], &[128], &[10, 128], &[10]])?;
    let dense = |k: usize| Layer::Dense { w: rows(&a[k]), b: a[k + 1].values.clone() };
    Ok(Network {
        name: "MLP (SecureML), trained on digits",
        input_slots: 1024,
        layers: vec![dense(0), Layer::Square, dense(2), Layer::Square, dense(4)],
    })
}

/// LoLa-CryptoNets' MNIST network with the trained weights: the convolution's 5 maps of 5×5
/// as the pointwise layer on the convolution representation ([`crate::mnist::lola`]'s packing).
///
/// # Errors
/// A malformed `lola.bin`.
pub fn trained_lola() -> Result<Network, DataError> {
    const F: &str = "data/weights/lola.bin";
    let a = parse_weights(F, LOLA)?;
    expect_shapes(F, &a, &[&[5, 25], &[5], &[100, 845], &[100], &[10, 100], &[10]])?;
    let (k, kb) = (rows(&a[0]), &a[1].values);
    let w = (0..25).map(|o| (0..845).map(|t| k[t / 169][o]).collect()).collect();
    let b = (0..845).map(|t| kb[t / 169]).collect();
    let dense = |k: usize| Layer::Dense { w: rows(&a[k]), b: a[k + 1].values.clone() };
    Ok(Network {
        name: "LoLa-CryptoNets MNIST, trained on digits",
        input_slots: 1024,
        layers: vec![Layer::Pointwise { w, b }, Layer::Square, dense(2), Layer::Square, dense(4)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_decodes() {
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x3555), 0.333251953125);
        assert_eq!(half(0x0001), 2f64.powi(-24));
        assert!(half(0x7e00).is_nan());
    }

    #[test]
    fn the_split_is_the_scripts() {
        let d = load().expect("embedded digits");
        assert_eq!((d.train.len(), d.test.len()), (1347, 450));
        for k in 0..10 {
            assert!(d.test.iter().any(|x| x.label == k), "class {k} in the test split");
        }
    }

    #[test]
    fn resizing_keeps_the_pixels() {
        let mut pixels = [0u8; 64];
        pixels.iter_mut().enumerate().for_each(|(i, p)| *p = (i % 17) as u8);
        let d = Digit { pixels, label: 3 };
        let (a, b) = (to28(&d), to14(&d));
        assert_eq!(a[2 * 28 + 2], 0.0);
        assert_eq!(a[(2 + 3 * 7 + 2) * 28 + 2 + 3 * 5], f64::from(pixels[7 * 8 + 5]) / 16.0);
        assert_eq!(a[27 * 28 + 27], 0.0);
        assert_eq!(b[0], f64::from(pixels[0]) / 16.0);
        assert_eq!(b[13 * 14 + 13], f64::from(pixels[63]) / 16.0);
        assert_eq!(to4(&d)[0], f64::from(pixels[0] + pixels[1] + pixels[8] + pixels[9]) / 64.0);
    }

    #[test]
    fn malformed_files_are_refused() {
        assert!(parse_weights("x", b"BWEIGHT1\x01\0\0\0\x01\0\0\0\x04\0\0\0\0").is_err());
        assert!(parse_weights("x", b"nope").is_err());
        assert!(parse_digits(b"BDIGITS1\x01\0\0\0").is_err());
        assert!(trained_mlp().is_ok() && trained_lola().is_ok());
    }
}
