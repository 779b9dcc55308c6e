//! Level-dependent key switching (`key_switch_bands`, CraterLake §3.1): the digit size and the
//! special modulus follow the level. Real key switches decrypt at levels of every band, traces
//! match the closed forms level by level, and keys refuse levels they hold no part for.

mod common;

use basalt_ckks::keyswitch;
use basalt_ckks::params::KeySwitchBand;
use basalt_ckks::*;
use basalt_trace::{Kernel, record};
use common::{Ctx, check_ks_counts, random_values, rot, setup};

fn band(below: Option<usize>, digits: usize) -> KeySwitchBand {
    KeySwitchBand { below_q_limbs: below, digits }
}

/// 8 Q limbs (60 + 7 × 40 bits), 3 special primes of 61 bits: 1 digit below 4 limbs, 2 below
/// 7, 3 above. Gadgets: α = 1 (1 limb), α = 2 (2 limbs, 1 digit; 4 limbs, 2 digits), α = 3
/// (3 limbs, 1 digit; 5–6 limbs, 2 digits; 7–8 limbs, 3 digits).
fn banded_literal() -> ParametersLiteral {
    let mut lit = ParametersLiteral::toy(10, 60, 40, 7, 61, 3, 1);
    lit.dnum = None;
    lit.log_default_scale = 40.0;
    lit.key_switch_bands = vec![band(Some(4), 1), band(Some(7), 2), band(None, 3)];
    lit
}

fn banded() -> Parameters {
    Parameters::new(banded_literal()).unwrap()
}

#[test]
fn bands_give_each_level_its_digits_and_special_primes() {
    let p = banded();
    let want =
        [(1, 1, 1), (2, 2, 1), (3, 3, 1), (2, 2, 2), (3, 3, 2), (3, 3, 2), (3, 3, 3), (3, 3, 3)];
    for (level, &(alpha, k, dnum)) in want.iter().enumerate() {
        assert_eq!(
            (p.alpha_at(level), p.k_at(level), p.dnum_at(level)),
            (alpha, k, dnum),
            "level {level}"
        );
        let covered: usize = (0..dnum).map(|j| p.digit_range(level, j).len()).sum();
        assert_eq!(covered, level + 1);
    }
    let tops: Vec<(usize, usize)> = p.gadgets().iter().map(|g| (g.alpha, g.top_level)).collect();
    assert_eq!(tops, [(1, 0), (2, 3), (3, 7)]);
    assert_eq!((p.alpha(), p.dnum(), p.k()), (3, 3, 3));
    // The widest modulus a key lives in: Q_7 ∪ P_3 here (all primes), Q_3 ∪ P_2 below.
    let all: f64 = p.q().iter().chain(p.p()).map(|&x| (x as f64).log2()).sum();
    assert!((p.log_qp() - all).abs() < 1e-9);
    assert_eq!(p.security().log_qp, p.log_qp());
    // Bands change the id; the literal survives TOML.
    let mut plain = banded_literal();
    plain.key_switch_bands.clear();
    plain.alpha = Some(3);
    assert_ne!(Parameters::new(plain).unwrap().id(), p.id());
    let text = toml::to_string(&banded_literal()).unwrap();
    assert!(text.contains("below_q_limbs = 4"), "{text}");
    let back: ParametersLiteral = toml::from_str(&text).unwrap();
    assert_eq!(Parameters::new(back).unwrap().id(), p.id());
    // The widest band can need fewer special primes than the top level's limbs: a set where
    // a wide 1-digit band sits below a 2-digit top (CraterLake 80-bit) measures its widest key.
    let mut lit = ParametersLiteral::toy(10, 40, 40, 5, 41, 5, 1);
    lit.dnum = None;
    lit.key_switch_bands = vec![band(Some(6), 1), band(None, 2)];
    let p = Parameters::new(lit).unwrap();
    let q: Vec<f64> = p.q().iter().map(|&x| (x as f64).log2()).collect();
    let pp: Vec<f64> = p.p().iter().map(|&x| (x as f64).log2()).collect();
    let widest = q[..5].iter().sum::<f64>() + pp[..5].iter().sum::<f64>();
    assert_eq!((p.k_at(4), p.k_at(5), p.dnum_at(5)), (5, 3, 2));
    assert!((p.log_qp() - widest).abs() < 1e-9, "{} vs {widest}", p.log_qp());
}

