//! Probe: where a key switch's time goes at full size, phase by phase, in thread CPU time
//! (median of repeated runs, one thread). Default preset `N16QP1546H192H32` at its top level;
//! `cargo run --release -p basalt-bench --example ks_phases [-- PRESET [MIN_SECONDS [ROW]]]`
//! (`ROW`: only the rows whose name contains it). Needs about 2 GB at N = 2^16 (a
//! relinearisation key and 8 rotation keys; 150 MB each on the full chain).
use basalt_bench::harness::{fix_allocator_thresholds, in_pool, measure_for};
use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::keys::{EvaluationKeys, KeyGenerator, KeyMaterial};
use basalt_ckks::keyswitch::{self, hoisted};
use basalt_ckks::{Complex64, Encoder, Evaluator, Parameters};
use basalt_math::rns;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let preset = args.get(1).map_or("N16QP1546H192H32", String::as_str);
    let secs: f64 = args.get(2).map_or(2.0, |s| s.parse().expect("seconds"));
    let only: Option<&str> = args.get(3).map(String::as_str);
    fix_allocator_thresholds();
    let params = Parameters::preset(preset).expect("preset");
    let level = params.max_level();
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let mut keys = EvaluationKeys::default().with_relin(kg.gen_relin_key(&sk, false));
    // Rotation keys only where a row needs them (a third argument selects rows by name).
    let rotations =
        if only.is_none_or(|o| o.contains("rot") || o.contains("hoist")) { 8 } else { 0 };
    for r in 1..=rotations {
        keys = keys.with_galois(kg.gen_rotation_key(&sk, r, false));
    }
    let eval = Evaluator::new(&params, keys).expect("evaluator");
    let keys = eval.keys();
    let enc = Encoder::new(&params);
    let slots = params.max_slots();
    let vals: Vec<Complex64> =
        (0..slots).map(|i| Complex64::new((i as f64 * 0.001).sin(), 0.0)).collect();
    let pt = enc.encode(&vals, slots, level, params.default_scale()).expect("encode");
    let ct = encrypt_sk(&params, &pt, &sk).expect("encrypt");
    let rlk: &KeyMaterial = &keys.relin.as_ref().expect("relin").key;
    let ring = params.ring();
    let d = ct.polys()[1].clone();
    let t = Duration::from_secs_f64(secs);
    let want = |name: &str| only.is_none_or(|o| name.contains(o));
    in_pool(1, || {
        let row = |name: &str, f: &mut dyn FnMut()| {
            if want(name) {
                let s = measure_for(t, f);
                println!(
                    "{name:<44} {:>8.2} ms (thread CPU, median of {})",
                    s.thread_cpu_median_ms, s.samples
                );
            }
        };
        row("INTT of the input (clone + 25 limbs)", &mut || {
            let mut x = d.clone();
            ring.intt_assign(&mut x);
        });
        row("decompose (INTT + ModUp, 5 digits)", &mut || drop(keyswitch::decompose(&params, &d)));
        let decomp = keyswitch::decompose(&params, &d);
        row("inner product (5 digits, 30 limbs)", &mut || {
            drop(keyswitch::hybrid::inner_product(&params, &decomp, rlk))
        });
        row("keyswitch_lazy (fused ModUp + product)", &mut || {
            drop(keyswitch::keyswitch_lazy(&params, &d, rlk))
        });
        let (v0, v1) = keyswitch::keyswitch_lazy(&params, &d, rlk);
        row("ModDown of one polynomial", &mut || drop(rns::mod_down(ring, &v0)));
        row("ModDown + add (both polynomials)", &mut || {
            drop(rns::mod_down_add(ring, &v0, &ct.polys()[0]));
            drop(rns::mod_down(ring, &v1));
        });
        row("keyswitch (all)", &mut || drop(keyswitch::keyswitch(&params, &d, rlk)));
        if let Some(gk) = keys.galois.values().next() {
            let g = gk.galois;
            row("hoisted rotation given decomposition", &mut || {
                drop(hoisted::automorphism_hoisted(&params, &ct, &decomp, g, &gk.key))
            });
        }
        let sq = eval.mul(&ct, &ct).expect("mul");
        row("mul (tensor only)", &mut || drop(eval.mul(&ct, &ct).expect("mul")));
        row("relinearize", &mut || drop(eval.relinearize(&sq).expect("relin")));
        row("mul_relin", &mut || drop(eval.mul_relin(&ct, &ct).expect("mul_relin")));
        row("rotate 1", &mut || drop(eval.rotate(&ct, 1).expect("rotate")));
        let ks: Vec<i64> = (1..=8).collect();
        row("rotate_hoisted 1..=8", &mut || drop(eval.rotate_hoisted(&ct, &ks).expect("hoisted")));
    });
}
