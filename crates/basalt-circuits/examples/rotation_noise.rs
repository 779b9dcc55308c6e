//! Precision of a fresh fully packed ciphertext (scale 2^40, complex values in [−1, 1]²) and
//! after one rotation, per preset and level: what bounds the precision of a linear transform
//! on the bootstrapping chain (see BENCHMARKS.md, linear transforms).
//!
//! `cargo run --release -p basalt-circuits --example rotation_noise`

use basalt_circuits::lintrans::rotate_slots;
use basalt_circuits::testing::{Ctx, precision_bits, random_values};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (name, levels) in
        [("LATTIGO_RESIDUAL", vec![9usize, 5]), ("N16QP1546H192H32", vec![24, 19, 12, 5])]
    {
        let p = basalt_ckks::Parameters::preset(name)?;
        let ctx = Ctx::new(&p, &[1])?;
        let s = p.max_slots();
        let x = random_values(s, 7, false);
        for l in levels {
            let ct = ctx.encrypt(&x, s, l)?;
            let fresh = precision_bits(&x, &ctx.decrypt(&ct)?);
            let r = ctx.eval.rotate(&ct, 1)?;
            let rotated = precision_bits(&rotate_slots(&x, 1), &ctx.decrypt(&r)?);
            println!(
                "{{\"preset\": \"{name}\", \"level\": {l}, \"fresh_bits\": {fresh:.1}, \"after_one_rotation_bits\": {rotated:.1}}}"
            );
        }
    }
    Ok(())
}
