//! Claim T1 on the real parameter sets: Decrypt(PBS(Enc(m), f)) = f(m) over whole message
//! spaces and several LUTs (sets I/II: boolean gates and 1-bit LUTs on a 32-bit torus; set III
//! and TFHE-rs 2_2: 2- and 4-bit LUTs on a 64-bit torus; set IV: 2-bit message + 6-bit carry).

use basalt_tfhe::random::Csprng;
use basalt_tfhe::{BatchConfig, ClientKey, Gate, Lut, TfheError, TfheParams, Torus};

fn gates_and_luts<T: Torus>(name: &str, allow_insecure: bool) {
    let params = TfheParams::preset(name, allow_insecure).unwrap();
    let mut rng = Csprng::from_os();
    let ck = ClientKey::<T>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    for gate in [Gate::Nand, Gate::And, Gate::Or, Gate::Xor] {
        for a in [false, true] {
            for b in [false, true] {
                let c = sk.gate(gate, &ck.encrypt_bool(a), &ck.encrypt_bool(b)).unwrap();
                assert_eq!(
                    ck.decrypt_bool(&c).unwrap(),
                    gate.eval(a, b),
                    "{name} {gate:?}({a},{b})"
                );
            }
        }
    }
    let p = params.plaintext_modulus();
    for f in [|x: u64| x, |x: u64| x + 1, |x: u64| x * x + 3] {
        let lut = Lut::from_fn(&params, f);
        let cts: Vec<_> = (0..p).map(|m| ck.encrypt_with(m, &mut rng).unwrap()).collect();
        let outs = sk.apply_lut_batch(&cts, &lut, &BatchConfig::default()).unwrap();
        for (m, o) in (0..p).zip(&outs) {
            assert_eq!(ck.decrypt(o).unwrap(), f(m) % p, "{name} m={m}");
        }
    }
}

#[test]
fn set_i_gates_and_luts_32bit() {
    // Set I is ~80-bit: refused without the opt-in, runs with it.
    assert!(matches!(TfheParams::preset("STRIX_I", false), Err(TfheError::Insecure(..))));
    gates_and_luts::<u32>("STRIX_I", true);
}

#[test]
fn set_ii_gates_and_luts_32bit() {
    gates_and_luts::<u32>("STRIX_II", true); // estimated below 128 bits
}

#[test]
fn set_iii_gates_and_luts_64bit() {
    gates_and_luts::<u64>("STRIX_III", true); // estimated below 128 bits
}

#[test]
fn tfhers_2_2_exhaustive_64bit() {
    gates_and_luts::<u64>("TFHERS_2_2_KS_PBS", false);
}

#[test]
fn wrong_torus_width_is_an_error() {
    let params = TfheParams::preset("STRIX_II", true).unwrap();
    assert!(matches!(
        ClientKey::<u64>::new(&params),
        Err(TfheError::TorusMismatch { expected: 32, found: 64 })
    ));
}

#[test]
#[ignore = "set IV: N = 16384, 1 GiB Fourier bootstrapping key, ~0.6 GiB KSK, tens of seconds of keygen; run with --ignored"]
fn set_iv_message_and_carry_luts() {
    let params = TfheParams::preset("STRIX_IV", true).unwrap();
    let mut rng = Csprng::from_os();
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let p = params.plaintext_modulus();
    let msg = params.message_modulus;
    // Every 2-bit message with a few carry values, through three LUTs.
    let inputs: Vec<u64> = (0..p).step_by(7).chain([p - 1, 1, 2, 3]).collect();
    for f in [|x: u64| x, |x: u64| x / 4, |x: u64| (x % 4) * 3] {
        let lut = Lut::from_fn(&params, f);
        let cts: Vec<_> = inputs.iter().map(|&m| ck.encrypt_with(m, &mut rng).unwrap()).collect();
        let outs = sk.apply_lut_batch(&cts, &lut, &BatchConfig::default()).unwrap();
        for (&m, o) in inputs.iter().zip(&outs) {
            assert_eq!(ck.decrypt(o).unwrap(), f(m) % p, "m={m} (msg modulus {msg})");
        }
    }
}
