//! Working memory of what a workload runs, counted from shapes and from the code that runs it:
//! which ciphertexts, key-switching buffers and tables are alive together at each piece's
//! peak. The full-size runs add these to their keys and plaintexts and refuse to start when the
//! total exceeds the memory available ([`crate::lstm_run::Memory`],
//! [`crate::resnet_run::Memory`]); `tests/memory.rs` checks them against what toy runs
//! allocate.

use basalt_circuits::bootstrap::Bootstrapper;
use basalt_circuits::lintrans::{Hoisting, LinearTransform};
use basalt_circuits::polynomial::Chebyshev;
use basalt_circuits::polynomial::eval::power_levels;
use basalt_ckks::Parameters;

use crate::Result;

/// A ciphertext at `level`: two polynomials of `level + 1` limbs of N 64-bit words.
pub fn ciphertext(params: &Parameters, level: usize) -> u64 {
    2 * (level as u64 + 1) * params.n() as u64 * 8
}

/// One polynomial over every prime of `Q ∪ P`: the secret key as the client holds it.
pub fn secret_key(params: &Parameters) -> u64 {
    (params.q().len() + params.p().len()) as u64 * params.n() as u64 * 8
}

/// A key switch's decomposition at `level`: `dnum` digits, each raised to `Q_l ∪ P` (ModUp's
/// output; single hoisting keeps it for all the baby-step rotations of a transform).
pub fn decomposition(params: &Parameters, level: usize) -> u64 {
    (params.dnum_at(level) * (level + 1 + params.k_at(level))) as u64 * params.n() as u64 * 8
}

/// One full Galois key with the parts of `levels` (as `KeyGenerator::for_levels` makes it;
/// every level: `gen_rotation_key`'s key): per gadget used, digits × 2 halves × limbs of
/// `Q_top ∪ P` × N words.
pub fn galois_key(params: &Parameters, levels: &[usize]) -> u64 {
    let mut wanted = vec![false; params.gadgets().len()];
    levels.iter().for_each(|&l| wanted[params.gadget_index(l)] = true);
    let words: u64 = params
        .gadgets()
        .iter()
        .zip(wanted)
        .filter(|(_, w)| *w)
        .map(|(g, _)| g.digits() as u64 * 2 * (g.top_level + 1 + g.p_limbs) as u64)
        .sum();
    words * params.n() as u64 * 8
}

/// The diagonals a transform built from stored ones keeps in the clear besides its encoded
/// ones (`LinearTransform::new` keeps the matrix it was built from: 16-byte complex slots);
/// counted from the indices, so that a shape-only transform answers for the real one.
pub fn clear_diagonals(lt: &LinearTransform) -> u64 {
    lt.source().indices().len() as u64 * lt.source().slots() as u64 * 16
}

/// The ring's NTT tables, built once per parameter set and shared: `tfhe-ntt` keeps the forward
/// and inverse twiddles and their Shoup companions, four words per coefficient and prime.
pub fn ntt_tables(params: &Parameters) -> u64 {
    4 * (params.q().len() + params.p().len()) as u64 * params.n() as u64 * 8
}

/// A key switch's transient buffers at `level`, its output not counted: the digits (the fused
/// switch of `Evaluator::keyswitch_add` holds `d` in coefficient form and its BConv inputs,
/// `2(l + 1) + dnum` limbs; a hoisted one the whole decomposition: the larger of the two),
/// the two accumulators over `Q_l ∪ P` that ModDown reads, and ModDown's copy of the `P`
/// limbs it drops (one polynomial at a time).
pub fn key_switch(params: &Parameters, level: usize) -> u64 {
    let n = params.n() as u64 * 8;
    let fused = (2 * (level + 1) + params.dnum_at(level)) as u64 * n;
    let mod_down = params.k_at(level) as u64 * n;
    decomposition(params, level).max(fused) + qp_ciphertext(params, level) + mod_down
}

/// A relinearised product's transient buffers at `level`: the tensor product's three
/// polynomials and the relinearisation's key switch.
pub fn product(params: &Parameters, level: usize) -> u64 {
    3 * ciphertext(params, level) / 2 + key_switch(params, level)
}

