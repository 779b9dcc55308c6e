//! The MNIST networks encrypted for real at the papers' parameter sets, against their
//! cleartext twins: `cargo run --release -p basalt-workloads --example mnist`.
//!
//! Prints, per network and preset, the output precision in bits (Lattigo's convention) and the
//! wall time of one inference on this CPU (one thread per the library's default).

use std::time::Instant;

use basalt_circuits::lintrans::Hoisting;
use basalt_circuits::testing::{Ctx, precision_bits_real};
use basalt_ckks::Parameters;
use basalt_workloads::mnist::{self, Net};
use basalt_workloads::network::{Model, StrategyRule};

fn main() -> basalt_workloads::Result<()> {
    // Network, preset, loop order, giant-step partials (as `basalt sim reproduce` runs them).
    let runs = [
        (Net::Lola, "OSIRIS_SET_I", true, 4),
        (Net::Mlp, "OSIRIS_SET_I", true, 4),
        (Net::Lenet, "OSIRIS_SET_II", true, 72),
        (Net::Lola, "CRATERLAKE_MNIST", false, 4),
    ];
    for (net, preset, gsc, max_partials) in runs {
        // The papers' sets as they ran them (Osiris Set II is below 128 bits): explicit opt-in.
        let params = Parameters::preset_insecure(preset).expect("a stored preset");
        let rule = StrategyRule { hoisting: Hoisting::Double, gsc, max_partials, of_limb: true };
        let network = net.build(1);
        let model = Model::prepare(&params, &network, rule, false)?;
        let ctx = Ctx::new(&params, &model.rotations())?;
        let image = mnist::test_image(5);
        let xs = net.inputs(&image);
        let cts = xs
            .iter()
            .map(|x| ctx.encrypt_real(x, model.input_slots(), model.input_level()))
            .collect::<basalt_workloads::Result<Vec<_>>>()?;
        let t0 = Instant::now();
        let out = model.evaluate(&ctx.eval, &cts)?;
        let secs = t0.elapsed().as_secs_f64();
        let want = network.evaluate_plain(&xs);
        let have: Vec<f64> = ctx.decrypt(&out)?.iter().take(want.len()).map(|c| c.re).collect();
        let bits = precision_bits_real(&want, &have);
        println!(
            "{:<24} {preset:<18} precision {bits:5.1} bits  inference {secs:6.3} s  ({} rotation keys)",
            network.name,
            model.rotations().len()
        );
    }
    Ok(())
}
