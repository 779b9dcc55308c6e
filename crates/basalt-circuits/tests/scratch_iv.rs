use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper, EvalModConfig};
use basalt_circuits::testing::random_values;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{
    Encoder, Evaluator, KeyGenerator, Parameters, PrecisionStats, SecretDistribution,
};

fn run(log_n: u32, name: &str, log_q: Vec<u32>, log_p: Vec<u32>, base: usize) {
    let mut lit = basalt_ckks::ParametersLiteral::toy(log_n, 28, 28, 0, 28, 2, 1);
    lit.name = name.into();
    lit.log_q = log_q;
    lit.log_p = log_p;
    lit.double_prime = true;
    lit.base_primes = Some(base);
    lit.alpha = Some(14);
    lit.dnum = None;
    lit.log_default_scale = 36.0;
    lit.secret = SecretDistribution::Hamming { h: 1024 };
    lit.primes_below = true;
    lit.allow_insecure = true;
    let params = Parameters::new(lit).unwrap();
    let ls = log_n - 2;
    let cfg = BootstrapConfig {
        evalmod: EvalModConfig { log_scale: 56.0, ..EvalModConfig::default() },
        ..BootstrapConfig::lattigo_default(ls)
    };
    let bt = Bootstrapper::new(&params, cfg).unwrap();
    let sk = KeyGenerator::new(&params).gen_secret_key();
    let (keys, encaps) = bt.generate_keys(&sk, false).unwrap();
    let eval = Evaluator::new(&params, keys).unwrap();
    let enc = Encoder::new(&params);
    let v = random_values(1 << ls, 5, false);
    let pt = enc.encode(&v, 1 << ls, base - 1, params.default_scale()).unwrap();
    let ct = encrypt_sk(&params, &pt, &sk).unwrap();
    let out = bt.bootstrap(&eval, encaps.as_ref(), &ct).unwrap();
    let have = enc.decode(&decrypt(&params, &out, &sk).unwrap()).unwrap();
    let p = PrecisionStats::new(&v, &have);
    eprintln!("N=2^{log_n} {name}: mean {:.1} min {:.1}", p.mean.l2, p.min.l2);
}

fn rep(x: u32, n: usize) -> Vec<u32> {
    vec![x; n]
}

#[test]
fn scratch() {
    let log_n: u32 = std::env::var("LOGN").map(|s| s.parse().unwrap()).unwrap_or(14);
    let chain = |third: Option<u32>, stc: u32, em: u32, cts: u32| {
        let mut q = vec![24, 24];
        if let Some(t) = third {
            q.push(t);
        }
        q.extend(rep(36, 8));
        q.extend(rep(stc, 6));
        q.extend(rep(em, 16));
        q.extend(rep(cts, 8));
        q
    };
    let p4 = {
        let mut p = rep(32, 12);
        p.extend(rep(29, 2));
        p
    };
    run(log_n, "III", chain(None, 26, 28, 28), rep(33, 14), 2);
    run(log_n, "IV", chain(Some(36), 25, 28, 27), p4.clone(), 3);
    run(log_n, "IV_third24", chain(Some(24), 25, 28, 27), p4.clone(), 3);
    run(log_n, "III_p4", chain(None, 25, 28, 27), p4.clone(), 2);
}
