//! Shared test setup: keys, evaluator and random messages for a parameter set.
#![allow(dead_code)]

use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::keyswitch::KsCost;
use basalt_ckks::*;
use basalt_trace::{ElemOp, KernelKind, Trace};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

pub struct Ctx {
    pub params: Parameters,
    pub enc: Encoder,
    pub sk: SecretKey,
    pub pk: PublicKey,
    pub eval: Evaluator,
    pub rotations: Vec<i64>,
}

pub fn setup(params: Parameters, rotations: &[i64], seeded: bool) -> Ctx {
    let kg = KeyGenerator::new(&params);
    let sk = kg.gen_secret_key();
    let pk = kg.gen_public_key(&sk);
    let keys = kg.gen_evaluation_keys(&sk, rotations, true, seeded);
    let eval = Evaluator::new(&params, keys).unwrap();
    Ctx { enc: Encoder::new(&params), params, sk, pk, eval, rotations: rotations.to_vec() }
}

pub fn random_values(n: usize, seed: u64) -> Vec<Complex64> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .collect()
}

impl Ctx {
    pub fn encrypt(&self, v: &[Complex64], level: usize) -> Ciphertext {
        let pt = self
            .enc
            .encode(v, self.params.max_slots(), level, self.params.default_scale())
            .unwrap();
        encrypt_sk(&self.params, &pt, &self.sk).unwrap()
    }
    pub fn decrypt(&self, ct: &Ciphertext) -> Vec<Complex64> {
        self.enc.decode(&decrypt(&self.params, ct, &self.sk).unwrap()).unwrap()
    }
    pub fn precision(&self, want: &[Complex64], ct: &Ciphertext) -> PrecisionStats {
        PrecisionStats::new(want, &self.decrypt(ct))
    }
}

/// Left rotation of a slot vector.
pub fn rot(v: &[Complex64], k: i64) -> Vec<Complex64> {
    let n = v.len() as i64;
    (0..n).map(|i| v[(i + k).rem_euclid(n) as usize]).collect()
}

/// Toy set: N = 2^log_n, q_0 of 60 bits, `levels` primes of 40 bits, `k` special primes of 61
/// bits, the given dnum.
pub fn toy(log_n: u32, levels: usize, k: usize, dnum: usize) -> Parameters {
    let mut lit = ParametersLiteral::toy(log_n, 60, 40, levels, 61, k, dnum);
    lit.log_default_scale = 40.0;
    Parameters::new(lit).unwrap()
}

/// The kernel counts of a recorded key switch against `keyswitch::cost`'s closed forms
/// (`extra_mulacc`: MulAcc limbs of the operation around it, e.g. the tensor's).
pub fn check_ks_counts(t: &Trace, c: &KsCost, extra_mulacc: u64, what: &str) {
    assert_eq!(t.count(KernelKind::Intt), c.intt_limbs, "{what}: INTT");
    assert_eq!(t.count(KernelKind::Ntt), c.ntt_limbs, "{what}: NTT");
    assert_eq!(t.count(KernelKind::BConv), c.bconv_macs, "{what}: BConv");
    let mulacc = t.count(KernelKind::Elem(ElemOp::MulAcc));
    assert_eq!(mulacc, c.mul_acc_limbs + extra_mulacc, "{what}: MulAcc");
    assert_eq!(t.count(KernelKind::KeyLoad), c.key_limbs, "{what}: key limbs");
}
