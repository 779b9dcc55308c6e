//! Closed-form counts against the papers: Osiris (BSGS ratio, hoisting) and HE-MxV (transforms
//! per rotation and rescale).
//!
//! Closed-form modular-multiplication counts against Osiris' statements (§VII, the
//! Fig. 11 sensitivity study, and the 1.68× DH-vs-NH modmult reduction), at its
//! bootstrapping-level key-switching shape (`α = 14`, `ℓ = 12`,
//! `N = 2^16`) for a 64-diagonal transform; NTT butterflies count 2 modmults (butterfly +
//! on-the-fly twiddle), as in Osiris' hardware.

use basalt_circuits::OpCounts;
use basalt_circuits::lintrans::cost::{
    predict, predict_full_double_hoisting, predict_giant_only_double_hoisting,
};
use basalt_circuits::lintrans::{GscOrder, Hoisting, Plan, Split};
use basalt_ckks::{Parameters, ParametersLiteral};

fn osiris_params(alpha: usize) -> Parameters {
    // 28 Q primes of 40 bits (a bootstrapping-sized chain), `alpha` special primes.
    let mut lit = ParametersLiteral::toy(16, 40, 40, 27, 40, alpha, 1);
    lit.dnum = None;
    lit.alpha = Some(alpha);
    lit.primes_below = true;
    Parameters::new(lit).expect("valid")
}

fn osiris_modmults(c: OpCounts, n: u64) -> u64 {
    c.modmults + (n / 2) * n.trailing_zeros() as u64 * (c.ntt_limbs + c.intt_limbs)
}

#[test]
fn bsgs_ratio_1_vs_64_matches_the_papers_1_50x() {
    let params = osiris_params(14);
    let n = params.n() as u64;
    let idx: Vec<usize> = (0..64).collect();
    let dh = |n1: usize, of_limb: bool| {
        let s = Split::new(&idx, n1, params.max_slots()).unwrap();
        osiris_modmults(predict_full_double_hoisting(&params, &s, 12, of_limb), n)
    };
    let ratio = dh(8, false) as f64 / dh(64, false) as f64;
    println!("DH ratio 1 (n1=n2=8) / ratio 64 (n2=1): {ratio:.3} (paper: 1.50)");
    assert!((ratio - 1.50).abs() < 0.05, "{ratio:.3}");
    // With the OF-Limb regeneration of the 64 Q∪P diagonals counted, the gap shrinks: the
    // paper's 1.50× evidently leaves diagonal generation out (recorded in docs/circuits.md).
    let with = dh(8, true) as f64 / dh(64, true) as f64;
    println!("same with OF-Limb NTTs counted: {with:.3}");
    assert!(with < ratio);
}

#[test]
fn hoisting_levels_order_the_modmults() {
    let params = osiris_params(14);
    let n = params.n() as u64;
    let idx: Vec<usize> = (0..64).collect();
    let s = Split::new(&idx, 8, params.max_slots()).unwrap();
    let run = |h| {
        let plan = Plan { n1: 8, hoisting: h, order: GscOrder::BabyStepCentric };
        osiris_modmults(predict(&params, &s, &plan, 12, false, true), n)
    };
    let (nh, sh) = (run(Hoisting::None), run(Hoisting::Single));
    let dh_giant = osiris_modmults(predict_giant_only_double_hoisting(&params, &s, 12), n);
    let full = osiris_modmults(predict_full_double_hoisting(&params, &s, 12, false), n);
    // `Hoisting::Double` runs the full variant.
    assert_eq!(run(Hoisting::Double), full);
    println!(
        "64 diagonals, n1 = n2 = 8, l = 12: NH {nh}, SH {sh}, DH(giant lazy) {dh_giant}, DH(full) {full}; NH/DH(full) = {:.2}",
        nh as f64 / full as f64
    );
    assert!(nh > sh && sh > dh_giant && dh_giant > full);
    // Per transform the saving exceeds the paper's bootstrapping-wide 1.68× (EvalMod and the
    // other non-transform work dilute it there).
    assert!(nh as f64 / full as f64 > 1.68);
}

/// HE-MxV (§II-C, Alg. 2): a SEAL-style rotation (dnum = l, one special prime) costs
/// `(l+1)(l+2)` NTT-class transforms — 20 / 72 / 240 for Set-A/B/C — and a rescale `2l`.
#[test]
fn mxv_rotation_and_rescale_transforms_match_the_paper() {
    use basalt_circuits::lintrans::cost::Primitives;
    for (name, want_rot, want_rescale) in
        [("MXV_SET_A", 20, 6), ("MXV_SET_B", 72, 14), ("MXV_SET_C", 240, 28)]
    {
        let params = Parameters::preset(name).expect("preset");
        let p = Primitives::at(&params, params.max_level());
        let rot = p.rotation.ntt_limbs + p.rotation.intt_limbs;
        let rescale = p.rescale.ntt_limbs + p.rescale.intt_limbs;
        println!("{name}: rotation {rot} transforms, rescale {rescale}");
        assert_eq!((rot, rescale), (want_rot, want_rescale), "{name}");
    }
}

/// HE-MxV eq. (12): key traffic `C_ksk = (B_ksk0 + B_ksk1)·(m + ⌈log k⌉)` with
/// `B_ksk = l(l+1)·N·8` for the 1K×1K example on Set-B (l = 7, N = 2^14, k = 8 chunks). Our
/// hybrid product with the paper's one-rotation-per-diagonal strategy reads exactly that,
/// minus the identity rotation (diagonal 0 needs no key switch): `m − 1 + log2 k` switches,
/// and the `log2 k` rotate-and-sum switches run one level lower (after the rescale), where a
/// key read is `(l−1)·l·N·8` per half — the HE-MxV paper uses `l` throughout (its eqs. (7)–(12)).
#[test]
fn mxv_key_traffic_matches_equation_12() {
    use basalt_circuits::lintrans::Strategy;
    use basalt_circuits::lintrans::mxv_hybrid::MxvHybrid;
    let params = Parameters::preset("MXV_SET_B").expect("preset");
    let (m, l, n_ring) = (1024u64, 7u64, 1u64 << 14);
    let w = std::sync::Arc::new(vec![vec![0.5; 1024]; 1024]);
    let s = Strategy::Diagonal { hoisting: basalt_circuits::lintrans::Hoisting::None };
    let mxv = MxvHybrid::new(&params, w, params.max_slots(), s, params.max_level()).unwrap();
    let c = mxv.predicted_cost(&params);
    let b_ksk = |l: u64| l * (l + 1) * n_ring * 8;
    assert_eq!(c.key_switches, m - 1 + 3);
    assert_eq!(c.key_bytes, 2 * b_ksk(l) * (m - 1) + 2 * b_ksk(l - 1) * 3);
    println!(
        "1Kx1K Set-B: {} key switches, {:.2} GB of key reads (paper: (m + log k)·14.68 MB)",
        c.key_switches,
        c.key_bytes as f64 / 1e9
    );
}