#[test]
fn invalid_bands_are_named_errors() {
    let bad = |f: &dyn Fn(&mut ParametersLiteral)| {
        let mut lit = banded_literal();
        f(&mut lit);
        Parameters::new(lit).unwrap_err()
    };
    assert_eq!(bad(&|l| l.dnum = Some(2)), ParamError::BandsAndDnum);
    assert_eq!(bad(&|l| l.alpha = Some(2)), ParamError::BandsAndDnum);
    for bands in [
        vec![band(Some(4), 0), band(None, 2)],
        vec![band(Some(4), 1), band(Some(7), 2)],
        vec![band(None, 1), band(None, 2)],
        vec![band(Some(4), 1), band(Some(4), 2), band(None, 3)],
        vec![band(Some(1), 1), band(None, 2)],
    ] {
        let e = bad(&|l| l.key_switch_bands = bands.clone());
        assert!(matches!(e, ParamError::BadKeySwitchBands(_)), "{bands:?}: {e}");
    }
    // A bound beyond the chain leaves the bands above it unused (a preset's truncated chain).
    let mut lit = banded_literal();
    lit.key_switch_bands = vec![band(Some(20), 3), band(None, 1)];
    let p = Parameters::new(lit).unwrap();
    assert_eq!((p.dnum_at(7), p.alpha_at(7)), (3, 3));
    // 1 digit at 4 limbs needs 4 special primes; the set has 3.
    let e = bad(&|l| l.key_switch_bands = vec![band(Some(5), 1), band(None, 3)]);
    assert_eq!(e, ParamError::TooFewSpecialPrimes { q_limbs: 4, needed: 4, have: 3 });
    // An unknown field in a band is refused by the parser.
    let text = "log_n = 10\nlog_q = [60, 40]\nlog_p = [61]\nlog_default_scale = 40.0\n\
                key_switch_bands = [{ digits = 1, below = 3 }]\n";
    assert!(toml::from_str::<ParametersLiteral>(text).is_err());
}

fn mul(a: &[Complex64], b: &[Complex64]) -> Vec<Complex64> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

fn bits(c: &Ctx, want: &[Complex64], ct: &Ciphertext) -> f64 {
    c.precision(want, ct).min.l2
}

/// Relinearisation, plain / hoisted / reordered rotations and the lazy `Q∪P` path (lazy baby
/// steps, products with `Q∪P` plaintexts, a giant rotation in `Q∪P`, one ModDown) at a level of
/// every band and gadget.
#[test]
fn key_switches_decrypt_at_levels_of_every_band() {
    for seeded in [false, true] {
        let c = setup(banded(), &[1, 2], seeded);
        let slots = c.params.max_slots();
        let x = random_values(slots, 3);
        for level in [7usize, 5, 4, 3, 2, 1] {
            let what = format!("seeded={seeded} level={level}");
            let ct = c.encrypt(&x, level);
            let sq = c.eval.rescale(&c.eval.mul_relin(&ct, &ct).unwrap()).unwrap();
            let b = bits(&c, &mul(&x, &x), &sq);
            assert!(b > 20.0, "{what}: relinearisation {b:.1} bits");
            let merged = c.eval.mul_relin_rescale(&ct, &ct, false, None, 0.0).unwrap();
            assert!(bits(&c, &mul(&x, &x), &merged) > 20.0, "{what}: ModDown merge");
            for variant in [KsVariant::Hybrid, KsVariant::Reordered] {
                let e = c.eval.clone().with_variant(variant, 2);
                let r = e.rotate(&ct, 1).unwrap();
                let b = bits(&c, &rot(&x, 1), &r);
                assert!(b > 25.0, "{what} {variant:?}: rotation {b:.1} bits");
            }
            let hoisted = c.eval.rotate_hoisted(&ct, &[1, 2]).unwrap();
            assert_eq!(hoisted[0], c.eval.rotate(&ct, 1).unwrap(), "{what}: hoisted = plain");
            assert!(bits(&c, &rot(&x, 2), &hoisted[1]) > 25.0, "{what}: hoisted");
            // Double hoisting: Σ d_i ⊙ rot_i(x) in Q_l ∪ P_l, a giant step there, one ModDown.
            let (d0, d1) = (random_values(slots, 5), random_values(slots, 6));
            let pt_scale = c.params.q()[level] as f64;
            let p0 = c.enc.encode_qp(&d0, slots, level, pt_scale).unwrap();
            let p1 = c.enc.encode_qp(&d1, slots, level, pt_scale).unwrap();
            assert_eq!(p0.poly().p_limbs(), c.params.k_at(level));
            let decomp = c.eval.decompose(&ct).unwrap();
            let lazy = c.eval.rotate_hoisted_lazy(&ct, &decomp, &[0, 1]).unwrap();
            let mut acc = None;
            c.eval.mul_plain_qp_acc(&mut acc, &lazy[0], &p0).unwrap();
            c.eval.mul_plain_qp_acc(&mut acc, &lazy[1], &p1).unwrap();
            let giant = c.eval.rotate_lazy_qp(&acc.unwrap(), 2).unwrap();
            let y = c.eval.rescale(&c.eval.mod_down(&giant).unwrap()).unwrap();
            let want: Vec<Complex64> =
                mul(&d0, &x).iter().zip(mul(&d1, &rot(&x, 1))).map(|(a, b)| a + b).collect();
            let b = bits(&c, &rot(&want, 2), &y);
            assert!(b > 20.0, "{what}: double hoisting {b:.1} bits");
        }
        // Level 0 (1 limb, its own gadget): a rotation still decrypts.
        let ct = c.encrypt(&x, 0);
        let r = c.eval.rotate(&ct, 1).unwrap();
        assert!(bits(&c, &rot(&x, 1), &r) > 12.0, "seeded={seeded}: level 0");
    }
}

