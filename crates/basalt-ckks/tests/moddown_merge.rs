//! The ModDown merge (de Castro et al., FAB's reference [15]): the rescale after a
//! relinearised product folded into the key switch's ModDown, one division by `P·q_top`.

mod common;

use basalt_ckks::*;
use basalt_trace::{Event, Kernel, record};
use common::{random_values, setup, toy};

/// Limb-NTTs (forward and inverse) in a trace.
fn ntt_limbs(events: &[Event]) -> u32 {
    events
        .iter()
        .map(|e| match e {
            Event::Kernel(Kernel::Ntt { limbs, .. } | Kernel::Intt { limbs, .. }) => *limbs,
            _ => 0,
        })
        .sum()
}

#[test]
fn merged_rescale_matches_relinearise_then_rescale_with_fewer_ntts() {
    for (dnum, k) in [(1, 3), (3, 2)] {
        let c = setup(toy(10, 3, k, dnum), &[], false);
        let (level, slots) = (3, c.params.max_slots());
        let (x, y, z) = (random_values(slots, 1), random_values(slots, 2), random_values(slots, 3));
        let (cx, cy) = (c.encrypt(&x, level), c.encrypt(&y, level));
        // z at the product's scale, to be added before the rescale (T_{a+b} = 2·T_a·T_b − T_{a−b}).
        let mut cz = c.eval.mul_const_scaled(&c.encrypt(&z, level), 1.0, cy.scale()).unwrap();
        cz.set_scale(cx.scale() * cy.scale());
        let want: Vec<Complex64> =
            x.iter().zip(&y).zip(&z).map(|((x, y), z)| 2.0 * x * y + z - 1.0).collect();

        let (merged, t_merged) =
            record(|| c.eval.mul_relin_rescale(&cx, &cy, true, Some(&cz), -1.0).unwrap());
        let (plain, t_plain) = record(|| {
            let prod = c.eval.mul_relin(&cx, &cy).unwrap();
            let mut two = c.eval.add(&prod, &prod).unwrap();
            c.eval.add_assign(&mut two, &cz).unwrap();
            let two = c.eval.add_const(&two, (-1.0).into()).unwrap();
            c.eval.rescale(&two).unwrap()
        });
        assert_eq!((merged.level(), merged.degree()), (plain.level(), plain.degree()));
        assert!((merged.scale() / plain.scale() - 1.0).abs() < 1e-12);
        let (bits, bits_plain) =
            (c.precision(&want, &merged).min.l2, c.precision(&want, &plain).min.l2);
        println!("dnum {dnum}: merged {bits:.1} bits, unmerged {bits_plain:.1} bits");
        assert!(
            bits > 20.0 && bits > bits_plain - 1.0,
            "dnum {dnum}: {bits:.1} vs {bits_plain:.1}"
        );
        // Per polynomial the rescale's INTT and `level` NTTs are gone, and the merged ModDown
        // transforms one more limb in and one fewer out: `level + 1` limb-NTTs fewer.
        let (m, p) = (ntt_limbs(&t_merged.events), ntt_limbs(&t_plain.events));
        assert_eq!(p - m, 2 * (level as u32 + 1), "dnum {dnum}: {m} vs {p} limb-NTTs");
    }
}

#[test]
fn merged_rescale_needs_a_level_to_drop() {
    let c = setup(toy(10, 3, 2, 2), &[], false);
    let x = random_values(c.params.max_slots(), 4);
    let ct = c.encrypt(&x, 0);
    assert!(matches!(
        c.eval.mul_relin_rescale(&ct, &ct, false, None, 0.0),
        Err(CkksError::LevelBelowZero { .. })
    ));
}
