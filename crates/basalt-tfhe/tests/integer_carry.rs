//! Carry propagation: the ripple and the Hillis–Steele scan against wrapping arithmetic, and the
//! automatic choice between them.

use basalt_tfhe::integer::{
    CarryPropagation, IntegerClient, IntegerServer, IntegerType, RadixCiphertext, carry_rounds,
};
use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};
use basalt_tfhe::random::Csprng;

/// Insecure 2+2-bit set (same layout and code path as TFHE-rs's 2_2 set, cheaper bootstraps).
fn toy_2_2() -> TfheParams {
    let lit = toy::literal(64, 256, 1024, (23, 1), (4, 4), 4, 4, AtomicPattern::KsPbs);
    TfheParams::from_literal(lit, true).unwrap()
}

fn keys(seed: u64) -> (IntegerClient<u64>, IntegerServer<u64>, Csprng) {
    let mut rng = Csprng::from_seed(seed);
    let ck = IntegerClient::with_rng(&toy_2_2(), &mut rng).unwrap();
    let sk = ck.server_with(&mut rng);
    (ck, sk, rng)
}

fn wrap(v: i128, ty: IntegerType) -> i128 {
    ty.decode(v as u128)
}

#[test]
fn rounds_model_and_automatic_choice() {
    // 32-bit operands (16 blocks), one thread: 76 bootstraps for the scan, 31 for the ripple.
    assert_eq!(carry_rounds(16, 1), (76, 31));
    // Two threads: the ripple's digit and carry run side by side.
    assert_eq!(carry_rounds(16, 2), (40, 16));
    for (blocks, threads, want) in [
        (16, 1, CarryPropagation::Ripple),
        (16, 2, CarryPropagation::Ripple),
        (16, 16, CarryPropagation::Scan),
        (32, 2, CarryPropagation::Ripple),
        (32, 32, CarryPropagation::Scan),
        (4, 2, CarryPropagation::Ripple),
    ] {
        assert_eq!(CarryPropagation::Auto.resolve(blocks, threads), want, "{blocks} {threads}");
    }
    // A forced choice is kept.
    assert_eq!(CarryPropagation::Scan.resolve(16, 1), CarryPropagation::Scan);
    assert_eq!(CarryPropagation::Ripple.resolve(16, 64), CarryPropagation::Ripple);
}

/// Every pair of 4-bit values (2 blocks), signed and unsigned: add and sub with the ripple and
/// with the scan.
#[test]
fn exhaustive_4bit_ripple_and_scan() {
    let (ck, mut sk, mut rng) = keys(21);
    for ty in [IntegerType::unsigned(4), IntegerType::signed(4)] {
        let vals: Vec<i128> = (ty.min()..=ty.max()).collect();
        let cts: Vec<RadixCiphertext<u64>> =
            vals.iter().map(|&v| ck.encrypt_with(v, ty, &mut rng).unwrap()).collect();
        for carry in [CarryPropagation::Ripple, CarryPropagation::Scan] {
            sk.set_carry_propagation(carry);
            for (&a, ca) in vals.iter().zip(&cts) {
                for (&b, cb) in vals.iter().zip(&cts) {
                    let got = ck.decrypt(&sk.add(ca, cb).unwrap()).unwrap();
                    assert_eq!(got, wrap(a + b, ty), "{carry:?} {a} + {b}");
                    let got = ck.decrypt(&sk.sub(ca, cb).unwrap()).unwrap();
                    assert_eq!(got, wrap(a - b, ty), "{carry:?} {a} - {b}");
                }
            }
        }
    }
}

/// Random 8- to 64-bit operands, signed and unsigned: add, sub, neg, mul and a chain of sums
/// with each algorithm; both give the wrapping result and clean blocks.
#[test]
fn random_wide_ripple_and_scan() {
    let (ck, mut sk, mut rng) = keys(22);
    let mut vals = Csprng::from_seed(23);
    for bits in [8u32, 16, 32, 64] {
        for signed in [false, true] {
            let ty = IntegerType { bits, signed };
            let (a, b) = (wrap(vals.next_u64() as i128, ty), wrap(vals.next_u64() as i128, ty));
            // Operands with long carry chains too: all ones plus one.
            let (c, d) = (wrap(-1, ty), 1);
            let enc = |v: i128, rng: &mut Csprng| ck.encrypt_with(v, ty, rng).unwrap();
            let (ca, cb, cc, cd) =
                (enc(a, &mut rng), enc(b, &mut rng), enc(c, &mut rng), enc(d, &mut rng));
            for carry in [CarryPropagation::Ripple, CarryPropagation::Scan] {
                sk.set_carry_propagation(carry);
                let ctx = format!("{carry:?} {ty} a={a} b={b}");
                let dec = |x: &RadixCiphertext<u64>| ck.decrypt(x).unwrap();
                assert_eq!(dec(&sk.add(&ca, &cb).unwrap()), wrap(a + b, ty), "add {ctx}");
                assert_eq!(dec(&sk.sub(&ca, &cb).unwrap()), wrap(a - b, ty), "sub {ctx}");
                assert_eq!(dec(&sk.neg(&ca).unwrap()), wrap(-a, ty), "neg {ctx}");
                assert_eq!(dec(&sk.add(&cc, &cd).unwrap()), wrap(c + d, ty), "carry chain {ctx}");
                if bits <= 16 {
                    assert_eq!(dec(&sk.mul(&ca, &cb).unwrap()), wrap(a * b, ty), "mul {ctx}");
                }
                let mut acc = sk.add(&ca, &cb).unwrap();
                let mut want = wrap(a + b, ty);
                for _ in 0..3 {
                    acc = sk.add(&acc, &ca).unwrap();
                    want = wrap(want + a, ty);
                    for blk in acc.blocks() {
                        assert!(blk.degree() < 4 && blk.noise_level() <= 1, "{ctx}");
                    }
                }
                assert_eq!(dec(&acc), want, "chain {ctx}");
            }
        }
    }
}
