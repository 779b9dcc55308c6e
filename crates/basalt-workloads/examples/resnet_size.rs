//! What one full-size ResNet-20 inference of the `resnet20` workload needs, read from its
//! program in trace mode (shape-only ciphertexts and keys: nothing is generated, encoded or
//! timed): bootstraps, rotations, the bytes of the rotation keys, the bootstrapping keys, the
//! plaintexts encoded at use and the working ciphertexts (what the workload's refusal counts),
//! the diagonals a pre-encoding run would hold, and the kernel counts of the network and of
//! one bootstrap.
//!
//! `cargo run --release -p basalt-workloads --example resnet_size [-- PRESET]`
//! (default `CRATERLAKE_80_BOOT`, the workload's; the trained ResNet-20 on 2^15 slots).

use basalt_circuits::bootstrap::config::for_preset;
use basalt_circuits::bootstrap::{Bootstrapper, Encapsulation};
use basalt_ckks::{Ciphertext, Evaluator, KeyGenerator, Parameters};
use basalt_trace::record;
use basalt_workloads::resnet::{
    Arch, BootstrapMarker, ConvStrategy, Model, network_levels, trained,
};
use basalt_workloads::resnet_run::{Memory, relu_sign};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args().nth(1).unwrap_or_else(|| "CRATERLAKE_80_BOOT".into());
    // The papers' own sets may be below 128 bits: this counts, it encrypts nothing.
    let params = Parameters::preset_insecure(&name)?;
    let cfg = for_preset(&name, Some(15), params.log_n()).ok_or("no bootstrapping circuit")?;
    let arch = Arch { slots: 1 << cfg.log_slots, ..Arch::RESNET20 };
    let net = trained(arch)?;
    let sign = relu_sign(false)?;
    let bt = Bootstrapper::symbolic(&params, cfg)?;
    let scale = params.default_scale();
    let scales = (scale, scale.min(bt.max_input_scale()));
    let out = bt.budget().output_level;
    let lattigo = ConvStrategy::LATTIGO;
    let model = Model::prepare_sharing_keys(&params, &net, &sign, out, out, scales, lattigo, true)?;
    // The reproduction's per-layer steps, for comparison.
    let per_layer = Model::prepare(&params, &net, &sign, out, out, scales, lattigo, true)?;
    let rotations = model.rotations();
    let boot_rotations = bt.rotations();
    let own = rotations.iter().filter(|r| !boot_rotations.contains(r)).count();

    // One inference, bootstraps as markers, each rotation key with the parts of the levels its
    // layers run at only (as the workload generates them: a missing part would fail here); one
    // bootstrap on its own.
    let kg = KeyGenerator::new(&params);
    let mut keys = kg
        .clone()
        .for_levels(network_levels(&params, out))
        .gen_symbolic_evaluation_keys(&[], false, false);
    for (r, levels) in model.rotation_levels() {
        let one = kg.clone().for_levels(levels).gen_symbolic_evaluation_keys(&[r], false, false);
        keys.galois.extend(one.galois);
    }
    let eval = Evaluator::new(&params, keys)?;
    let mut ct = Ciphertext::symbolic(&params, model.input_level())?;
    ct.set_slots(arch.slots);
    ct.set_scale(scale);
    let marker = BootstrapMarker { level: out };
    let (r, network) = record(|| model.evaluate(&eval, &marker, &ct));
    r?;
    let beval = Evaluator::new(&params, bt.symbolic_keys(false))?;
    let encaps = match cfg.ephemeral_h {
        Some(h) => Some(Encapsulation::symbolic(&params, h)?),
        None => None,
    };
    let mut one = Ciphertext::symbolic(&params, params.base_primes() - 1)?;
    one.set_slots(arch.slots);
    one.set_scale(scales.1);
    let (r, boot) = record(|| bt.bootstrap(&beval, encaps.as_ref(), &one));
    r?;
    let counts = |t: &basalt_trace::Trace| -> serde_json::Map<String, serde_json::Value> {
        t.counts().into_iter().map(|(k, v)| (format!("{k:?}"), json!(v))).collect()
    };
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    let memory = Memory::of(&params, &bt, &model)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "preset": name,
            "log_n": params.log_n(),
            "slots": arch.slots,
            "bootstraps_per_image": model.bootstraps(),
            "refreshed_level": out,
            "diagonals": model.diagonals(),
            "network_rotations": rotations.len(),
            "network_rotations_per_layer_steps": per_layer.rotations().len(),
            "network_key_gib_per_layer_steps": gib(Memory::of(&params, &bt, &per_layer)?.network_keys),
            "network_rotations_shared_with_bootstrap": rotations.len() - own,
            "rotation_keys": memory.rotation_keys,
            "memory_gib": {
                "encoded_diagonals_at_use": gib(memory.diagonals),
                "bootstrap_diagonals_at_use": gib(memory.bootstrap_diagonals),
                "network_rotation_keys": gib(memory.network_keys),
                "bootstrap_keys": gib(memory.bootstrap_keys),
                "bootstrap_keys_seeded": gib(bt.key_bytes(true)),
                "secret_key_and_tables": gib(memory.fixed),
                "working_ciphertexts": gib(memory.working),
                "total": gib(memory.total()),
                "pre_encoded_diagonals": gib(model.stored_plaintext_bytes()),
            },
            "network_kernels_per_image": counts(&network),
            "kernels_per_bootstrap": counts(&boot),
        }))?
    );
    Ok(())
}
