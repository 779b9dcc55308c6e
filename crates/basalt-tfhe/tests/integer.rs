//! Radix integers against Rust's wrapping integer arithmetic.
//!
//! * `toy_*`: every pair of 4-bit values (2 blocks), signed and unsigned, every operation, on an
//!   insecure 2+2-bit set (same message/carry layout and code path as TFHE-rs's 2_2 set, smaller
//!   `n`, `N` so that the exhaustive runs stay fast).
//! * `tfhers_2_2_*`: the real 128-bit 2+2 set: exhaustive 4-bit add and mul, random 8- to
//!   64-bit operands for every operation, bad input.
//! * `exhaustive_8bit_*` (ignored, hours): every pair of 8-bit values on the real set
//!   (`cargo test --release -p basalt-tfhe --test integer -- --ignored`).

use basalt_tfhe::integer::bitwise::BitOp;
use basalt_tfhe::integer::comparison::Order;
use basalt_tfhe::integer::shift::ShiftKind;
use basalt_tfhe::integer::{
    BoolCiphertext, IntegerClient, IntegerError, IntegerServer, IntegerType, RadixCiphertext,
};
use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};
use basalt_tfhe::random::Csprng;

type Ct = RadixCiphertext<u64>;

/// Insecure 2+2-bit set: n = 256, N = 1024 (about 8× cheaper bootstraps than the real set).
fn toy_2_2() -> TfheParams {
    let lit = toy::literal(64, 256, 1024, (23, 1), (4, 4), 4, 4, AtomicPattern::KsPbs);
    TfheParams::from_literal(lit, true).unwrap()
}

struct Fx {
    ck: IntegerClient<u64>,
    sk: IntegerServer<u64>,
    rng: Csprng,
}

impl Fx {
    fn new(params: &TfheParams, seed: u64) -> Self {
        let mut rng = Csprng::from_seed(seed);
        let ck = IntegerClient::with_rng(params, &mut rng).unwrap();
        let sk = ck.server_with(&mut rng);
        Fx { ck, sk, rng }
    }
    fn enc(&mut self, v: i128, ty: IntegerType) -> Ct {
        self.ck.encrypt_with(v, ty, &mut self.rng).unwrap()
    }
    fn dec(&self, c: &Ct) -> i128 {
        self.ck.decrypt(c).unwrap()
    }
    fn decb(&self, c: &BoolCiphertext<u64>) -> bool {
        self.ck.decrypt_bool(c).unwrap()
    }
}

/// `v` reduced to the type (two's complement wrap).
fn wrap(v: i128, ty: IntegerType) -> i128 {
    ty.decode(v as u128)
}

fn shift_ref(a: i128, k: u64, kind: ShiftKind, ty: IntegerType) -> i128 {
    let bits = ty.bits as u64;
    let k = (k % bits) as u32;
    let u = (a as u128) & ty.mask();
    let r = match kind {
        ShiftKind::Left => u << k,
        ShiftKind::Right if ty.signed => return a >> k,
        ShiftKind::Right => u >> k,
        ShiftKind::RotateLeft => (u << k) | (u >> ((bits as u32 - k) % bits as u32)),
        ShiftKind::RotateRight => (u >> k) | (u << ((bits as u32 - k) % bits as u32)),
    };
    wrap(r as i128, ty)
}

const KINDS: [ShiftKind; 4] =
    [ShiftKind::Left, ShiftKind::Right, ShiftKind::RotateLeft, ShiftKind::RotateRight];
const ORDERS: [Order; 4] = [Order::Lt, Order::Le, Order::Gt, Order::Ge];

fn order_ref(o: Order, a: i128, b: i128) -> bool {
    match o {
        Order::Lt => a < b,
        Order::Le => a <= b,
        Order::Gt => a > b,
        Order::Ge => a >= b,
    }
}

