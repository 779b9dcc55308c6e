//! ModDown–Rescale fusion in every HMult (Osiris §V "Incorporating Prior Work": "we also adopt
//! a recent algorithmic optimization from MAD \[3\] to fuse the ModDown and Rescale stages
//! within each HMult"; §VII-C credits it with 7 % of ResNet-20's runtime).
//!
//! The library computes the fused product itself (`Evaluator::mul_relin_rescale`: the key
//! switch stays in `Q_l ∪ P`, `P·(c_0, c_1)` joins it, and one division by `P·q_top` replaces
//! ModDown's and the rescale's INTT/BConv/NTT chains), and a bootstrap uses it for EvalMod's
//! products with `BootstrapConfig::merge_rescale`. The workloads' programs call
//! `rescale(mul_relin(a, b))`; [`fuse_hmult_rescale`] rewrites their recorded traces so that
//! each such pair is what the library records for `mul_relin_rescale(a, b)` on the same
//! operands. The rewrite is exact, not a model: a pair is replaced only when its events equal
//! the library's own recording of the unfused pair at that level (ids aside), and it is
//! replaced by the library's recording of the fused product. Products whose result is changed
//! before its rescale (the Chebyshev power steps `2·T_a·T_b − T_{a−b}` of the polynomial
//! evaluator) cannot be rewritten so; [`Program::Fused`](crate::program::Program::Fused)
//! records its program inside `basalt_circuits::polynomial::with_merged_rescales`, so every
//! polynomial the program evaluates (the comparison's, ReLU's sign, EvalMod's) already fuses
//! them, and the rewrite leaves what remains ([`Fusion::left`] counts it).

use std::collections::HashMap;

use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::{Event, Kernel, Trace, record};

/// What [`fuse_hmult_rescale`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fusion {
    /// HMults whose rescale followed directly and was fused.
    pub fused: usize,
    /// HMults left as recorded (their result is not rescaled directly, or is read again).
    pub left: usize,
}

/// The library's recordings of one HMult at a level: unfused (`rescale(mul_relin)`) and fused.
struct Reference {
    unfused: Vec<Event>,
    fused: Vec<Event>,
}

fn reference(
    params: &Parameters,
    level: usize,
    square: bool,
    seeded: bool,
) -> Result<Reference, String> {
    let keys = KeyGenerator::new(params).gen_symbolic_evaluation_keys(&[], false, seeded);
    let eval = Evaluator::new(params, keys).map_err(|e| e.to_string())?;
    let a = Ciphertext::symbolic(params, level).map_err(|e| e.to_string())?;
    let b = if square {
        a.clone()
    } else {
        Ciphertext::symbolic(params, level).map_err(|e| e.to_string())?
    };
    let (r, unfused) = record(|| eval.rescale(&eval.mul_relin(&a, &b)?));
    r.map_err(|e| e.to_string())?;
    let (r, fused) = record(|| eval.mul_relin_rescale(&a, &b, false, None, 0.0));
    r.map_err(|e| e.to_string())?;
    Ok(Reference { unfused: unfused.events, fused: fused.events })
}

fn object(e: &Event) -> Option<(bool, u64)> {
    match e {
        Event::Kernel(Kernel::CtLoad { id, .. }) => Some((true, *id)),
        Event::Kernel(Kernel::CtStore { id, .. }) => Some((false, *id)),
        _ => None,
    }
}

/// Whether `got` is `want` with object ids renamed one-to-one.
fn same_up_to_ids(got: &[Event], want: &[Event]) -> bool {
    if got.len() != want.len() {
        return false;
    }
    let (mut fwd, mut back) = (HashMap::new(), HashMap::new());
    got.iter().zip(want).all(|(g, w)| match (g, w) {
        (
            Event::Kernel(Kernel::CtLoad { n, limbs, polys, id }),
            Event::Kernel(Kernel::CtLoad { n: n2, limbs: l2, polys: p2, id: id2 }),
        )
        | (
            Event::Kernel(Kernel::CtStore { n, limbs, polys, id }),
            Event::Kernel(Kernel::CtStore { n: n2, limbs: l2, polys: p2, id: id2 }),
        ) => {
            (n, limbs, polys) == (n2, l2, p2)
                && *fwd.entry(*id).or_insert(*id2) == *id2
                && *back.entry(*id2).or_insert(*id) == *id
        }
        _ => g == w,
    })
}

