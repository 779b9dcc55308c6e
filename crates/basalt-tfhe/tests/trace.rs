//! Trace hooks: one PBS (and a batch) emit exactly the closed-form kernel counts.

use basalt_tfhe::params::toy;
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{BatchConfig, ClientKey, Lut};
use basalt_trace::{Event, Kernel, KernelKind, TfheKey, TfheStep, record};

#[test]
fn one_pbs_matches_closed_form() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(31);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let lut = Lut::from_fn(&params, |x| x);
    let ct = ck.encrypt_with(3, &mut rng).unwrap();
    let (out, trace) = record(|| sk.apply_lut(&ct, &lut).unwrap());
    assert_eq!(ck.decrypt(&out).unwrap(), 3);
    let n = params.lwe_dimension as u64;
    let k = params.glwe_dimension as u64;
    let l = params.pbs_level as u64;
    let c = |s| trace.count(KernelKind::Tfhe(s));
    assert_eq!(c(TfheStep::Fft), n * (k + 1) * l);
    assert_eq!(c(TfheStep::Decompose), n * (k + 1) * l);
    assert_eq!(c(TfheStep::MultAdd), n * (k + 1) * l * (k + 1));
    assert_eq!(c(TfheStep::Ifft), n * (k + 1));
    assert_eq!(c(TfheStep::Accumulate), n * (k + 1));
    assert_eq!(c(TfheStep::Rotate), n * (k + 1) + 1);
    assert_eq!(c(TfheStep::ModSwitch), 1);
    assert_eq!(c(TfheStep::SampleExtract), 1);
    assert_eq!(
        c(TfheStep::KeySwitch),
        (k * params.polynomial_size as u64) * params.ks_level as u64
    );
    // One kernel event per step per iteration.
    let ffts =
        trace.kernels().filter(|k| k.kind() == KernelKind::Tfhe(TfheStep::Fft)).count() as u64;
    assert_eq!(ffts, n);
    let names: Vec<&str> = trace
        .events
        .iter()
        .filter_map(|e| if let Event::Enter { name } = e { Some(name.as_str()) } else { None })
        .collect();
    assert_eq!(names, vec!["KeySwitch", "PBS", "BlindRotate"]);
}

#[test]
fn batch_emits_from_calling_thread_scaled_by_batch() {
    let params = toy::u64_small();
    let mut rng = Csprng::from_seed(32);
    let ck = ClientKey::<u64>::with_rng(&params, &mut rng).unwrap();
    let sk = ck.server_key_with(&mut rng);
    let lut = Lut::from_fn(&params, |x| x);
    let cts: Vec<_> = (0..6).map(|m| ck.encrypt_with(m, &mut rng).unwrap()).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (_, trace) = pool
        .install(|| record(|| sk.apply_lut_batch(&cts, &lut, &BatchConfig::default()).unwrap()));
    let n = params.lwe_dimension as u64;
    assert_eq!(trace.count(KernelKind::Tfhe(TfheStep::Fft)), 6 * n * 2 * params.pbs_level as u64);
    assert_eq!(trace.count(KernelKind::Tfhe(TfheStep::SampleExtract)), 6);
    // The batch streams each key once per core-level sub-batch, not once per LWE: every
    // sub-batch reads each GGSW once ((k+1)·l × (k+1) polynomials; one load per iteration),
    // and the ksk (kN·l_k LWE rows) is read once for the whole batch.
    let k = params.glwe_dimension as u64;
    let l = params.pbs_level as u64;
    let big_n = params.polynomial_size as u64;
    // One sample-extraction event per sub-batch.
    let subs =
        trace.kernels().filter(|x| x.kind() == KernelKind::Tfhe(TfheStep::SampleExtract)).count()
            as u64;
    assert!((1..6).contains(&subs), "6 LWEs on 2 threads in fewer sub-batches than LWEs: {subs}");
    let loads: Vec<_> =
        trace.kernels().filter(|x| x.kind() == KernelKind::TfheKeyLoad).cloned().collect();
    assert_eq!(loads.len() as u64, subs * n + 1, "{loads:?}");
    let bsk_words = subs * n * (k + 1) * l * (k + 1) * big_n;
    let ksk_words = k * big_n * params.ks_level as u64 * (n + 1);
    let words = |key| {
        loads
            .iter()
            .filter(|x| matches!(x, Kernel::TfheKeyLoad { key: kk, .. } if *kk == key))
            .map(Kernel::units)
            .sum::<u64>()
    };
    assert_eq!(words(TfheKey::Ggsw), bsk_words);
    assert_eq!(words(TfheKey::Ksk), ksk_words);
    // Nothing is recorded when no recorder is open (and nothing leaks from workers).
    assert!(!basalt_trace::is_recording());
}