/// Every binary operation on one pair, checked.
fn check_pair(fx: &Fx, ty: IntegerType, a: i128, b: i128, ca: &Ct, cb: &Ct, all: bool) {
    let sk = &fx.sk;
    let ctx = format!("{ty} a={a} b={b}");
    assert_eq!(fx.dec(&sk.add(ca, cb).unwrap()), wrap(a + b, ty), "add {ctx}");
    assert_eq!(fx.dec(&sk.sub(ca, cb).unwrap()), wrap(a - b, ty), "sub {ctx}");
    assert_eq!(fx.dec(&sk.mul(ca, cb).unwrap()), wrap(a * b, ty), "mul {ctx}");
    assert_eq!(fx.decb(&sk.lt(ca, cb).unwrap()), a < b, "lt {ctx}");
    if !all {
        return;
    }
    for o in ORDERS {
        assert_eq!(fx.decb(&sk.compare(ca, cb, o).unwrap()), order_ref(o, a, b), "{o:?} {ctx}");
    }
    assert_eq!(fx.decb(&sk.eq(ca, cb).unwrap()), a == b, "eq {ctx}");
    assert_eq!(fx.decb(&sk.ne(ca, cb).unwrap()), a != b, "ne {ctx}");
    assert_eq!(fx.dec(&sk.min(ca, cb).unwrap()), a.min(b), "min {ctx}");
    assert_eq!(fx.dec(&sk.max(ca, cb).unwrap()), a.max(b), "max {ctx}");
    for op in [BitOp::And, BitOp::Or, BitOp::Xor] {
        let want = wrap(op_ref(op, a, b), ty);
        assert_eq!(fx.dec(&sk.bitop(op, ca, cb).unwrap()), want, "{op:?} {ctx}");
    }
}

fn op_ref(op: BitOp, a: i128, b: i128) -> i128 {
    match op {
        BitOp::And => a & b,
        BitOp::Or => a | b,
        BitOp::Xor => a ^ b,
    }
}

/// Every unary and clear-operand operation on one value.
fn check_unary(fx: &Fx, ty: IntegerType, a: i128, ca: &Ct, clears: &[i128]) {
    let sk = &fx.sk;
    assert_eq!(fx.dec(&sk.neg(ca).unwrap()), wrap(-a, ty), "neg {ty} {a}");
    assert_eq!(fx.dec(&sk.bitnot(ca).unwrap()), wrap(!a, ty), "not {ty} {a}");
    for &c in clears {
        assert_eq!(fx.dec(&sk.scalar_add(ca, c).unwrap()), wrap(a + c, ty), "{a} + {c} ({ty})");
        assert_eq!(fx.dec(&sk.scalar_sub(ca, c).unwrap()), wrap(a - c, ty), "{a} - {c} ({ty})");
        assert_eq!(fx.dec(&sk.scalar_mul(ca, c).unwrap()), wrap(a * c, ty), "{a} * {c} ({ty})");
    }
}

fn check_shifts(fx: &Fx, ty: IntegerType, a: i128, ca: &Ct, amounts: &[u64], enc: &[Ct]) {
    for kind in KINDS {
        for &k in amounts {
            let got = fx.dec(&fx.sk.shift_clear(ca, k, kind).unwrap());
            assert_eq!(got, shift_ref(a, k, kind, ty), "{kind:?} {ty} {a} by {k}");
        }
        for (k, ck) in enc.iter().enumerate() {
            let got = fx.dec(&fx.sk.shift(ca, ck, kind).unwrap());
            assert_eq!(got, shift_ref(a, k as u64, kind, ty), "{kind:?} {ty} {a} by enc {k}");
        }
    }
}

fn values(ty: IntegerType) -> Vec<i128> {
    (ty.min()..=ty.max()).collect()
}

