//! The linear layers' BSGS steps chosen across the network so that few Galois keys serve it.
//!
//! A CPU run of ResNet-20 at N = 2^16 holds every Galois key it uses, and with level-dependent
//! key switching (CraterLake's bands: `P` as wide as `Q_l`) a key holds one part per level it
//! is used at, `4·(l+1)·N·8` bytes at level `l`. Choosing each layer's `n1` alone for the
//! fewest rotations (`fewest_rotations`) leaves ~180 distinct shifts at two or three
//! levels each. The shifts of a multiplexed convolution are a channel-block offset plus a
//! spatial one; nesting the giant steps ([`Split::with_outer`]) turns the product of the two
//! sets into their sum, and layers that share a level share keys only if they choose the same
//! steps. So the choice is made per group of layers with the same diagonals (the blocks of a
//! stage), jointly: coordinate descent over each group's `(n1, n12)` minimising the bytes of
//! the distinct `(shift, key part)` pairs plus a price on the predicted modular
//! multiplications ([`cost::predict`]), for a few prices; the cheapest key set whose
//! multiplications stay within [`TIME_SLACK`] of the per-layer choice wins. The rotations that
//! grow are at the network's low levels, where a key switch costs a small fraction of the
//! bootstraps' at the top.

use std::collections::HashMap;

use basalt_circuits::Result;
use basalt_circuits::lintrans::Split;
use basalt_circuits::lintrans::cost;
use basalt_circuits::lintrans::plan::Plan;
use basalt_ckks::Parameters;

use super::ConvStrategy;

/// How far the chosen steps may raise the network's predicted modular multiplications above
/// the per-layer fewest-rotation choice.
pub const TIME_SLACK: f64 = 1.25;

/// One layer's BSGS steps: `n1` baby steps and an optional outer giant stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    pub n1: usize,
    pub outer: Option<usize>,
}

/// A candidate for a group: its steps, the shifts it needs and its cost at each layer's level.
struct Candidate {
    steps: Steps,
    shifts: Vec<i64>,
    modmults: u64,
}

/// Bytes of the key part serving `level`: digits × 2 halves × limbs of `Q_top ∪ P` × N words.
fn part_bytes(params: &Parameters, level: usize) -> u64 {
    let g = &params.gadgets()[params.gadget_index(level)];
    g.digits() as u64 * 2 * (g.top_level + 1 + g.p_limbs) as u64 * params.n() as u64 * 8
}

/// The split of `indices` with `steps`.
///
/// # Errors
/// As [`Split::new`] and [`Split::with_outer`].
pub fn split(indices: &[usize], slots: usize, steps: Steps) -> Result<Split> {
    let s = Split::new(indices, steps.n1, slots)?;
    match steps.outer {
        None => Ok(s),
        Some(n12) => s.with_outer(n12, slots),
    }
}

