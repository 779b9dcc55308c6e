//! Rectangular `m×n` products as HE-MxV does them: Gazelle's hybrid diagonal packing,
//! rotate-and-sum, column blocks for `n > slots`, power-of-two padding of `m`.
//!
//! # Algorithm
//! With `s` slots, pad the rows of a block to `m' = 2^⌈log2 m⌉ ≤ s` and cut the columns into
//! blocks of `s` (input block `b` is `x[b·s..(b+1)·s]`, zero-padded, one ciphertext each).
//! 1. Hybrid diagonals of block `b`: `d_i[t] = M[t mod m'][b·s + (t+i) mod s]` for `i < m'`
//!    (zero outside the matrix), so `acc[t] = Σ_i d_i[t]·x[(t+i) mod s]` holds, in slot
//!    `r + c·m'`, the partial sum of row `r` over the `c`-th chunk of `m'` columns.
//! 2. `acc = Σ_b LT_b(x_b)`: each block is a [`super::LinearTransform`] with the `m'`
//!    diagonals `0..m'` (any strategy: the paper's `m'` rotations are
//!    [`super::Strategy::Diagonal`]; BSGS + hoisting needs ≈ 2√m'), the diagonals generated
//!    from the weights at use, never stored.
//! 3. Rotate-and-sum: `acc += rot(acc, s/2^t)` for `t = 1..log2(s/m')`, i.e. `log2 k` rotations
//!    with `k = s/m'` chunks; slot `r` then holds `y_r`.
//! 4. Rows beyond `s` form further row blocks, each an output ciphertext.
//!
//! Rotate-and-sum is linear, so it runs once after accumulation:
//! `m' + log2 k` rotations in the paper's terms instead of `m'·(1 + log2 k)`.
//!
//! # Source
//! Juvekar, Vaikuntanathan, Chandrakasan, "Gazelle", USENIX Security 2018 (hybrid packing);
//! the HE-MxV FPGA paper §III-A.
//!
//! # Cost
//! Per row block: `Σ_b` (cost of one `m'`-diagonal transform) + `log2(s/m')` rotations;
//! `m'·⌈n/s⌉` plaintexts; one level.

use std::sync::Arc;

use basalt_ckks::{Ciphertext, Evaluator, Parameters};
use num_complex::Complex64;

use super::{LinearTransform, Source, Strategy};
use crate::accounting::OpCounts;
use crate::error::{CircuitError, Result};

/// An `m×n` plaintext weight matrix prepared for hybrid-packed products.
#[derive(Clone, Debug)]
pub struct MxvHybrid {
    rows: usize,
    cols: usize,
    slots: usize,
    /// `[row block][column block]`.
    blocks: Vec<Vec<LinearTransform>>,
    /// Padded rows `m'` per row block.
    padded: Vec<usize>,
}

impl MxvHybrid {
    /// Prepare `weights` (row-major, `m×n`) for inputs of `slots` slots at `level`.
    ///
    /// # Errors
    /// [`CircuitError::RaggedMatrix`], [`CircuitError::EmptyMatrix`], level and slot errors of
    /// [`LinearTransform::new`].
    pub fn new(
        params: &Parameters,
        weights: Arc<Vec<Vec<f64>>>,
        slots: usize,
        strategy: Strategy,
        level: usize,
    ) -> Result<MxvHybrid> {
        let m = weights.len();
        let n = weights.first().map_or(0, Vec::len);
        if m == 0 || n == 0 {
            return Err(CircuitError::EmptyMatrix);
        }
        if let Some(r) = weights.iter().find(|r| r.len() != n) {
            return Err(CircuitError::RaggedMatrix { first: n, other: r.len() });
        }
        if slots == 0 || !slots.is_power_of_two() {
            return Err(CircuitError::Invalid(format!(
                "slot count {slots} must be a power of two"
            )));
        }
        let (row_blocks, col_blocks) = (m.div_ceil(slots), n.div_ceil(slots));
        let mut blocks = Vec::with_capacity(row_blocks);
        let mut padded = Vec::with_capacity(row_blocks);
        for rb in 0..row_blocks {
            let r0 = rb * slots;
            let mr = (m - r0).min(slots);
            let mp = mr.next_power_of_two();
            padded.push(mp);
            let mut row = Vec::with_capacity(col_blocks);
            for cb in 0..col_blocks {
                let w = Arc::clone(&weights);
                let c0 = cb * slots;
                let f = move |i: usize| -> Vec<Complex64> {
                    (0..slots)
                        .map(|t| {
                            let r = t % mp;
                            let c = c0 + (t + i) % slots;
                            let v = if r < mr && c < n { w[r0 + r][c] } else { 0.0 };
                            Complex64::new(v, 0.0)
                        })
                        .collect()
                };
                let source =
                    Source::Generated { slots, indices: (0..mp).collect(), f: Arc::new(f) };
                row.push(LinearTransform::from_source(params, source, strategy, level)?);
            }
            blocks.push(row);
        }
        Ok(MxvHybrid { rows: m, cols: n, slots, blocks, padded })
    }