/// Two polynomials over `Q_l ∪ P`: a ciphertext kept lazy in the extended basis.
fn qp_ciphertext(params: &Parameters, level: usize) -> u64 {
    2 * (level + 1 + params.k_at(level)) as u64 * params.n() as u64 * 8
}

/// The peak of a baby-step-centric transform on `terms` inputs sharing its split
/// ([`LinearTransform::evaluate`] for one, `evaluate_sum` for several), its inputs not
/// counted: per input its hoisted decomposition and every baby-step rotation (all are made
/// before the first product); the partial sum, the giant-step sum and the product being
/// formed; and the giant-step rotation's key switch. With double hoisting the baby steps and
/// the sums stay over `Q_l ∪ P` (Bossuat et al.), `k_l` limbs more each.
pub fn transform(params: &Parameters, lt: &LinearTransform, terms: usize) -> u64 {
    let l = lt.level();
    let wide = if lt.plan().hoisting == Hoisting::Double {
        qp_ciphertext(params, l)
    } else {
        ciphertext(params, l)
    };
    let per_input = lt.split().babies().len() as u64 * wide + decomposition(params, l);
    terms as u64 * per_input + 3 * wide + key_switch(params, l)
}

/// The peak of a polynomial evaluation on an input at `level`, the input not counted: every
/// Chebyshev power it builds at the level it sits ([`power_levels`]: the evaluator keeps them
/// all until the end), two ciphertexts at the input level (the recursion's partial result and
/// the product's output) and one product's transient buffers there.
///
/// # Errors
/// A polynomial deeper than the levels left ([`power_levels`]).
pub fn polynomial(params: &Parameters, level: usize, p: &Chebyshev) -> Result<u64> {
    let powers: u64 = power_levels(params, level, p)?.iter().map(|&l| ciphertext(params, l)).sum();
    Ok(powers + 2 * ciphertext(params, level) + product(params, level))
}

/// The peak of one bootstrap, its input not counted: the largest of its stages, each holding
/// only what `Bootstrapper::bootstrap_with` still needs (ModRaise's output becomes SubSum's
/// running sum, SubSum's is dropped once CoeffToSlot has its copy, EvalMod's inputs once it has
/// run):
/// - ModRaise and SubSum: the raised ciphertext or running sum, a rotation (or the switch back
///   to the dense secret) being formed and its key switch, at the top; or the running sum, a
///   rotation and the sum being formed;
/// - CoeffToSlot: its input dropped to the transforms' level and a transform; then the split
///   into halves (the input, its conjugate, the real and imaginary parts, a rotation or a sum
///   being formed, one key switch) at EvalMod's level;
/// - EvalMod: the one or two halves, the first half's result while the second is evaluated,
///   and one polynomial evaluation;
/// - SlotToCoeff: EvalMod's outputs, the recombined input and a transform.
///
/// # Errors
/// As [`polynomial`].
pub fn bootstrap(params: &Parameters, bt: &Bootstrapper) -> Result<u64> {
    let top = params.max_level();
    let ct = |l: usize| ciphertext(params, l);
    let subsum = (2 * ct(top) + key_switch(params, top)).max(3 * ct(top));
    let halves = bt.evalmod_inputs() as u64;
    let e = bt.evalmod_level();
    let cts_in = bt.coeff_to_slot().first().map_or(e, LinearTransform::level);
    let cts = bt.coeff_to_slot().iter().map(|lt| transform(params, lt, 1)).max().unwrap_or(0)
        + ct(cts_in);
    let split = 5 * ct(e) + key_switch(params, e);
    let evalmod = (2 * halves - 1) * ct(e) + polynomial(params, e, bt.evalmod_polynomial())?;
    let stc_in = bt.slot_to_coeff().first().map_or(e, LinearTransform::level);
    let stc = bt.slot_to_coeff().iter().map(|lt| transform(params, lt, 1)).max().unwrap_or(0)
        + halves * ct(e)
        + ct(stc_in);
    Ok(subsum.max(cts).max(split).max(evalmod).max(stc))
}
