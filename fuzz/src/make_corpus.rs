//! Writes the seed corpus under `fuzz/corpus/TARGET/`: valid objects of the toy sets the
//! targets decode into, so that fuzzing starts from the real formats (the evaluation-key set
//! and the TFHE server key, too large to mutate well, are cut to their first 4 KiB: header and
//! first limbs). `cargo run --release --manifest-path fuzz/Cargo.toml
//! --bin make_corpus` (run from the repository root).

include!("../harness.rs");

use std::path::Path;

use basalt_ckks::encryptor::encrypt_sk;
use basalt_ckks::{Complex64, Encoder, KeyGenerator};
use basalt_tfhe::Lut;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::serialize as tser;

const CUT: usize = 4096;

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = harness::root().join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn tagged(tag: u8, bytes: &[u8], cut: bool) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(if cut { &bytes[..bytes.len().min(CUT)] } else { bytes });
    v
}

fn main() {
    // CKKS.
    let p = harness::ckks_params();
    let kg = KeyGenerator::new(p);
    let sk = kg.gen_secret_key();
    let pk = kg.gen_public_key(&sk);
    let keys = kg.gen_evaluation_keys(&sk, &[1], false, false);
    let enc = Encoder::new(p);
    let v: Vec<Complex64> = (0..8).map(|i| Complex64::new(i as f64 / 8.0, -0.5)).collect();
    let pt = enc.encode(&v, 8, 1, p.default_scale()).unwrap();
    let ct = encrypt_sk(p, &pt, &sk).unwrap();
    let ct_bytes = ct.to_bytes().unwrap();
    write("ckks_ciphertext", "ciphertext", &ct_bytes);
    write("ckks_ciphertext", "ciphertext_head", &ct_bytes[..ct_bytes.len().min(256)]);
    write("ckks_ciphertext", "plaintext", &pt.to_bytes().unwrap());
    write("ckks_keys", "evaluation_keys_head", &tagged(0, &keys.to_bytes().unwrap(), true));
    if let Some(r) = &keys.relin {
        write("ckks_keys", "relin", &tagged(4, &r.to_bytes().unwrap(), false));
    }
    write("ckks_keys", "public_key", &tagged(6, &pk.to_bytes().unwrap(), false));
    write("ckks_keys", "secret_key", &tagged(7, &sk.export_bytes().unwrap(), false));

    // TFHE.
    let (params, ck, server) = harness::tfhe_keys_pair();
    let mut rng = Csprng::from_os();
    let c = ck.encrypt_with(1, &mut rng).unwrap();
    write("tfhe_ciphertext", "ciphertext", &tser::serialize_ciphertext(&c));
    write("tfhe_keys", "server_key_head", &tagged(0, &tser::serialize_server_key(server), true));
    write("tfhe_keys", "client_key", &tagged(1, &tser::serialize_client_key(ck), false));
    let lut = Lut::<u32>::from_fn(params, |x| x ^ 1);
    write("tfhe_keys", "lut", &tagged(2, &tser::serialize_lut(&lut, params), false));

    // Traces: a small recorded one, as `basalt trace` writes it.
    let trace_json = std::fs::read(harness::root().join("fuzz/seeds/hmult_trace.json")).expect(
        "fuzz/seeds/hmult_trace.json (basalt trace --program hmult --preset MXV_SET_A --level 1)",
    );
    write("trace", "hmult", &trace_json);

    // Machine files: every shipped one.
    for e in std::fs::read_dir(harness::root().join("data/machines")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            write("machine", &name, &std::fs::read(&path).unwrap());
        }
    }
    let _ = Path::new(".");
}
