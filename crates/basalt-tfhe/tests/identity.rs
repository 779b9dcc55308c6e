//! Key identity, encodings and integrity: a ciphertext under another client key is refused by
//! every operation, load and decryption (the error names both ids); booleans and integers are
//! not interchangeable; a bit flipped anywhere in a serialized ciphertext or key is detected.

use basalt_tfhe::params::toy;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::serialize::*;
use basalt_tfhe::{BatchConfig, ClientKey, Encoding, Gate, Lut, TfheError};

fn mismatch<T: std::fmt::Debug>(r: Result<T, TfheError>, mine: u64, theirs: u64) {
    match r {
        Err(e @ TfheError::KeyMismatch { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains(&format!("{mine:#x}")) && m.contains(&format!("{theirs:#x}")),
                "{m}"
            );
        }
        other => panic!("expected a key mismatch, got {other:?}"),
    }
}

#[test]
fn every_path_refuses_a_ciphertext_of_another_client_key() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(5);
    let (a, b) = (
        ClientKey::<u64>::with_rng(&params, &mut rng).unwrap(),
        ClientKey::<u64>::with_rng(&params, &mut rng).unwrap(),
    );
    let (ia, ib) = (a.key_id(), b.key_id());
    assert_ne!(ia, ib);
    let server = a.server_key_with(&mut rng);
    let theirs = b.encrypt_with(1, &mut rng).unwrap();
    let mine = a.encrypt_with(1, &mut rng).unwrap();
    let lut = Lut::from_fn(&params, |x| x);
    mismatch(a.decrypt(&theirs), ia, ib);
    mismatch(server.apply_lut(&theirs, &lut), ia, ib);
    mismatch(
        server.apply_lut_batch(&[mine, theirs.clone()], &lut, &BatchConfig::default()),
        ia,
        ib,
    );
    let (x, y) = (a.encrypt_bool(true), b.encrypt_bool(true));
    mismatch(server.gate(Gate::And, &x, &y), ia, ib);
    mismatch(a.decrypt_bool(&y), ia, ib);
    mismatch(deserialize_ciphertext(&serialize_ciphertext(&theirs), &server), ia, ib);
}

#[test]
fn booleans_and_integers_are_distinct() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(6);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let (i3, i9) = (ck.encrypt_with(3, &mut rng).unwrap(), ck.encrypt_with(1, &mut rng).unwrap());
    let t = ck.encrypt_bool(true);
    assert_eq!(t.encoding(), Encoding::Boolean);
    assert_eq!(i3.encoding(), Encoding::Integer);
    let enc =
        |r: Result<_, TfheError>| assert!(matches!(r, Err(TfheError::EncodingMismatch { .. })));
    enc(sk.gate(Gate::And, &i3, &i9).map(|_| ()));
    enc(ck.decrypt(&t).map(|_| ()));
    enc(ck.decrypt_bool(&i3).map(|_| ()));
    enc(sk.apply_lut(&t, &Lut::from_fn(&params, |x| x)).map(|_| ()));
    // A gate's output is a boolean, a table's an integer.
    let g = sk.gate(Gate::Xor, &t, &ck.encrypt_bool(false)).unwrap();
    assert!(ck.decrypt_bool(&g).unwrap());
    let r = deserialize_ciphertext(&serialize_ciphertext(&g), &sk).unwrap();
    assert_eq!(r.encoding(), Encoding::Boolean);
}

/// Flip bits of `blob` (every bit, or every `step`-th): `load` rejects each.
fn sweep<T>(blob: &[u8], step: usize, load: impl Fn(&[u8]) -> Result<T, TfheError>) {
    let mut b = blob.to_vec();
    for i in (0..b.len() * 8).step_by(step) {
        b[i / 8] ^= 1 << (i % 8);
        assert!(load(&b).is_err(), "flip of bit {i} accepted");
        b[i / 8] ^= 1 << (i % 8);
    }
    assert!(load(&b).is_ok());
}

#[test]
fn a_bit_flip_anywhere_is_detected() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(7);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let ct = ck.encrypt_with(2, &mut rng).unwrap();
    sweep(&serialize_ciphertext(&ct), 1, |b| deserialize_ciphertext(b, &sk));
    sweep(&serialize_client_key(&ck), 1, |b| deserialize_client_key::<u64>(b, &params));
    // The server key is megabytes and each check hashes all of it: 64 bits spread over the
    // whole blob (a prime stride), plus every bit of the header below.
    let skb = serialize_server_key(&sk);
    let stride = (skb.len() * 8 / 64) | 1;
    sweep(&skb, stride, |b| deserialize_server_key::<u64>(b, &params));
    let mut head = skb.clone();
    for i in 0..32 * 8 {
        head[i / 8] ^= 1 << (i % 8);
        assert!(deserialize_server_key::<u64>(&head, &params).is_err(), "header bit {i}");
        head[i / 8] ^= 1 << (i % 8);
    }
}
