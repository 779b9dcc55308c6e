//! Wall time of the tensor product, relinearisation, rotation and rescale on the residual
//! N = 2^16 set in a 1-thread and a 2-thread pool (two rounds each, the first warms up):
//! a direct check of the thread scaling that `basalt bench ckks` reports.
//!
//! `cargo run --release -p basalt-ckks --example threads_probe`

use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::*;
use std::time::Instant;
fn main() {
    let params = Parameters::preset("LATTIGO_RESIDUAL").unwrap();
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let ev = Evaluator::new(&params, kg.gen_evaluation_keys(&sk, &[1], false, false)).unwrap();
    let enc = Encoder::new(&params);
    let v = vec![Complex64::new(0.5, 0.1); 8];
    let pt = enc.encode(&v, 8, params.max_level(), params.default_scale()).unwrap();
    let ct = encrypt_sk(&params, &pt, &sk).unwrap();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            for _ in 0..2 {
                let t = Instant::now();
                let m = ev.mul(&ct, &ct).unwrap();
                let t1 = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let _r = ev.relinearize(&m).unwrap();
                let t2 = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let _r = ev.rotate(&ct, 1).unwrap();
                let t3 = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let _r = ev.rescale(&ct).unwrap();
                let t4 = t.elapsed().as_secs_f64() * 1e3;
                println!(
                    "threads {threads}: mul {t1:.1} relin {t2:.1} rotate {t3:.1} rescale {t4:.1}"
                );
            }
        });
    }
}