    /// Level of the inputs.
    pub fn level(&self) -> usize {
        self.blocks[0][0].level()
    }
    /// Slots of the inputs.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Number of input ciphertexts (column blocks).
    pub fn input_blocks(&self) -> usize {
        self.cols.div_ceil(self.slots)
    }
    /// Number of output ciphertexts (row blocks).
    pub fn output_blocks(&self) -> usize {
        self.blocks.len()
    }
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Rotate-and-sum shifts of row block `rb`: `s/2, s/4, …, m'`.
    fn fold_shifts(&self, rb: usize) -> Vec<i64> {
        let mut v = Vec::new();
        let mut s = self.slots / 2;
        while s >= self.padded[rb] {
            v.push(s as i64);
            s /= 2;
        }
        v
    }

    /// Every rotation key the product needs.
    pub fn rotations(&self) -> Vec<i64> {
        let mut r: Vec<i64> =
            self.blocks.iter().flatten().flat_map(LinearTransform::rotations).collect();
        (0..self.blocks.len()).for_each(|rb| r.extend(self.fold_shifts(rb)));
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Split `x` (length `n`) into the zero-padded slot vectors of the input blocks.
    ///
    /// # Errors
    /// [`CircuitError::VectorLength`].
    pub fn input_vectors(&self, x: &[f64]) -> Result<Vec<Vec<f64>>> {
        if x.len() != self.cols {
            return Err(CircuitError::VectorLength { len: x.len(), cols: self.cols });
        }
        Ok(x.chunks(self.slots)
            .map(|c| {
                let mut v = c.to_vec();
                v.resize(self.slots, 0.0);
                v
            })
            .collect())
    }

    /// `y = M·x` for `x` given as its input-block ciphertexts; returns one ciphertext per row
    /// block, slot `r` of block `b` holding `y[b·s + r]`.
    ///
    /// # Errors
    /// [`CircuitError::VectorLength`] for a wrong number of input blocks; transform errors.
    pub fn evaluate(&self, eval: &Evaluator, inputs: &[Ciphertext]) -> Result<Vec<Ciphertext>> {
        if inputs.len() != self.input_blocks() {
            return Err(CircuitError::VectorLength {
                len: inputs.len() * self.slots,
                cols: self.input_blocks() * self.slots,
            });
        }
        let mut out = Vec::with_capacity(self.blocks.len());
        for (rb, row) in self.blocks.iter().enumerate() {
            let mut acc: Option<Ciphertext> = None;
            for (lt, x) in row.iter().zip(inputs) {
                let y = lt.evaluate(eval, x)?;
                acc = Some(match acc {
                    None => y,
                    Some(a) => eval.add(&a, &y)?,
                });
            }
            let mut acc = acc.expect("at least one column block");
            for s in self.fold_shifts(rb) {
                let r = eval.rotate(&acc, s)?;
                acc = eval.add(&acc, &r)?;
            }
            out.push(acc);
        }
        Ok(out)
    }

    /// Products of a batch of input vectors (each a list of block ciphertexts).
    ///
    /// # Errors
    /// As [`MxvHybrid::evaluate`].
    pub fn evaluate_batch(
        &self,
        eval: &Evaluator,
        batch: &[Vec<Ciphertext>],
    ) -> Result<Vec<Vec<Ciphertext>>> {
        batch.iter().map(|x| self.evaluate(eval, x)).collect()
    }

    /// Closed-form counts of [`MxvHybrid::evaluate`] at the transforms' level.
    pub fn predicted_cost(&self, params: &Parameters) -> OpCounts {
        let mut c = OpCounts::default();
        for (rb, row) in self.blocks.iter().enumerate() {
            row.iter().for_each(|lt| c.add_scaled(&lt.predicted_cost(), 1));
            if let Some(lt) = row.first() {
                let p =
                    super::cost::Primitives::at(params, lt.level() - params.primes_per_rescale());
                c.add_scaled(&p.rotation, self.fold_shifts(rb).len() as u64);
            }
        }
        c.finish(params.n())
    }

    /// The plan of the first block (all blocks share the strategy and diagonal count).
    pub fn plan(&self) -> super::Plan {
        self.blocks[0][0].plan()
    }

    /// Plaintexts (diagonals) the product uses: `Σ_rowblocks m'·⌈n/s⌉`.
    pub fn plaintexts(&self) -> usize {
        self.padded.iter().map(|&mp| mp * self.input_blocks()).sum()
    }
}
