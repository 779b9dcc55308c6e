//! BConv, ModUp, ModDown and Rescale against exact big-integer references on random inputs.
//!
//! Each reference recomputes, with unbounded integers, the exact value the fast RNS algorithm is
//! defined to produce (BConv and ModUp including the fast conversion's `u·Q` overshoot; ModDown
//! and Rescale exactly rounded), so equality must be exact.
#![allow(clippy::needless_range_loop)] // references index by coefficient, as the maths does

use basalt_math::bench::random_poly;
use basalt_math::rns::{BConv, BConvMode, mod_down, mod_down_rescale, mod_up, rescale};
use basalt_math::{Domain, RingContext, primes::ntt_primes};
use num_bigint::{BigInt, BigUint};
use num_traits::{ToPrimitive, Zero};
use proptest::prelude::*;

const LOG_N: u32 = 5;
const N: usize = 1 << LOG_N;

fn ctx(bits: u32, q_count: usize, p_count: usize) -> RingContext {
    let q = ntt_primes(bits, LOG_N, q_count, &[]).unwrap();
    let p = ntt_primes((bits + 1).min(61), LOG_N, p_count, &q).unwrap();
    RingContext::new(LOG_N, &q, &p).unwrap()
}

/// The exact BConv value: Σ_i [x_i · (D/d_i)^{-1}]_{d_i} · D/d_i (an integer < |from|·D).
fn bconv_exact(moduli: &[u64], residues: &[u64]) -> BigUint {
    let d: BigUint = moduli.iter().map(|&m| BigUint::from(m)).product();
    let mut y = BigUint::zero();
    for (&m, &x) in moduli.iter().zip(residues) {
        let hat = &d / m;
        let hat_mod = (&hat % m).to_u64().unwrap();
        let inv = BigUint::from(hat_mod).modpow(&BigUint::from(m - 2), &BigUint::from(m));
        let t = (BigUint::from(x) * inv) % m;
        y += t * hat;
    }
    y
}