/// A `Q∪P` plaintext encoded at a level with fewer special primes than the ciphertext's level
/// needs is refused, not truncated.
#[test]
fn qp_plaintext_with_too_few_special_primes_is_refused() {
    let c = setup(banded(), &[1], false);
    let slots = c.params.max_slots();
    let x = random_values(slots, 9);
    // Level 3 (4 limbs) uses α = 2: 2 special primes; level 2 (3 limbs) uses 3.
    let pt = c.enc.encode_qp(&x, slots, 3, 1e6).unwrap();
    let ct = c.encrypt(&x, 2);
    let lazy = c.eval.rotate_hoisted_lazy(&ct, &c.eval.decompose(&ct).unwrap(), &[0]).unwrap();
    let e = c.eval.mul_plain_qp(&lazy[0], &pt).unwrap_err();
    assert!(matches!(e, CkksError::InvalidPolynomial { .. }), "{e}");
}

/// Real and shape-only keys record the same kernels at every level, and the counts are the
/// closed forms of `keyswitch::cost` with the level's `α` and `P`.
#[test]
fn traces_match_the_closed_forms_level_by_level() {
    for seeded in [false, true] {
        let c = setup(banded(), &[1], seeded);
        let kg = KeyGenerator::new(&c.params);
        let sym_eval =
            Evaluator::new(&c.params, kg.gen_symbolic_evaluation_keys(&[1], true, seeded)).unwrap();
        for level in 0..=c.params.max_level() {
            let what = format!("seeded={seeded} level={level}");
            let ct = c.encrypt(&random_values(4, 1), level);
            let sym = Ciphertext::symbolic(&c.params, level).unwrap();
            let cost = keyswitch::cost(&c.params, level);
            let (_, real) = record(|| c.eval.rotate(&ct, 1).unwrap());
            let (_, symb) = record(|| sym_eval.rotate(&sym, 1).unwrap());
            assert_eq!(real, symb, "{what}: rotation traces differ");
            check_ks_counts(&real, &cost, 0, &what);
            let (l1, k) = (level as u32 + 1, c.params.k_at(level) as u32);
            let load = real.kernels().find(|k| matches!(k, Kernel::KeyLoad { .. })).unwrap();
            let digits = c.params.dnum_at(level) as u32;
            assert_eq!(*load, Kernel::KeyLoad { n: 1024, limbs: l1 + k, digits, seeded });
            let (_, real) = record(|| c.eval.mul_relin(&ct, &ct).unwrap());
            let (_, symb) = record(|| sym_eval.mul_relin(&sym, &sym).unwrap());
            assert_eq!(real, symb, "{what}: HMult traces differ");
            check_ks_counts(&real, &cost, l1 as u64, &what);
        }
    }
}

/// CraterLake Table 1: 1-digit boosted key switching at L residues extends to P with L residues:
/// INTT + NTT = 6L residue transforms and 3L² CRB multiply-adds per residue element.
#[test]
fn one_digit_band_costs_table_1() {
    let mut lit = ParametersLiteral::toy(10, 60, 40, 7, 61, 8, 1);
    lit.dnum = None;
    lit.key_switch_bands = vec![band(None, 1)];
    let p = Parameters::new(lit).unwrap();
    for level in 0..=p.max_level() {
        let big_l = level as u64 + 1;
        let c = keyswitch::cost(&p, level);
        assert_eq!(c.intt_limbs + c.ntt_limbs, 6 * big_l, "level {level}");
        assert_eq!(c.bconv_macs, 3 * big_l * big_l * p.n() as u64, "level {level}");
        assert_eq!(c.key_limbs, 2 * 2 * big_l, "level {level}: a 1-digit KSH is 2 ciphertexts");
    }
}

