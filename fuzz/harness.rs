// Shared by the fuzz targets (`fuzz/fuzz_targets/*.rs`, through `include!`) and by the corpus
// replay test (`crates/basalt-cli/tests/fuzz_corpus.rs`, through `#[path]`): one function per
// deserializer that Basalt exposes to outside input. Each must return (an error is fine) and
// never panic, abort, hang or exhaust memory, whatever the bytes.

#[allow(dead_code)]
pub mod harness {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use basalt_ckks::{
        Ciphertext, EvaluationKeys, GaloisKey, KeyMaterial, KeySwitchKey, Parameters,
        ParametersLiteral, Plaintext, PublicKey, RelinKey, SecretKey, SeededKeySwitchKey,
    };
    use basalt_tfhe::random::Csprng;
    use basalt_tfhe::serialize as tser;
    use basalt_tfhe::{ClientKey, ServerKey, TfheParams};

    /// The fuzz targets, by name (the folder names under `fuzz/corpus/`).
    pub const TARGETS: [&str; 6] =
        ["ckks_ciphertext", "ckks_keys", "tfhe_ciphertext", "tfhe_keys", "trace", "machine"];

    /// The repository root (the folder holding `data/`), found upwards from this crate.
    pub fn root() -> PathBuf {
        let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        while !p.join("data/machines").is_dir() {
            assert!(p.pop(), "no data/machines above {}", env!("CARGO_MANIFEST_DIR"));
        }
        p
    }

    /// The toy CKKS set the CKKS targets decode into (N = 2^10, 3 Q primes, 1 special prime).
    pub fn ckks_params() -> &'static Parameters {
        static P: OnceLock<Parameters> = OnceLock::new();
        P.get_or_init(|| {
            Parameters::new_insecure(ParametersLiteral::toy(10, 50, 40, 2, 50, 1, 3))
                .expect("toy set")
        })
    }

    /// The toy TFHE set and one key pair for it, from a fixed seed: the key id is then the
    /// same in every run, so the corpus's ciphertexts pass the key check and the fuzzer reaches
    /// the decoder behind it.
    pub fn tfhe_keys_pair() -> &'static (TfheParams, ClientKey<u32>, ServerKey<u32>) {
        static K: OnceLock<(TfheParams, ClientKey<u32>, ServerKey<u32>)> = OnceLock::new();
        K.get_or_init(|| {
            let params = basalt_tfhe::params::toy::u32_small();
            let mut rng = Csprng::from_seed(0xB45A_17F0);
            let ck = ClientKey::<u32>::with_rng(&params, &mut rng).expect("toy key");
            let sk = ck.server_key_with(&mut rng);
            (params, ck, sk)
        })
    }

    /// Each blob is decoded twice: as given (the checksum rejects almost every mutation) and
    /// resealed with its body's own checksum, which anyone can compute, so that the decoder
    /// behind the checksum meets every mutation too.
    fn both(data: &[u8], reseal: fn(&[u8]) -> Vec<u8>, decode: impl Fn(&[u8])) {
        decode(data);
        decode(&reseal(data));
    }

    pub fn ckks_ciphertext(data: &[u8]) {
        both(data, basalt_ckks::serialize::reseal, |b| {
            let _ = Ciphertext::from_bytes(ckks_params(), b);
            let _ = Plaintext::from_bytes(ckks_params(), b);
        });
    }

    /// The first byte picks the key type, the rest is the blob.
    pub fn ckks_keys(data: &[u8]) {
        let Some((&which, blob)) = data.split_first() else { return };
        let p = ckks_params();
        both(blob, basalt_ckks::serialize::reseal, |blob| match which % 8 {
            0 => drop(EvaluationKeys::from_bytes(p, blob)),
            1 => drop(KeyMaterial::from_bytes(p, blob)),
            2 => drop(KeySwitchKey::from_bytes(p, blob)),
            3 => drop(SeededKeySwitchKey::from_bytes(p, blob)),
            4 => drop(RelinKey::from_bytes(p, blob)),
            5 => drop(GaloisKey::from_bytes(p, blob)),
            6 => drop(PublicKey::from_bytes(p, blob)),
            _ => drop(SecretKey::from_bytes(p, blob)),
        });
    }

    pub fn tfhe_ciphertext(data: &[u8]) {
        let (_, _, sk) = tfhe_keys_pair();
        both(data, tser::reseal, |b| drop(tser::deserialize_ciphertext::<u32>(b, sk)));
    }

    /// The first byte picks server key, client key or LUT.
    pub fn tfhe_keys(data: &[u8]) {
        let Some((&which, blob)) = data.split_first() else { return };
        let (params, _, _) = tfhe_keys_pair();
        both(blob, tser::reseal, |blob| match which % 3 {
            0 => drop(tser::deserialize_server_key::<u32>(blob, params)),
            1 => drop(tser::deserialize_client_key::<u32>(blob, params)),
            _ => drop(tser::deserialize_lut::<u32>(blob, params)),
        });
    }

    /// A trace file as `basalt sim run --trace` reads it, then simulated on the CPU model.
    pub fn trace(data: &[u8]) {
        static M: OnceLock<basalt_sim::Machine> = OnceLock::new();
        let m = M.get_or_init(|| {
            basalt_sim::Machine::load(root().join("data/machines/basalt_cpu.toml"))
                .expect("the CPU machine file")
        });
        if let Ok(t) = serde_json::from_slice::<basalt_trace::Trace>(data) {
            let _ = basalt_sim::simulate(m, &t);
        }
    }

    /// A machine file, as if it were `data/machines/fuzzed.toml`.
    pub fn machine(data: &[u8]) {
        if let Ok(text) = std::str::from_utf8(data) {
            let path: &Path = &root().join("data/machines/fuzzed.toml");
            let _ = basalt_sim::Machine::from_toml(text, path);
        }
    }

    /// Run the target called `name` on `data`.
    pub fn run(name: &str, data: &[u8]) {
        match name {
            "ckks_ciphertext" => ckks_ciphertext(data),
            "ckks_keys" => ckks_keys(data),
            "tfhe_ciphertext" => tfhe_ciphertext(data),
            "tfhe_keys" => tfhe_keys(data),
            "trace" => trace(data),
            "machine" => machine(data),
            other => panic!("no fuzz target {other}"),
        }
    }
}