fn residue(x: &BigInt, m: u64) -> u64 {
    let m = BigInt::from(m);
    (((x % &m) + &m) % &m).to_u64().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn bconv_matches_exact_formula(seed in any::<u64>(), bits in prop::sample::select(vec![28u32, 40, 54, 60])) {
        let c = ctx(bits, 5, 3);
        let a = random_poly(&c, 5, 3, seed);
        let from = [1usize, 3, 4];
        let to = [0usize, 2, 5, 6, 7];
        let conv = BConv::new(&c, &from, &to);
        let mut out = vec![vec![0u64; N]; to.len()];
        {
            let input: Vec<&[u64]> = from.iter().map(|&g| a.limb(g)).collect();
            let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
            conv.apply(&input, &mut o);
        }
        let fm: Vec<u64> = from.iter().map(|&g| c.moduli()[g].value()).collect();
        for k in 0..N {
            let y = bconv_exact(&fm, &from.iter().map(|&g| a.limb(g)[k]).collect::<Vec<_>>());
            for (j, &g) in to.iter().enumerate() {
                prop_assert_eq!(out[j][k], (&y % c.moduli()[g].value()).to_u64().unwrap());
            }
        }
    }

    #[test]
    fn bconv_of_many_inputs_fast_exact_and_fused_match_reference(seed in any::<u64>(), bits in prop::sample::select(vec![40u32, 60])) {
        // 10 inputs: beyond the in-register path (at most 8), through the blocked accumulator.
        for from_len in [1usize, 5, 8, 10] {
            let c = ctx(bits, 12, 3);
            let a = random_poly(&c, 12, 3, seed);
            let from: Vec<usize> = (0..from_len).collect();
            let to: Vec<usize> = (10..15).collect();
            let conv = BConv::new(&c, &from, &to);
            let input: Vec<&[u64]> = from.iter().map(|&g| a.limb(g)).collect();
            let run = |exact: bool| {
                let mut out = vec![vec![0u64; N]; to.len()];
                let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
                if exact { conv.apply_exact(&input, &mut o) } else { conv.apply(&input, &mut o) }
                out
            };
            let (fast, exact) = (run(false), run(true));
            let centered = {
                let mut out = vec![vec![0u64; N]; to.len()];
                let mut o: Vec<&mut [u64]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
                conv.apply_mode_then(&input, &mut o, BConvMode::Centered, &|_, _| {});
                out
            };
            let fm: Vec<u64> = from.iter().map(|&g| c.moduli()[g].value()).collect();
            let d: BigUint = fm.iter().map(|&m| BigUint::from(m)).product();
            for k in 0..N {
                let y = bconv_exact(&fm, &from.iter().map(|&g| a.limb(g)[k]).collect::<Vec<_>>());
                for (j, &g) in to.iter().enumerate() {
                    let m = c.moduli()[g].value();
                    prop_assert_eq!(fast[j][k], (&y % m).to_u64().unwrap());
                    prop_assert_eq!(exact[j][k], ((&y % &d) % m).to_u64().unwrap());
                    // Centred: X or X − D, whichever is in (−D/2, D/2].
                    let x = BigInt::from(&y % &d);
                    let x = if x > BigInt::from(&d >> 1u32) { x - BigInt::from(d.clone()) } else { x };
                    prop_assert_eq!(centered[j][k], residue(&x, m));
                }
            }
            // The fused form hands over the same limbs.
            for (ex, want) in [(false, &fast), (true, &exact)] {
                let mut got = vec![Vec::new(); to.len()];
                let mode = if ex { BConvMode::Exact } else { BConvMode::Fast };
                conv.convert_each(&input, &mut got, mode, &|_, g: &mut Vec<u64>, limb: &mut [u64]| {
                    *g = limb.to_vec()
                });
                prop_assert_eq!(&got, want);
            }
        }
    }

    #[test]
    fn mod_down_and_rescale_match_exact_rounded_division(seed in any::<u64>(), bits in prop::sample::select(vec![28u32, 45, 61])) {
        let c = ctx(bits, 4, 2);
        // (Q limbs, P limbs, Q limbs kept): ModDown, Rescale, and both merged (P and top Q limbs).
        let cases = [(4usize, 2usize, 4usize), (3, 2, 3), (4, 0, 3), (4, 0, 2), (4, 2, 3), (4, 2, 2)];
        for (q_limbs, p_limbs, keep) in cases {
            let x = random_poly(&c, q_limbs, p_limbs, seed);
            let change = |x| match (p_limbs, q_limbs - keep) {
                (0, drop) => rescale(&c, x, drop),
                (_, 0) => mod_down(&c, x),
                (_, drop) => mod_down_rescale(&c, x, drop),
            };
            let got = change(&x);
            // Same result through the NTT domain.
            let mut xn = x.clone();
            c.ntt_assign(&mut xn);
            let mut got_n = change(&xn);
            c.intt_assign(&mut got_n);
            prop_assert_eq!(&got_n, &got);
            // Reference: X + H − y divided exactly by D.
            let big_x = c.to_bigint_centered(&x);
            let drop: Vec<u64> = (keep..x.limbs()).map(|i| c.modulus_of(&x, i).value()).collect();
            let d: BigUint = drop.iter().map(|&m| BigUint::from(m)).product();
            let h = BigInt::from(&d >> 1u32);
            for k in 0..N {
                let xh = &big_x[k] + &h;
                // Exact rounding: floor((X + H) / D), with floor division on big integers.
                let d_int = BigInt::from(d.clone());
                let y = ((&xh % &d_int) + &d_int) % &d_int;
                let num = &xh - &y;
                prop_assert!((&num % &d_int).is_zero());
                let r = num / &d_int;
                for j in 0..keep {
                    prop_assert_eq!(got.limb(j)[k], residue(&r, c.q()[j].value()));
                }
            }
        }
    }

    #[test]
    fn mod_up_extends_a_digit_exactly(seed in any::<u64>()) {
        let c = ctx(50, 6, 2);
        let a = random_poly(&c, 5, 0, seed);
        let mut a_ntt = a.clone();
        c.ntt_assign(&mut a_ntt);
        for digit in [0..2usize, 2..4, 4..5] {
            let up = mod_up(&c, &a, &a_ntt, digit.clone(), 2);
            prop_assert_eq!((up.q_limbs(), up.p_limbs(), up.domain()), (5, 2, Domain::Ntt));
            for i in digit.clone() {
                prop_assert_eq!(up.limb(i), a_ntt.limb(i));
            }
            let mut coeff = up.clone();
            c.intt_assign(&mut coeff);
            let dm: Vec<u64> = digit.clone().map(|i| c.q()[i].value()).collect();
            for k in 0..N {
                let y = bconv_exact(&dm, &digit.clone().map(|i| a.limb(i)[k]).collect::<Vec<_>>());
                for i in 0..coeff.limbs() {
                    let m = c.modulus_of(&coeff, i).value();
                    prop_assert_eq!(coeff.limb(i)[k], (&y % m).to_u64().unwrap());
                }
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let c = ctx(54, 8, 3);
    let n = c.n();
    assert_eq!(n, N);
    let x = random_poly(&c, 8, 3, 42);
    let run = || {
        let mut y = x.clone();
        c.ntt_assign(&mut y);
        mod_down(&c, &y)
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(run);
    let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(run);
    assert_eq!(one, two);
}

/// ModDown with the automorphism folded into its last pass equals the automorphism of the
/// plain ModDown (with and without the addend), for rotations and conjugation, and reports
/// ModDown's kernels only.
#[test]
fn mod_down_automorphism_is_automorphism_of_mod_down() {
    use basalt_math::rns::{mod_down_add, mod_down_automorphism};
    let ctx = ctx(40, 4, 2);
    let mut x = random_poly(&ctx, 4, 2, 31);
    ctx.ntt_assign(&mut x);
    let mut c = random_poly(&ctx, 4, 0, 32);
    ctx.ntt_assign(&mut c);
    let two_n = 2 * N as u64;
    for galois in
        [ctx.galois_element_for_rotation(1), ctx.galois_element_for_rotation(-3), two_n - 1]
    {
        let want = ctx.automorphism(&mod_down_add(&ctx, &x, &c), galois);
        let (got, trace) =
            basalt_trace::record(|| mod_down_automorphism(&ctx, &x, Some(&c), galois));
        assert_eq!(got, want, "galois={galois}");
        let (_, plain) = basalt_trace::record(|| mod_down(&ctx, &x));
        assert_eq!(trace, plain, "galois={galois}: trace");
        let want = ctx.automorphism(&mod_down(&ctx, &x), galois);
        assert_eq!(mod_down_automorphism(&ctx, &x, None, galois), want, "galois={galois}");
    }
}