#[test]
fn keys_refuse_levels_they_hold_no_part_for() {
    let p = banded();
    let kg = KeyGenerator::new(&p);
    let sk = kg.gen_secret_key();
    // Levels 4..=7 use only the α = 3 gadget.
    let kg_high = kg.clone().for_levels(4..=7);
    let keys = kg_high.gen_evaluation_keys(&sk, &[1], false, false);
    assert_eq!(keys.relin.as_ref().unwrap().key.parts().iter().flatten().count(), 1);
    let ev = Evaluator::new(&p, keys).unwrap();
    let enc = Encoder::new(&p);
    let v = random_values(4, 2);
    let at = |level| {
        let pt = enc.encode(&v, 4, level, p.default_scale()).unwrap();
        encryption(&p, &pt, &sk)
    };
    assert!(ev.rotate(&at(5), 1).is_ok());
    let e = ev.rotate(&at(3), 1).unwrap_err();
    // The α = 3 part also serves level 2 (3 limbs, one digit), not level 3 (α = 2).
    assert_eq!(e, CkksError::KeyNotForLevel { level: 3, served: "[2, 4, 5, 6, 7]".into() });
    assert!(e.to_string().contains("level 3"), "{e}");
    let e = ev.mul_relin(&at(0), &at(0)).unwrap_err();
    assert!(matches!(e, CkksError::KeyNotForLevel { level: 0, .. }), "{e}");
    let sym = Ciphertext::symbolic(&p, 1).unwrap();
    let sym_ev =
        Evaluator::new(&p, kg_high.gen_symbolic_evaluation_keys(&[1], false, true)).unwrap();
    assert!(matches!(sym_ev.rotate(&sym, 1), Err(CkksError::KeyNotForLevel { level: 1, .. })));
    let ksk = KeyMaterial::Full(kg_high.gen_key_switch_key(&sk, &sk));
    assert!(ev.switch_key(&at(2), &ksk).is_ok());
    assert!(matches!(ev.switch_key(&at(1), &ksk), Err(CkksError::KeyNotForLevel { .. })));
    // A key of the unbanded twin is another parameter set.
    let mut plain = banded_literal();
    plain.key_switch_bands.clear();
    plain.alpha = Some(3);
    let plain = Parameters::new(plain).unwrap();
    let other = KeyGenerator::new(&plain).gen_relin_key(&SecretKey::generate(&plain), false);
    let e = Evaluator::new(&p, EvaluationKeys::default().with_relin(other)).unwrap_err();
    assert!(matches!(e, CkksError::WrongParams { .. }));
}

fn encryption(p: &Parameters, pt: &Plaintext, sk: &SecretKey) -> Ciphertext {
    basalt_ckks::encryptor::encrypt_sk(p, pt, sk).unwrap()
}

#[test]
fn banded_keys_serialize_expand_and_validate() {
    let p = banded();
    let kg = KeyGenerator::new(&p);
    let (s, s2) = (kg.gen_secret_key(), kg.gen_secret_key());
    let full = kg.gen_key_switch_key(&s2, &s);
    assert_eq!(full.parts().len(), 3);
    assert_eq!(full.digits(), 1 + 2 + 3);
    let seeded = full.to_seeded();
    assert_eq!(seeded.expand(&p).unwrap(), full);
    assert_eq!(KeySwitchKey::from_bytes(&p, &full.to_bytes().unwrap()).unwrap(), full);
    let sb = seeded.to_bytes().unwrap();
    assert_eq!(SeededKeySwitchKey::from_bytes(&p, &sb).unwrap(), seeded);
    // A key with some parts only round-trips with its gaps.
    let part = kg.clone().for_levels(0..=0).gen_key_switch_key(&s2, &s);
    let back = KeySwitchKey::from_bytes(&p, &part.to_bytes().unwrap()).unwrap();
    assert_eq!(back, part);
    assert_eq!(back.parts().iter().map(Option::is_some).collect::<Vec<_>>(), [true, false, false]);
    // A version-2 key (one part for all levels) is refused by name.
    let mut old = sb.clone();
    old[4..8].copy_from_slice(&2u32.to_le_bytes());
    let e = SeededKeySwitchKey::from_bytes(&p, &old).unwrap_err();
    assert!(e.to_string().contains("version 2"), "{e}");
    // Truncations and bit flips are errors, never panics.
    for cut in [1, sb.len() / 3, sb.len() - 1] {
        assert!(SeededKeySwitchKey::from_bytes(&p, &sb[..cut]).is_err());
    }
    for pos in (0..200).map(|i| i * 7 % sb.len()) {
        let mut b = sb.clone();
        b[pos] ^= 0x5a;
        let _ = SeededKeySwitchKey::from_bytes(&p, &b);
    }
}
