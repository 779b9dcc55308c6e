//! Per-stage error of one fully packed bootstrap of a preset's chain on a smaller ring (the
//! preset's own primes, `N` lowered): each stage is compared with an exact reference computed
//! from the decryption of its own input, so a stage's line is that stage's error alone.
//!
//! `PRESET=CRATERLAKE_80_BOOT LOGN=14 cargo run --release -p basalt-circuits --example btp_stages`
//!
//! Units: every error is in the message's units (slot values in [−1, 1]²): a CoeffToSlot or
//! EvalMod error `δ` on a coefficient slot becomes `δ·(K·Q_0 or a0)/Δ_m` there.

use basalt_circuits::bootstrap::config::for_preset;
use basalt_circuits::bootstrap::dft::bit_reverse;
use basalt_circuits::bootstrap::{BootstrapConfig, Bootstrapper};
use basalt_circuits::testing::random_values;
use basalt_ckks::encryptor::{decrypt, encrypt_sk};
use basalt_ckks::{Ciphertext, Encoder, KeyGenerator, Parameters, PrecisionStats};
use num_bigint::BigInt;
use num_complex::Complex64;
use num_traits::ToPrimitive;

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d)
}

fn rms_max(e: &[f64]) -> String {
    let max = e.iter().cloned().fold(0.0, f64::max);
    let rms = (e.iter().map(|x| x * x).sum::<f64>() / e.len() as f64).sqrt();
    format!("rms 2^{:.1}, max 2^{:.1}", rms.log2(), max.log2())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::var("PRESET").unwrap_or_else(|_| "CRATERLAKE_80_BOOT".into());
    let log_n: u32 = env("LOGN", 14);
    let preset = Parameters::preset_insecure(&name)?; // default: CraterLake's 80-bit chain
    if std::env::var("SE_ONLY").is_ok() {
        // EvalMod's scale on the full preset against the config's nominal one (shapes only).
        let cfg = for_preset(&name, None, preset.log_n()).ok_or("no circuit")?;
        let bt = Bootstrapper::symbolic(&preset, cfg)?;
        println!(
            "{name}: S_e 2^{:.3}, nominal 2^{}",
            bt.evalmod_scale().log2(),
            cfg.evalmod.log_scale
        );
        return Ok(());
    }
    let mut lit = preset.literal().clone();
    lit.q = preset.q().to_vec();
    lit.p = preset.p().to_vec();
    lit.log_q.clear();
    lit.log_p.clear();
    lit.log_n = log_n;
    lit.allow_insecure = true;
    lit.name = format!("{name}_N{log_n}");
    lit.aliases.clear();
    if let Ok(h) = std::env::var("SECRET_H") {
        lit.secret = basalt_ckks::SecretDistribution::Hamming { h: h.parse()? };
    }
    let params = Parameters::new(lit)?;
    let mut cfg: BootstrapConfig = for_preset(&name, None, log_n).ok_or("no circuit")?;
    if let Ok(r) = std::env::var("RATIO") {
        cfg.log_message_ratio = r.parse()?;
    }
    let bt = Bootstrapper::new(&params, cfg)?;
    let sk = KeyGenerator::new(&params).gen_secret_key();
    let (keys, encaps) = bt.generate_keys(&sk, false)?;
    let eval = basalt_ckks::Evaluator::new(&params, keys)?;
    let enc = Encoder::new(&params);
    let n = bt.slots();
    assert_eq!(n, params.max_slots(), "fully packed only");
    let dec = |ct: &Ciphertext| enc.decode(&decrypt(&params, ct, &sk).unwrap()).unwrap();
    let ring = params.ring();
    let coeffs = |ct: &Ciphertext| -> Vec<BigInt> {
        let mut p = decrypt(&params, ct, &sk).unwrap().poly().clone();
        ring.intt_assign(&mut p);
        ring.to_bigint_centered(&p)
    };

    let base = params.base_primes();
    let q0_big: BigInt = params.q()[..base].iter().map(|&q| BigInt::from(q)).product();
    let q0 = q0_big.to_f64().unwrap();
    let v = random_values(n, 1, false);
    let scale = params.default_scale().min(bt.max_input_scale());
    let pt = enc.encode(&v, n, base - 1, scale)?;
    let ct = encrypt_sk(&params, &pt, &sk)?;
    let (raised, msg_scale) = bt.mod_raise(&eval, encaps.as_ref(), &ct)?;
    let k = bt.config().evalmod.k;
    println!(
        "{name} at N=2^{log_n}: log Q_0 {:.2}, input scale 2^{:.1}, Δ_m 2^{:.2}, ratio {}, K {k}, \
         S_e 2^{:.3} (nominal 2^{})",
        q0.log2(),
        scale.log2(),
        msg_scale.log2(),
        bt.message_ratio(),
        bt.evalmod_scale().log2(),
        bt.config().evalmod.log_scale
    );
    println!("fresh input: mean {:.2} bits", PrecisionStats::new(&v, &dec(&ct)).mean.l2);

    // ModRaise: t = m' + Q_0·I with m' the (encapsulated, switched) message.
    let t = coeffs(&raised);
    let (mut frac, mut ints) = (Vec::new(), Vec::new());
    for c in &t {
        let i = BigInt::from((c.to_f64().unwrap() / q0).round() as i64);
        frac.push((c.clone() - &i * &q0_big).to_f64().unwrap());
        ints.push(i.to_f64().unwrap());
    }
    let imax = ints.iter().map(|x| x.abs()).fold(0.0, f64::max);
    println!("ModRaise: max |I| = {imax} (K = {k})");
    // The message in coefficients: the input's decryption times the integer factor.
    let m_in: Vec<f64> = coeffs(&ct).iter().map(|c| c.to_f64().unwrap() / ct.scale()).collect();
    let m_raise: Vec<f64> = frac.iter().map(|f| f / msg_scale).collect();
    let e: Vec<f64> = m_in.iter().zip(&m_raise).map(|(a, b)| (a - b).abs()).collect();
    let mag: Vec<f64> = m_in.iter().map(|x| x.abs()).collect();
    println!("  coefficient magnitude (Δ_m units): {}", rms_max(&mag));
    println!("  ModRaise+encapsulation error (Δ_m units, per coefficient): {}", rms_max(&e));

    // CoeffToSlot: slots j of half h hold t[BR(j) + h·n]/(K·Q_0).
    let halves = bt.coeffs_to_slots(&eval, &raised)?;
    let mut cts_out = Vec::new();
    for (h, half) in halves.iter().enumerate() {
        let got: Vec<f64> = dec(half).iter().map(|z| z.re).collect();
        let mut want: Vec<f64> =
            (0..n).map(|j| (ints[j + h * n] * q0 + frac[j + h * n]) / (k * q0)).collect();
        bit_reverse(&mut want);
        let e: Vec<f64> =
            want.iter().zip(&got).map(|(a, b)| (a - b).abs() * k * q0 / msg_scale).collect();
        let im: Vec<f64> = dec(half).iter().map(|z| z.im.abs() * k * q0 / msg_scale).collect();
        println!(
            "CtS half {h}: level {}, scale 2^{:.3}; error (Δ_m units) {}; imag leak {}",
            half.level(),
            half.scale().log2(),
            rms_max(&e),
            rms_max(&im)
        );
        cts_out.push(got);
    }

    // EvalMod step by step (the cosine interpolant, then each double angle), each against the
    // plain function of the decrypted CtS slots.
    {
        use basalt_circuits::polynomial;
        let em = bt.config().evalmod;
        let p = em.polynomial()?;
        let c = params.primes_per_rescale();
        let pl = polynomial::eval::plan(&params, halves[0].level(), &p)?;
        let dropped =
            |l: usize| -> f64 { params.q()[l + 1 - c..=l].iter().map(|&q| q as f64).product() };
        let mut sc = bt.evalmod_scale();
        for i in (0..em.double_angle).rev() {
            sc = (sc * dropped(pl.out_level - i * c)).sqrt();
        }
        // The power chain T_2, T_4, T_8, T_16 by squaring, against the decrypted input.
        let mut t = halves[0].clone();
        let mut tw: Vec<f64> = cts_out[0].clone();
        for k in [2, 4, 8, 16] {
            let sq = eval.mul_relin(&t, &t)?;
            let fresh = dec(&sq).iter().map(|z| z.re).collect::<Vec<_>>();
            let two = eval.add(&sq, &sq)?;
            let two = eval.add_const(&two, (-1.0).into())?;
            let before: Vec<f64> = tw.clone();
            t = eval.rescale(&two)?;
            tw.iter_mut().for_each(|w| *w = 2.0 * *w * *w - 1.0);
            let got: Vec<f64> = dec(&t).iter().map(|z| z.re).collect();
            let e: Vec<f64> = tw.iter().zip(&got).map(|(a, b)| (a - b).abs()).collect();
            let e_sq: Vec<f64> =
                before.iter().zip(&fresh).map(|(a, b)| (a * a - b).abs()).collect();
            println!(
                "  T_{k}: level {}, scale 2^{:.3}, error {} (of which the product before rescale {}); rms |T| {:.3}",
                t.level(),
                t.scale().log2(),
                rms_max(&e),
                rms_max(&e_sq),
                (tw.iter().map(|x| x * x).sum::<f64>() / n as f64).sqrt()
            );
        }
        println!(
            "  plan {pl:?}; coeffs {:?}",
            p.coeffs.iter().map(|c| format!("{c:.2e}")).collect::<Vec<_>>()
        );
        let mut y = polynomial::evaluate(&eval, &halves[0], &p, Some(sc))?;
        let mut want: Vec<f64> = cts_out[0].iter().map(|&x| p.evaluate_plain(x)).collect();
        for step in 0..=em.double_angle {
            if step > 0 {
                let sq = eval.mul_relin(&y, &y)?;
                let two = eval.add(&sq, &sq)?;
                let two = eval.add_const(&two, (-1.0).into())?;
                y = eval.rescale(&two)?;
                want.iter_mut().for_each(|w| *w = 2.0 * *w * *w - 1.0);
            }
            let got: Vec<f64> = dec(&y).iter().map(|z| z.re).collect();
            let e: Vec<f64> = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).collect();
            println!(
                "  EvalMod step {step}: level {}, scale 2^{:.3}, error (y units) {}, ×4^(r−step) {}",
                y.level(),
                y.scale().log2(),
                rms_max(&e),
                rms_max(
                    &e.iter()
                        .map(|x| x * 4f64.powi((em.double_angle - step) as i32))
                        .collect::<Vec<_>>()
                )
            );
        }
    }

    // EvalMod on its own input: the ideal sin(2π·K·x)·a of the decrypted CtS slots.
    let reduced = bt.eval_mod(&eval, &halves, msg_scale, ct.scale())?;
    let a0 = bt.message_ratio().exp2() / (2.0 * std::f64::consts::PI);
    let a = q0 / (2.0 * std::f64::consts::PI * msg_scale);
    let mut em_out = Vec::new();
    for (h, half) in reduced.iter().enumerate() {
        let got: Vec<f64> = dec(half).iter().map(|z| z.re * a0).collect();
        let ideal: Vec<f64> =
            cts_out[h].iter().map(|&x| (2.0 * std::f64::consts::PI * k * x).sin() * a).collect();
        let e: Vec<f64> = ideal.iter().zip(&got).map(|(a, b)| (a - b).abs()).collect();
        let mut exact: Vec<f64> = (0..n).map(|j| m_raise[j + h * n]).collect();
        bit_reverse(&mut exact);
        let e2: Vec<f64> = exact.iter().zip(&got).map(|(a, b)| (a - b).abs()).collect();
        println!(
            "EvalMod half {h}: level {}, scale 2^{:.3}; vs sine of its input {}; vs exact m {}",
            half.level(),
            half.scale().log2(),
            rms_max(&e),
            rms_max(&e2)
        );
        em_out.push(dec(half));
    }

    // SlotToCoeff on its own input: special FFT of a0·BR(y_re + i·y_im).
    let out = bt.slots_to_coeffs(&eval, &reduced)?;
    let mut w: Vec<Complex64> = (0..n)
        .map(|j| (Complex64::new(em_out[0][j].re, 0.0) + Complex64::i() * em_out[1][j].re) * a0)
        .collect();
    bit_reverse(&mut w);
    enc.special_fft(&mut w);
    let have = dec(&out);
    let e: Vec<f64> = w.iter().zip(&have).map(|(a, b)| (a - b).norm()).collect();
    println!(
        "StC: level {}, scale 2^{:.3}; vs FFT of its input {}",
        out.level(),
        out.scale().log2(),
        rms_max(&e)
    );
    let ideal_of_em = PrecisionStats::new(&v, &w);
    println!("exact StC of the EvalMod output vs input: mean {:.2}", ideal_of_em.mean.l2);
    let p = PrecisionStats::new(&v, &have);
    println!("final: mean {:.2} bits, worst slot {:.2}", p.mean.l2, p.min.l2);
    Ok(())
}
