//! A bootstrap whose DFT diagonals are encoded at use computes, bit for bit, what the
//! pre-encoded one computes and records the same trace, holding no encoded plaintext; fully
//! packed and sparse (its lifted last CoeffToSlot and first SlotToCoeff factors).

use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::testing::{random_values, toy_bootstrap_params};
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Encoder, Evaluator, KeyGenerator, SecretDistribution};

#[test]
fn diagonals_encoded_at_use_bootstrap_as_pre_encoded_ones() {
    let params = toy_bootstrap_params(10, 1, 1, 2, SecretDistribution::Hamming { h: 64 });
    for log_slots in [9, 3] {
        let cfg = BootstrapConfig {
            cts_levels: 2,
            stc_levels: 1,
            ..BootstrapConfig::lattigo_default(log_slots)
        };
        let stored = Bootstrapper::new(&params, cfg).unwrap();
        let lean = Bootstrapper::encoded_at_use(&params, cfg).unwrap();
        let held = |b: &Bootstrapper| -> u64 {
            b.coeff_to_slot()
                .iter()
                .chain(b.slot_to_coeff())
                .map(|t| t.stored_plaintext_bytes())
                .sum()
        };
        assert!(held(&stored) > 0);
        assert_eq!(held(&lean), 0);
        assert_eq!(lean.rotations(), stored.rotations());
        let sk = KeyGenerator::new(&params).gen_secret_key();
        let (keys, encaps) = stored.generate_keys(&sk, false).unwrap();
        let eval = Evaluator::new(&params, keys).unwrap();
        let enc = Encoder::new(&params);
        let v = random_values(1 << log_slots, 8, false);
        let pt = enc.encode(&v, 1 << log_slots, 0, params.default_scale()).unwrap();
        let ct = encrypt_sk(&params, &pt, &sk).unwrap();
        let (a, t_stored) = basalt_trace::record(|| stored.bootstrap(&eval, encaps.as_ref(), &ct));
        let (b, t_lean) = basalt_trace::record(|| lean.bootstrap(&eval, encaps.as_ref(), &ct));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.level(), b.level());
        let dec = |c| enc.decode(&decrypt(&params, c, &sk).unwrap()).unwrap();
        assert_eq!(dec(&a), dec(&b), "log_slots {log_slots}");
        assert!(t_stored == t_lean, "log_slots {log_slots}: the encoding is not traced");
    }
}
