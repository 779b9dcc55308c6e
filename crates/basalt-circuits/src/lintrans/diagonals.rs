//! Plaintext matrices as maps of non-zero generalised diagonals, and their cleartext twin.
//!
//! For `s` slots, diagonal `k ∈ [0, s)` of an `s×s` matrix `M` is
//! `d_k[t] = M[t][(t + k) mod s]` (Halevi–Shoup), so that `M·x = Σ_k d_k ⊙ rot_k(x)` with
//! `rot_k` the left rotation by `k`. A rectangular `m×n` matrix with `m, n ≤ s` is embedded in
//! the top-left corner of an `s×s` zero matrix (the input is zero-padded to `s` slots).
//!
//! # Source
//! Halevi & Shoup, "Algorithms in HElib", CRYPTO 2014, §4.3; Lattigo `lintrans.Diagonals`.

use std::collections::BTreeMap;

use num_complex::Complex64;

use crate::error::{CircuitError, Result};

const ZERO: Complex64 = Complex64 { re: 0.0, im: 0.0 };

/// Left rotation of a slot vector by `k` (right for `k < 0`): `out[t] = v[(t + k) mod len]`.
pub fn rotate_slots<T: Copy>(v: &[T], k: i64) -> Vec<T> {
    let n = v.len() as i64;
    (0..n).map(|t| v[(t + k).rem_euclid(n) as usize]).collect()
}

/// The non-zero diagonals of an `s×s` matrix over `s` slots.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagonals {
    slots: usize,
    diags: BTreeMap<usize, Vec<Complex64>>,
}

impl Diagonals {
    /// From a map `index → values`. Indices may be negative (`-s < k < s`, `k` and `k + s` are
    /// the same diagonal); a vector shorter than `s` is zero-padded.
    ///
    /// # Errors
    /// [`CircuitError::DiagonalOutOfRange`], [`CircuitError::DiagonalTooLong`],
    /// [`CircuitError::EmptyMatrix`], [`CircuitError::Invalid`] (slots not a power of two).
    pub fn from_map(slots: usize, map: BTreeMap<i64, Vec<Complex64>>) -> Result<Diagonals> {
        check_slots(slots)?;
        let mut diags = BTreeMap::new();
        for (k, v) in map {
            if k <= -(slots as i64) || k >= slots as i64 {
                return Err(CircuitError::DiagonalOutOfRange { index: k, slots });
            }
            if v.len() > slots {
                return Err(CircuitError::DiagonalTooLong { index: k, len: v.len(), slots });
            }
            let idx = k.rem_euclid(slots as i64) as usize;
            let e: &mut Vec<Complex64> = diags.entry(idx).or_insert_with(|| vec![ZERO; slots]);
            e.iter_mut().zip(&v).for_each(|(a, b)| *a += b);
        }
        diags.retain(|_, v: &mut Vec<Complex64>| v.iter().any(|z| *z != ZERO));
        if diags.is_empty() {
            return Err(CircuitError::EmptyMatrix);
        }
        Ok(Diagonals { slots, diags })
    }

    /// From a dense row-major `m×n` complex matrix, `m, n ≤ slots` (zero-padded).
    ///
    /// # Errors
    /// [`CircuitError::MatrixTooLarge`], [`CircuitError::RaggedMatrix`],
    /// [`CircuitError::EmptyMatrix`].
    pub fn from_dense(rows: &[Vec<Complex64>], slots: usize) -> Result<Diagonals> {
        check_slots(slots)?;
        let m = rows.len();
        let n = rows.first().map_or(0, Vec::len);
        if let Some(r) = rows.iter().find(|r| r.len() != n) {
            return Err(CircuitError::RaggedMatrix { first: n, other: r.len() });
        }
        if m > slots || n > slots {
            return Err(CircuitError::MatrixTooLarge { rows: m, cols: n, slots });
        }
        let mut diags = BTreeMap::new();
        for k in 0..slots {
            let d: Vec<Complex64> = (0..slots)
                .map(|t| {
                    let c = (t + k) % slots;
                    if t < m && c < n { rows[t][c] } else { ZERO }
                })
                .collect();
            if d.iter().any(|z| *z != ZERO) {
                diags.insert(k, d);
            }
        }
        if diags.is_empty() {
            return Err(CircuitError::EmptyMatrix);
        }
        Ok(Diagonals { slots, diags })
    }