/// The end (exclusive) of the region opened at `events[start]`.
fn region_end(events: &[Event], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, e) in events.iter().enumerate().skip(start) {
        match e {
            Event::Enter { .. } => depth += 1,
            Event::Exit => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// An HMult region at `start` followed directly by the rescale of its result: the end
/// (exclusive) of that rescale, the operands' ids, the result's id and the level.
struct Pair {
    end: usize,
    loads: Vec<u64>,
    out: u64,
    product: u64,
    level: usize,
}

fn pair_at(events: &[Event], start: usize) -> Option<Pair> {
    let hmult_end = region_end(events, start)?;
    let inner = &events[start..hmult_end];
    let loads: Vec<u64> =
        inner.iter().filter_map(object).filter(|&(l, _)| l).map(|(_, id)| id).collect();
    let (level, product) = match (
        inner.iter().find_map(|e| match e {
            Event::Kernel(Kernel::CtLoad { limbs, .. }) => Some(*limbs),
            _ => None,
        }),
        &inner[inner.len() - 2],
    ) {
        (Some(limbs), Event::Kernel(Kernel::CtStore { id, .. })) => (limbs as usize - 1, *id),
        _ => return None,
    };
    // The rescale reads the product and writes its result, reading nothing else between.
    match events.get(hmult_end) {
        Some(Event::Kernel(Kernel::CtLoad { id, .. })) if *id == product => {}
        _ => return None,
    }
    for (i, e) in events.iter().enumerate().skip(hmult_end + 1) {
        match e {
            Event::Kernel(Kernel::CtStore { id, .. }) => {
                return Some(Pair { end: i + 1, loads, out: *id, product, level });
            }
            Event::Kernel(Kernel::CtLoad { .. }) | Event::Marker { .. } => return None,
            _ => {}
        }
    }
    None
}

/// Rewrite every HMult of `trace` (recorded on `params`, `seeded` keys or not) whose result is
/// rescaled directly, and read by nothing else, into the library's fused product.
pub fn fuse_hmult_rescale(trace: &Trace, params: &Parameters, seeded: bool) -> (Trace, Fusion) {
    let events = &trace.events;
    // How many times each object is loaded: a product read again after its rescale must stay.
    let mut reads: HashMap<u64, usize> = HashMap::new();
    for e in events {
        if let Some((true, id)) = object(e) {
            *reads.entry(id).or_default() += 1;
        }
    }
    // A level the library cannot fuse at (no prime left to rescale by) leaves its products.
    let mut refs: HashMap<(usize, bool), Option<Reference>> = HashMap::new();
    let mut out = Vec::with_capacity(events.len());
    let mut fusion = Fusion::default();
    let mut i = 0;
    while i < events.len() {
        let is_hmult = matches!(&events[i], Event::Enter { name } if name == "HMult");
        if !is_hmult {
            out.push(events[i].clone());
            i += 1;
            continue;
        }
        let candidate = pair_at(events, i)
            .filter(|p| reads.get(&p.product) == Some(&1) && (p.loads.len() == 2) && p.level >= 1);
        let Some(p) = candidate else {
            fusion.left += 1;
            out.push(events[i].clone());
            i += 1;
            continue;
        };
        let square = p.loads[0] == p.loads[1];
        let key = (p.level, square);
        let r = refs
            .entry(key)
            .or_insert_with(|| reference(params, p.level, square, seeded).ok())
            .as_ref()
            .filter(|r| same_up_to_ids(&events[i..p.end], &r.unfused));
        let Some(r) = r else {
            fusion.left += 1;
            out.push(events[i].clone());
            i += 1;
            continue;
        };
        // The fused recording loads the operands in the same order and stores one result.
        let mut load_ids = p.loads.iter();
        let mut rename: HashMap<u64, u64> = HashMap::new();
        for e in &r.fused {
            let e = match e {
                Event::Kernel(Kernel::CtLoad { n, limbs, polys, id }) => {
                    let to = *rename.entry(*id).or_insert_with(|| {
                        *load_ids.next().expect("the fused product loads its two operands")
                    });
                    Event::Kernel(Kernel::CtLoad { n: *n, limbs: *limbs, polys: *polys, id: to })
                }
                Event::Kernel(Kernel::CtStore { n, limbs, polys, .. }) => {
                    Event::Kernel(Kernel::CtStore {
                        n: *n,
                        limbs: *limbs,
                        polys: *polys,
                        id: p.out,
                    })
                }
                other => other.clone(),
            };
            out.push(e);
        }
        fusion.fused += 1;
        i = p.end;
    }
    // Ids dense in order of first appearance again, as the recorder numbers them (a fused
    // product drops its intermediate), so a fused trace equals the library's recording.
    let mut dense: HashMap<u64, u64> = HashMap::new();
    for e in &mut out {
        if let Event::Kernel(Kernel::CtLoad { id, .. } | Kernel::CtStore { id, .. }) = e {
            let next = dense.len() as u64;
            *id = *dense.entry(*id).or_insert(next);
        }
    }
    (Trace { events: out }, fusion)
}

#[cfg(test)]
mod tests {
    use basalt_trace::KernelKind;

    use super::*;
    use crate::library::record_program;
    use crate::program::Program;

    fn set_iii() -> Parameters {
        Parameters::preset_insecure("OSIRIS_SET_III").expect("preset")
    }

    #[test]
    fn a_fused_hmult_is_the_librarys_merged_one() {
        for level in [2, 9] {
            let hmult = |merged| Program::HMult {
                preset: "OSIRIS_SET_III".into(),
                level,
                seeded: true,
                merged,
            };
            let fused = record_program(&Program::Fused(Box::new(hmult(false)))).expect("fused");
            let merged = record_program(&hmult(true)).expect("merged");
            let plain = record_program(&hmult(false)).expect("plain");
            assert_eq!(fused, merged, "level {level}");
            assert!(fused.count(KernelKind::Ntt) < plain.count(KernelKind::Ntt));
        }
    }

    #[test]
    fn a_fused_program_fuses_its_chebyshev_steps_too() {
        // A 4-value bitonic sort on Osiris' Set IV: three compare-exchange stages, each a
        // comparison of composited degree-7 polynomials whose power steps change the product
        // before its rescale.
        let sort = Program::Sort { preset: "OSIRIS_SET_IV".into(), log_len: 2, seeded: true };
        let plain = record_program(&sort).expect("sort");
        let params = Parameters::preset_insecure("OSIRIS_SET_IV").expect("preset");
        let (rewritten, by_rewrite) = fuse_hmult_rescale(&plain, &params, true);
        let fused = record_program(&Program::Fused(Box::new(sort))).expect("fused sort");
        let (_, left) = fuse_hmult_rescale(&fused, &params, true);
        let count = |t: &Trace, kind| t.count(kind);
        // The rewrite alone leaves the power steps; the scope fuses them as well: the same
        // HMults, none left that the rewrite could still fuse, and fewer NTTs than the rewrite.
        assert!(by_rewrite.left > 0, "{by_rewrite:?}");
        assert_eq!(left.fused, 0, "{left:?}");
        assert_eq!(left.left, by_rewrite.fused + by_rewrite.left);
        let ntts = |t: &Trace| count(t, KernelKind::Ntt) + count(t, KernelKind::Intt);
        assert!(ntts(&fused) < ntts(&rewritten), "{} vs {}", ntts(&fused), ntts(&rewritten));
        // Every key switch is still there: fusion drops rescales, not products.
        assert_eq!(count(&fused, KernelKind::KeyLoad), count(&plain, KernelKind::KeyLoad));
    }

    #[test]
    fn fusing_needs_a_program_on_a_preset() {
        let hmult = Program::HMult {
            preset: "OSIRIS_SET_III".into(),
            level: 2,
            seeded: true,
            merged: false,
        };
        let twice = Program::Fused(Box::new(Program::Fused(Box::new(hmult))));
        let e = record_program(&twice).unwrap_err();
        assert!(e.contains("fusing needs a program on a preset"), "{e}");
    }

    #[test]
    fn only_products_rescaled_directly_and_read_once_are_fused() {
        let params = set_iii();
        let keys = KeyGenerator::new(&params).gen_symbolic_evaluation_keys(&[], false, true);
        let eval = Evaluator::new(&params, keys).expect("evaluator");
        let x = Ciphertext::symbolic(&params, 9).expect("ct");
        let (r, t) = record(|| -> basalt_ckks::Result<()> {
            // A square rescaled at once: fused.
            let x2 = eval.rescale(&eval.mul_relin(&x, &x)?)?;
            // A product changed before its rescale (a Chebyshev step): left.
            let y = eval.mul_relin(&x2, &x2)?;
            let y = eval.rescale(&eval.add(&y, &y)?)?;
            // A product read again after its rescale: left.
            let z = eval.mul_relin(&y, &y)?;
            let _z = eval.rescale(&z)?;
            let _again = eval.add(&z, &z)?;
            Ok(())
        });
        r.expect("program");
        let (f, fusion) = fuse_hmult_rescale(&t, &params, true);
        assert_eq!(fusion, Fusion { fused: 1, left: 2 });
        // The fused square is the library's mul_relin_rescale: the trace loses exactly what
        // one fusion at level 9 saves.
        let (r, alone) = record(|| eval.rescale(&eval.mul_relin(&x, &x)?));
        r.expect("square");
        let (r, merged) = record(|| eval.mul_relin_rescale(&x, &x, false, None, 0.0));
        r.expect("merged");
        let count = |tr: &Trace, kind| i128::from(tr.count(kind));
        for kind in [KernelKind::Ntt, KernelKind::Intt, KernelKind::BConv] {
            let saved = count(&alone, kind) - count(&merged, kind);
            assert_eq!(count(&t, kind) - count(&f, kind), saved, "{kind:?}");
        }
        assert!(count(&alone, KernelKind::Ntt) > count(&merged, KernelKind::Ntt));
        // Nothing else moved: the rest of the stream is unchanged up to the ids' numbering.
        let tail = |tr: &Trace| tr.events[tr.events.len() - 80..].to_vec();
        assert!(same_up_to_ids(&tail(&f), &tail(&t)));
        // Fusing twice changes nothing more.
        let (g, again) = fuse_hmult_rescale(&f, &params, true);
        assert_eq!((g, again.fused), (f, 0));
    }
}