/// Every pair of 4-bit values for every binary operation (signed types: the operations whose
/// result differs from unsigned ones in two's complement), every value for the unary, clear and
/// shift operations.
#[test]
fn toy_exhaustive_4bit_unsigned_and_signed() {
    let mut fx = Fx::new(&toy_2_2(), 1);
    let amount_ty = IntegerType::unsigned(4);
    let enc_amounts: Vec<Ct> = (0..4).map(|k| fx.enc(k, amount_ty)).collect();
    for ty in [IntegerType::unsigned(4), IntegerType::signed(4)] {
        let vals = values(ty);
        let cts: Vec<Ct> = vals.iter().map(|&v| fx.enc(v, ty)).collect();
        let sk = &fx.sk;
        for (&a, ca) in vals.iter().zip(&cts) {
            for (&b, cb) in vals.iter().zip(&cts) {
                let ctx = format!("{ty} a={a} b={b}");
                if !ty.signed {
                    check_pair(&fx, ty, a, b, ca, cb, false);
                    assert_eq!(fx.decb(&sk.eq(ca, cb).unwrap()), a == b, "eq {ctx}");
                    assert_eq!(fx.decb(&sk.ne(ca, cb).unwrap()), a != b, "ne {ctx}");
                    for op in [BitOp::And, BitOp::Or, BitOp::Xor] {
                        let want = wrap(op_ref(op, a, b), ty);
                        assert_eq!(fx.dec(&sk.bitop(op, ca, cb).unwrap()), want, "{op:?} {ctx}");
                    }
                }
                for o in ORDERS {
                    let got = fx.decb(&sk.compare(ca, cb, o).unwrap());
                    assert_eq!(got, order_ref(o, a, b), "{o:?} {ctx}");
                }
                if ty.signed {
                    assert_eq!(fx.dec(&sk.min(ca, cb).unwrap()), a.min(b), "min {ctx}");
                    assert_eq!(fx.dec(&sk.max(ca, cb).unwrap()), a.max(b), "max {ctx}");
                }
            }
        }
        for (i, (&a, ca)) in vals.iter().zip(&cts).enumerate() {
            let clears = [vals[(i * 7 + 3) % 16], vals[(i * 5 + 11) % 16], -1, 2];
            check_unary(&fx, ty, a, ca, &clears);
            let enc = if i % 4 == 1 { &enc_amounts[..] } else { &[] };
            check_shifts(&fx, ty, a, ca, &[0, 1, 2, 3, 5], enc);
        }
        // select on both conditions for a spread of pairs
        for c in [false, true] {
            let cond = fx.ck.encrypt_bool(c).unwrap();
            for (i, j) in [(0, 15), (3, 9), (15, 15), (7, 8)] {
                let got = fx.dec(&fx.sk.select(&cond, &cts[i], &cts[j]).unwrap());
                assert_eq!(got, if c { vals[i] } else { vals[j] }, "select {c} {ty}");
            }
        }
    }
}

#[test]
fn toy_8bit_chains_keep_carries_clean() {
    // Long chains of operations (results feeding results) never overflow a block: each value is
    // checked after every step against u8/i8 wrapping arithmetic.
    let mut fx = Fx::new(&toy_2_2(), 2);
    let mut rng = Csprng::from_seed(3);
    for ty in [IntegerType::unsigned(8), IntegerType::signed(8)] {
        let r = |rng: &mut Csprng| wrap(rng.next_u64() as i128, ty);
        let (mut x, mut y) = (r(&mut rng), r(&mut rng));
        let (mut cx, mut cy) = (fx.enc(x, ty), fx.enc(y, ty));
        for step in 0..24 {
            let c = r(&mut rng);
            let (nx, ncx) = match step % 8 {
                0 => (wrap(x + y, ty), fx.sk.add(&cx, &cy).unwrap()),
                1 => (wrap(x * y, ty), fx.sk.mul(&cx, &cy).unwrap()),
                2 => (wrap(x - y, ty), fx.sk.sub(&cx, &cy).unwrap()),
                3 => (wrap(x * c, ty), fx.sk.scalar_mul(&cx, c).unwrap()),
                4 => (if x < y { y } else { x }, fx.sk.max(&cx, &cy).unwrap()),
                5 => (wrap(x ^ y, ty), fx.sk.bitxor(&cx, &cy).unwrap()),
                6 => (wrap(x + c, ty), fx.sk.scalar_add(&cx, c).unwrap()),
                _ => {
                    let k = (c as u64) % 8;
                    (
                        shift_ref(x, k, ShiftKind::RotateLeft, ty),
                        fx.sk.shift_clear(&cx, k, ShiftKind::RotateLeft).unwrap(),
                    )
                }
            };
            // select keeps noise level 2 blocks: feed its result on.
            let cond = fx.sk.gt(&ncx, &cy).unwrap();
            let want_gt = nx > y;
            assert_eq!(fx.decb(&cond), want_gt, "{ty} step {step}");
            let (sx, scx) = if step % 3 == 0 {
                (if want_gt { nx } else { y }, fx.sk.select(&cond, &ncx, &cy).unwrap())
            } else {
                (nx, ncx)
            };
            for b in scx.blocks() {
                assert!(b.degree() < 16 && b.noise_level() <= fx.sk.max_noise_level());
            }
            assert_eq!(fx.dec(&scx), sx, "{ty} step {step}");
            (x, cx, y, cy) = (y, cy, sx, scx);
        }
    }
}

