//! Radix integers with and without many-LUT bootstrapping: the same results, and how many blind
//! rotations each operation runs either way (counted from the trace: one `ModSwitch` per blind
//! rotation). `cargo test --release -p basalt-tfhe --test integer_many_lut -- --nocapture`
//! prints the table.

use basalt_tfhe::integer::comparison::Order;
use basalt_tfhe::integer::shift::ShiftKind;
use basalt_tfhe::integer::{
    CarryPropagation, IntegerClient, IntegerServer, IntegerType, RadixCiphertext,
};
use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};
use basalt_tfhe::random::Csprng;
use basalt_trace::{KernelKind, TfheStep};

type Ct = RadixCiphertext<u64>;

/// Insecure 2+2-bit set (same layout and code path as TFHE-rs's 2_2 set; counts do not depend
/// on n or N).
fn toy_2_2() -> TfheParams {
    let lit = toy::literal(64, 256, 1024, (23, 1), (4, 4), 4, 4, AtomicPattern::KsPbs);
    TfheParams::from_literal(lit, true).unwrap()
}

fn wrap(v: i128, ty: IntegerType) -> i128 {
    ty.decode(v as u128)
}

/// Blind rotations of `op` on a one-thread pool (the recorder is per thread), and its result.
fn count<R: Send>(op: impl FnOnce() -> R + Send) -> (R, u64) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        let (r, t) = basalt_trace::record(op);
        (r, t.count(KernelKind::Tfhe(TfheStep::ModSwitch)))
    })
}

#[test]
fn same_results_fewer_blind_rotations() {
    let mut rng = Csprng::from_seed(81);
    let ck = IntegerClient::<u64>::with_rng(&toy_2_2(), &mut rng).unwrap();
    let mut sk: IntegerServer<u64> = ck.server_with(&mut rng);
    let mut vals = Csprng::from_seed(82);
    println!("| operation | carry | PBS without many-LUT | PBS with many-LUT |");
    println!("|---|---|---|---|");
    for bits in [8u32, 32] {
        let ty = IntegerType::unsigned(bits);
        let (a, b) = (wrap(vals.next_u64() as i128, ty), wrap(vals.next_u64() as i128, ty));
        let c = wrap(vals.next_u64() as i128, ty) | 0b1011; // digits 3 and 2 among them
        let (ca, cb) =
            (ck.encrypt_with(a, ty, &mut rng).unwrap(), ck.encrypt_with(b, ty, &mut rng).unwrap());
        let amount = ck.encrypt_with(13, ty, &mut rng).unwrap();
        type Op<'a> = Box<dyn Fn(&IntegerServer<u64>) -> Ct + Sync + 'a>;
        let int_ops: Vec<(&str, Op<'_>, i128)> = vec![
            ("add", Box::new(|s: &IntegerServer<u64>| s.add(&ca, &cb).unwrap()), a + b),
            ("sub", Box::new(|s: &IntegerServer<u64>| s.sub(&ca, &cb).unwrap()), a - b),
            ("neg", Box::new(|s: &IntegerServer<u64>| s.neg(&ca).unwrap()), -a),
            ("scalar_add", Box::new(|s: &IntegerServer<u64>| s.scalar_add(&ca, c).unwrap()), a + c),
            ("mul", Box::new(|s: &IntegerServer<u64>| s.mul(&ca, &cb).unwrap()), a * b),
            ("scalar_mul", Box::new(|s: &IntegerServer<u64>| s.scalar_mul(&ca, c).unwrap()), a * c),
            (
                "shl by encrypted",
                Box::new(|s: &IntegerServer<u64>| s.shift(&ca, &amount, ShiftKind::Left).unwrap()),
                a << (13 % bits),
            ),
        ];
        for carry in [CarryPropagation::Ripple, CarryPropagation::Scan] {
            sk.set_carry_propagation(carry);
            for (name, op, want) in &int_ops {
                if carry == CarryPropagation::Scan && !matches!(*name, "add" | "mul") {
                    continue;
                }
                let mut n = [0u64; 2];
                for (slot, on) in [false, true].into_iter().enumerate() {
                    sk.set_many_lut(on);
                    let (r, pbs) = count(|| op(&sk));
                    assert_eq!(
                        ck.decrypt(&r).unwrap(),
                        wrap(*want, ty),
                        "{name} {ty} many-LUT {on}"
                    );
                    assert!(r.is_clean(4), "{name} {ty}");
                    n[slot] = pbs;
                }
                println!("| {ty} {name} | {carry:?} | {} | {} |", n[0], n[1]);
                assert!(n[1] <= n[0], "{name} {ty} {carry:?}: {n:?}");
                if matches!(*name, "add" | "sub" | "neg" | "scalar_mul" | "scalar_add") {
                    assert!(n[1] < n[0], "{name} {ty} {carry:?}: {n:?}");
                }
            }
        }
        sk.set_carry_propagation(CarryPropagation::Ripple);
        // Boolean results: comparisons and equality run the same with or without many-LUT.
        for (name, order) in [("lt", Order::Lt), ("ge", Order::Ge)] {
            let mut n = [0u64; 2];
            for (slot, on) in [false, true].into_iter().enumerate() {
                sk.set_many_lut(on);
                let (r, pbs) = count(|| sk.compare(&ca, &cb, order).unwrap());
                let want = if order == Order::Lt { a < b } else { a >= b };
                assert_eq!(ck.decrypt_bool(&r).unwrap(), want);
                n[slot] = pbs;
            }
            println!("| {ty} {name} | - | {} | {} |", n[0], n[1]);
        }
    }
    // Ripple add of B blocks: 2B − 1 blind rotations without many-LUT, B with it (fresh
    // operands: every block may carry).
    for bits in [8u32, 32] {
        let ty = IntegerType::unsigned(bits);
        let nb = (bits / 2) as u64;
        let x = ck.encrypt_with(ty.max(), ty, &mut rng).unwrap();
        let y = ck.encrypt_with(1, ty, &mut rng).unwrap();
        for (on, want) in [(false, 2 * nb - 1), (true, nb)] {
            sk.set_many_lut(on);
            let (r, pbs) = count(|| sk.add(&x, &y).unwrap());
            assert_eq!(ck.decrypt(&r).unwrap(), 0);
            assert_eq!(pbs, want, "{ty} add, many-LUT {on}");
        }
    }
}