/// Steps for `layers` (each its non-zero diagonal indices and input level), run with `conv`
/// (no or single hoisting), the shifts in `fixed` (shift, level) made besides them (the
/// pool's): `initial` (each layer alone, as `fewest_rotations`) improved as the module
/// doc says.
///
/// # Errors
/// As [`Split::new`].
pub fn shared_steps(
    params: &Parameters,
    layers: &[(Vec<usize>, usize)],
    slots: usize,
    conv: ConvStrategy,
    fixed: &[(i64, usize)],
    initial: &[Steps],
) -> Result<Vec<Steps>> {
    // Groups of layers with the same diagonals.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, (idx, _)) in layers.iter().enumerate() {
        match groups.iter_mut().find(|g| layers[g[0]].0 == *idx) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    let log_slots = slots.trailing_zeros();
    let cands: Vec<Vec<Candidate>> = groups
        .iter()
        .map(|g| {
            let idx = &layers[g[0]].0;
            let mut v = Vec::new();
            for a in 0..=log_slots {
                let n1 = 1usize << a;
                let outers = std::iter::once(None).chain((a + 1..=log_slots).map(|b| Some(1 << b)));
                for outer in outers {
                    let steps = Steps { n1, outer };
                    let s = split(idx, slots, steps)?;
                    let plan = Plan { n1, hoisting: conv.hoisting, order: conv.order };
                    let modmults = g
                        .iter()
                        .map(|&l| {
                            cost::predict(params, &s, &plan, layers[l].1, false, true).modmults
                        })
                        .sum();
                    v.push(Candidate { steps, shifts: s.rotations(), modmults });
                }
            }
            Ok(v)
        })
        .collect::<Result<_>>()?;
    let start: Vec<usize> = groups
        .iter()
        .zip(&cands)
        .map(|(g, c)| c.iter().position(|c| c.steps == initial[g[0]]).unwrap_or(0))
        .collect();
    let mut keys = KeyParts::new(params, fixed);
    for (gi, g) in groups.iter().enumerate() {
        keys.add(g, layers, &cands[gi][start[gi]], 1);
    }
    let base_bytes = keys.bytes;
    let base_time: u64 = cands.iter().zip(&start).map(|(c, &i)| c[i].modmults).sum();
    let mut best = (base_bytes, start.clone());
    for mu in [0.05, 0.1, 0.2, 0.5, 1.0, 2.0] {
        let price = mu * base_bytes as f64 / base_time.max(1) as f64;
        let mut choice = start.clone();
        let mut keys = keys.clone();
        for _ in 0..6 {
            let mut changed = false;
            for (gi, g) in groups.iter().enumerate() {
                let cur = choice[gi];
                keys.add(g, layers, &cands[gi][cur], -1);
                let mut pick = (f64::INFINITY, cur);
                for (ci, c) in cands[gi].iter().enumerate() {
                    let v = keys.added_bytes(g, layers, c) as f64 + price * c.modmults as f64;
                    if v < pick.0 {
                        pick = (v, ci);
                    }
                }
                keys.add(g, layers, &cands[gi][pick.1], 1);
                changed |= pick.1 != cur;
                choice[gi] = pick.1;
            }
            if !changed {
                break;
            }
        }
        let time: u64 = cands.iter().zip(&choice).map(|(c, &i)| c[i].modmults).sum();
        if (time as f64) <= TIME_SLACK * base_time as f64 && keys.bytes < best.0 {
            best = (keys.bytes, choice);
        }
    }
    let mut out = initial.to_vec();
    for (gi, g) in groups.iter().enumerate() {
        for &l in g {
            out[l] = cands[gi][best.1[gi]].steps;
        }
    }
    Ok(out)
}

/// The distinct `(shift, key part)` pairs in use, counted, and their bytes.
#[derive(Clone)]
struct KeyParts<'a> {
    params: &'a Parameters,
    count: HashMap<(i64, usize), u32>,
    bytes: u64,
}

impl<'a> KeyParts<'a> {
    fn new(params: &'a Parameters, fixed: &[(i64, usize)]) -> Self {
        let mut k = KeyParts { params, count: HashMap::new(), bytes: 0 };
        for &(r, l) in fixed {
            k.bump(r, l, 1);
        }
        k
    }

    fn bump(&mut self, r: i64, level: usize, by: i32) {
        let key = (r, self.params.gadget_index(level));
        let bytes = part_bytes(self.params, level);
        if by > 0 {
            let n = self.count.entry(key).or_insert(0);
            if *n == 0 {
                self.bytes += bytes;
            }
            *n += 1;
        } else if let Some(n) = self.count.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.count.remove(&key);
                self.bytes -= bytes;
            }
        }
    }

    /// Add (`by = 1`) or remove (`-1`) the keys of `c` for every layer of group `g`.
    fn add(&mut self, g: &[usize], layers: &[(Vec<usize>, usize)], c: &Candidate, by: i32) {
        for &l in g {
            for &r in &c.shifts {
                self.bump(r, layers[l].1, by);
            }
        }
    }

    /// Bytes that adding `c` for group `g` would add (each key part once, however many of the
    /// group's layers run at its level).
    fn added_bytes(&self, g: &[usize], layers: &[(Vec<usize>, usize)], c: &Candidate) -> u64 {
        let mut parts: Vec<(usize, usize)> =
            g.iter().map(|&l| (self.params.gadget_index(layers[l].1), layers[l].1)).collect();
        parts.sort_unstable_by_key(|p| p.0);
        parts.dedup_by_key(|p| p.0);
        parts
            .iter()
            .map(|&(gi, level)| {
                let new = c.shifts.iter().filter(|&&r| !self.count.contains_key(&(r, gi))).count();
                new as u64 * part_bytes(self.params, level)
            })
            .sum()
    }
}