#[test]
fn toy_boolean_algebra() {
    let mut fx = Fx::new(&toy_2_2(), 4);
    let bools: Vec<_> =
        [false, true].iter().map(|&b| (b, fx.ck.encrypt_bool(b).unwrap())).collect();
    for (x, cx) in &bools {
        assert_eq!(fx.decb(&fx.sk.bool_not(cx).unwrap()), !x);
        for (y, cy) in &bools {
            assert_eq!(fx.decb(&fx.sk.bool_and(cx, cy).unwrap()), x & y);
            assert_eq!(fx.decb(&fx.sk.bool_or(cx, cy).unwrap()), x | y);
            assert_eq!(fx.decb(&fx.sk.bool_xor(cx, cy).unwrap()), x ^ y);
            // a negated condition (noise kept) still selects
            let n = fx.sk.bool_not(&fx.sk.bool_xor(cx, cy).unwrap()).unwrap();
            let ty = IntegerType::unsigned(8);
            let (a, b) = (fx.enc(17, ty), fx.enc(200, ty));
            let got = fx.dec(&fx.sk.select(&n, &a, &b).unwrap());
            assert_eq!(got, if x == y { 17 } else { 200 });
        }
        let i = fx.sk.bool_to_integer(cx, IntegerType::unsigned(16)).unwrap();
        assert_eq!(fx.dec(&i), *x as i128);
    }
}

fn real() -> TfheParams {
    TfheParams::preset("TFHERS_2_2_KS_PBS", false).unwrap()
}

#[test]
fn tfhers_2_2_exhaustive_4bit_add_mul() {
    let mut fx = Fx::new(&real(), 5);
    let ty = IntegerType::unsigned(4);
    let vals = values(ty);
    let cts: Vec<Ct> = vals.iter().map(|&v| fx.enc(v, ty)).collect();
    for (&a, ca) in vals.iter().zip(&cts) {
        for (&b, cb) in vals.iter().zip(&cts) {
            let sk = &fx.sk;
            assert_eq!(fx.dec(&sk.add(ca, cb).unwrap()), wrap(a + b, ty), "add {a} {b}");
            assert_eq!(fx.dec(&sk.mul(ca, cb).unwrap()), wrap(a * b, ty), "mul {a} {b}");
        }
    }
}