    /// From a dense row-major real matrix.
    pub fn from_dense_real(rows: &[Vec<f64>], slots: usize) -> Result<Diagonals> {
        let c: Vec<Vec<Complex64>> =
            rows.iter().map(|r| r.iter().map(|&x| Complex64::new(x, 0.0)).collect()).collect();
        Self::from_dense(&c, slots)
    }

    pub fn slots(&self) -> usize {
        self.slots
    }
    /// Indices of the non-zero diagonals, ascending in `[0, slots)`.
    pub fn indices(&self) -> Vec<usize> {
        self.diags.keys().copied().collect()
    }
    /// Number of non-zero diagonals.
    pub fn len(&self) -> usize {
        self.diags.len()
    }
    pub fn is_empty(&self) -> bool {
        self.diags.is_empty()
    }
    pub fn get(&self, k: usize) -> Option<&[Complex64]> {
        self.diags.get(&k).map(Vec::as_slice)
    }
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[Complex64])> {
        self.diags.iter().map(|(&k, v)| (k, v.as_slice()))
    }

    /// Cleartext twin: `Σ_k d_k ⊙ rot_k(x)` on a plain vector (`x` zero-padded to the slots).
    ///
    /// # Errors
    /// [`CircuitError::VectorLength`] if `x` is longer than the slots.
    pub fn evaluate_plain(&self, x: &[Complex64]) -> Result<Vec<Complex64>> {
        if x.len() > self.slots {
            return Err(CircuitError::VectorLength { len: x.len(), cols: self.slots });
        }
        let mut xs = x.to_vec();
        xs.resize(self.slots, ZERO);
        let mut y = vec![ZERO; self.slots];
        for (k, d) in self.iter() {
            let r = rotate_slots(&xs, k as i64);
            y.iter_mut().zip(d.iter().zip(&r)).for_each(|(o, (a, b))| *o += a * b);
        }
        Ok(y)
    }
}

fn check_slots(slots: usize) -> Result<()> {
    if slots == 0 || !slots.is_power_of_two() {
        return Err(CircuitError::Invalid(format!("slot count {slots} must be a power of two")));
    }
    Ok(())
}

/// Dense `y = M·x` in f64 (numpy's `M @ x`), the reference for every matrix test.
pub fn dense_matvec(rows: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
    rows.iter().map(|r| r.iter().zip(x).map(|(a, b)| a * b).sum()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twin_matches_dense_matvec_rectangular() {
        let m: Vec<Vec<f64>> =
            (0..5).map(|i| (0..7).map(|j| (i * 7 + j) as f64 * 0.1 - 1.0).collect()).collect();
        let x: Vec<f64> = (0..7).map(|j| j as f64 * 0.3 - 0.5).collect();
        let d = Diagonals::from_dense_real(&m, 8).unwrap();
        let xc: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        let y = d.evaluate_plain(&xc).unwrap();
        let want = dense_matvec(&m, &x);
        for (i, w) in want.iter().enumerate() {
            assert!((y[i].re - w).abs() < 1e-12, "row {i}");
        }
        assert!(y[5..].iter().all(|z| z.norm() < 1e-12));
    }

    #[test]
    fn bad_inputs_are_named() {
        let big = vec![vec![1.0; 9]; 2];
        assert_eq!(
            Diagonals::from_dense_real(&big, 8),
            Err(CircuitError::MatrixTooLarge { rows: 2, cols: 9, slots: 8 })
        );
        let mut map = BTreeMap::new();
        map.insert(8, vec![Complex64::new(1.0, 0.0)]);
        assert_eq!(
            Diagonals::from_map(8, map),
            Err(CircuitError::DiagonalOutOfRange { index: 8, slots: 8 })
        );
        let mut map = BTreeMap::new();
        map.insert(-3, vec![Complex64::new(1.0, 0.0); 8]);
        assert_eq!(Diagonals::from_map(8, map).unwrap().indices(), vec![5]);
    }
}