#[test]
fn tfhers_2_2_random_8_to_64_bits() {
    let mut fx = Fx::new(&real(), 6);
    let mut rng = Csprng::from_seed(7);
    for bits in [8u32, 16, 32, 64] {
        for signed in [false, true] {
            let ty = IntegerType { bits, signed };
            let r = |rng: &mut Csprng| wrap(rng.next_u64() as i128, ty);
            // Wide types cost more: fewer samples (64-bit mul is ~1,000 bootstraps).
            let samples = if bits <= 16 { 2 } else { 1 };
            for _ in 0..samples {
                let (a, b) = (r(&mut rng), r(&mut rng));
                let (ca, cb) = (fx.enc(a, ty), fx.enc(b, ty));
                assert_eq!(fx.dec(&ca), a);
                let all = bits <= 16 || signed;
                check_pair(&fx, ty, a, b, &ca, &cb, all);
                // equal operands exercise the EQ path of every comparison
                let ca2 = fx.enc(a, ty);
                assert!(fx.decb(&fx.sk.eq(&ca, &ca2).unwrap()));
                assert!(!fx.decb(&fx.sk.lt(&ca, &ca2).unwrap()));
                if bits <= 16 {
                    check_unary(&fx, ty, a, &ca, &[r(&mut rng)]);
                    let k = rng.next_u64() % bits as u64;
                    check_shifts(&fx, ty, a, &ca, &[k, 1], &[]);
                    let amt = fx.enc(k as i128, IntegerType::unsigned(8));
                    let got = fx.dec(&fx.sk.shift(&ca, &amt, ShiftKind::Right).unwrap());
                    assert_eq!(got, shift_ref(a, k, ShiftKind::Right, ty));
                }
            }
        }
    }
}

#[test]
fn bad_input_is_a_named_error() {
    let params = toy_2_2();
    let mut fx = Fx::new(&params, 8);
    let u8t = IntegerType::unsigned(8);
    let i8t = IntegerType::signed(8);
    // Out of range for the type.
    assert!(matches!(fx.ck.encrypt(256, u8t), Err(IntegerError::OutOfRange { .. })));
    assert!(matches!(fx.ck.encrypt(-1, u8t), Err(IntegerError::OutOfRange { .. })));
    assert!(matches!(fx.ck.encrypt(128, i8t), Err(IntegerError::OutOfRange { .. })));
    assert!(fx.ck.encrypt(-128, i8t).is_ok());
    assert!(matches!(
        fx.ck.encrypt(0, IntegerType::unsigned(7)),
        Err(IntegerError::Width { bits: 7, .. })
    ));
    assert!(matches!(fx.ck.encrypt(0, IntegerType::unsigned(66)), Err(IntegerError::Width { .. })));
    // Mixing widths, signedness or keys.
    let a = fx.enc(3, u8t);
    let b = fx.enc(3, IntegerType::unsigned(16));
    let c = fx.enc(3, i8t);
    assert!(matches!(fx.sk.add(&a, &b), Err(IntegerError::TypeMismatch { .. })));
    assert!(matches!(fx.sk.lt(&a, &c), Err(IntegerError::TypeMismatch { .. })));
    let other = Fx::new(&params, 9);
    let e = other.sk.add(&a, &a).unwrap_err();
    assert!(e.to_string().contains("key mismatch"), "{e}");
    assert!(other.ck.decrypt(&a).is_err());
    // A set without room for carries is refused.
    assert!(matches!(
        IntegerClient::<u64>::with_rng(&toy::u64_small(), &mut Csprng::from_seed(1)),
        Err(IntegerError::Unsupported(_))
    ));
    // Encrypted shift of a non-power-of-two width.
    let w = fx.enc(5, IntegerType::unsigned(6));
    assert!(matches!(fx.sk.shift(&w, &a, ShiftKind::Left), Err(IntegerError::Unsupported(_))));
}

/// Every pair of 8-bit values on the real set: hours (65,536 pairs × ~130 bootstraps), so
/// outside CI; run by `make test-full` (`--include-ignored`). CI covers every 4-bit pair.
#[test]
#[ignore = "hours of PBS: run by `make test-full`"]
fn exhaustive_8bit_tfhers_2_2() {
    let mut fx = Fx::new(&real(), 10);
    for ty in [IntegerType::unsigned(8), IntegerType::signed(8)] {
        let vals = values(ty);
        let cts: Vec<Ct> = vals.iter().map(|&v| fx.enc(v, ty)).collect();
        for (&a, ca) in vals.iter().zip(&cts) {
            for (&b, cb) in vals.iter().zip(&cts) {
                check_pair(&fx, ty, a, b, ca, cb, true);
            }
            check_unary(&fx, ty, a, ca, &[1, 3, 100, -7]);
        }
    }
}
