//! Server-key generation reports its stages and rows, stops when its observer cancels, is
//! refused before allocating when it cannot fit, and makes the same key as the unchecked path
//! from the same generator; the memory estimate is the bytes generation allocates.

use std::sync::Mutex;

use basalt_math::progress::{Cancelled, Progress, Silent, available_memory};
use basalt_tfhe::params::{AtomicPattern, TfheParams, toy};
use basalt_tfhe::random::Csprng;
use basalt_tfhe::{ClientKey, ServerKeyMemory, TfheError};

/// Records every stage and step; cancels at the `stop`-th step if given.
#[derive(Default)]
struct Record {
    events: Mutex<Vec<(String, u64, u64)>>,
    stage: Mutex<(String, u64)>,
    stop: Option<usize>,
}

impl Progress for Record {
    fn stage(&self, name: &str, total: u64) {
        *self.stage.lock().unwrap() = (name.to_string(), total);
    }
    fn step(&self, done: u64) -> Result<(), Cancelled> {
        let (name, total) = self.stage.lock().unwrap().clone();
        let mut ev = self.events.lock().unwrap();
        ev.push((name, done, total));
        if self.stop.is_some_and(|s| ev.len() >= s) { Err(Cancelled) } else { Ok(()) }
    }
}

/// The 2+2-bit preset's noise-reduction settings on a toy ring, so the third stage runs.
fn toy_with_noise_reduction() -> TfheParams {
    let preset = TfheParams::preset("TFHERS_2_2_KS_PBS", true).unwrap();
    let msnr = preset.ms_noise_reduction.expect("the 2+2 preset uses noise reduction");
    let mut lit = toy::literal(64, 128, 512, (16, 2), (4, 5), 4, 2, AtomicPattern::KsPbs);
    lit.ms_noise_reduction = Some(msnr);
    TfheParams::from_literal(lit, true).unwrap()
}

#[test]
fn every_stage_is_reported_to_its_last_row_and_the_key_is_unchanged() {
    let params = toy_with_noise_reduction();
    let ck = ClientKey::<u64>::with_rng(&params, &mut Csprng::from_seed(1)).unwrap();
    let rec = Record::default();
    let checked = ck.server_key_checked(&mut Csprng::from_seed(2), false, &rec).unwrap();
    let plain = ck.server_key_with(&mut Csprng::from_seed(2));
    assert_eq!(checked.bsk(), plain.bsk());
    assert_eq!(checked.ksk(), plain.ksk());

    let events = rec.events.into_inner().unwrap();
    let last = |stage: &str| events.iter().rfind(|e| e.0 == stage).cloned();
    // Each stage ends with every row done, and its steps only go up.
    assert_eq!(last("bootstrapping key"), Some(("bootstrapping key".into(), 128, 128)));
    assert_eq!(last("key-switching key"), Some(("key-switching key".into(), 512, 512)));
    assert_eq!(last("noise-reduction key"), Some(("noise-reduction key".into(), 1, 1)));
    assert!(events.iter().filter(|e| e.0 == "bootstrapping key").count() > 1);
    assert!(events.windows(2).all(|w| w[0].0 != w[1].0 || w[0].1 < w[1].1), "{events:?}");
}

#[test]
fn a_cancelling_observer_stops_generation_between_rows() {
    let params = toy::u64_small();
    let ck = ClientKey::<u64>::with_rng(&params, &mut Csprng::from_seed(3)).unwrap();
    let rec = Record { stop: Some(2), ..Record::default() };
    let e = ck.server_key_checked(&mut Csprng::from_seed(4), false, &rec).unwrap_err();
    assert_eq!(e, TfheError::Cancelled);
    // Stopped at the second report, inside the bootstrapping key.
    let events = rec.events.into_inner().unwrap();
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.0 == "bootstrapping key" && e.1 < 128), "{events:?}");
}

#[test]
fn the_estimate_is_the_generated_key_size() {
    for params in [toy_with_noise_reduction(), toy::u64_small()] {
        let ck = ClientKey::<u64>::with_rng(&params, &mut Csprng::from_seed(5)).unwrap();
        let sk = ck.server_key_checked(&mut Csprng::from_seed(6), false, &Silent).unwrap();
        let est = ServerKeyMemory::estimate::<u64>(&params);
        assert_eq!(est.bootstrapping, sk.bsk().size_bytes() as u64);
        assert_eq!(est.key_switching, sk.ksk().size_bytes() as u64);
        let msnr = sk.ms_noise_reduction_key().map_or(0, |k| k.size_bytes() as u64);
        assert_eq!(est.noise_reduction, msnr);
        assert_eq!(est.total, est.bootstrapping + est.key_switching + est.noise_reduction);
    }
    let params = toy::u32_small();
    let ck = ClientKey::<u32>::with_rng(&params, &mut Csprng::from_seed(7)).unwrap();
    let sk = ck.server_key_checked(&mut Csprng::from_seed(8), false, &Silent).unwrap();
    let est = ServerKeyMemory::estimate::<u32>(&params);
    assert_eq!(est.key_switching, sk.ksk().size_bytes() as u64);
}

/// A set whose key cannot fit is refused by name before anything is allocated. The set is
/// valid but absurd (N = 2^16, k = 8, 64 levels: far beyond any machine), and is only
/// estimated, never built: the check comes first.
#[test]
fn a_key_beyond_the_memory_available_is_refused() {
    let Some(avail) = available_memory() else { return };
    let lit = toy::literal(64, 8192, 1 << 16, (1, 64), (4, 5), 4, 2, AtomicPattern::KsPbs);
    let mut lit = lit;
    lit.glwe_dimension = 8;
    let params = TfheParams::from_literal(lit, true).unwrap();
    assert!(ServerKeyMemory::estimate::<u64>(&params).total > avail);
    let ck = ClientKey::<u64>::with_rng(&params, &mut Csprng::from_seed(9)).unwrap();
    let e = ck.server_key_checked(&mut Csprng::from_seed(10), false, &Silent).unwrap_err();
    assert!(matches!(e, TfheError::OutOfMemory { .. }), "{e}");
    assert!(e.to_string().contains(&params.name), "{e}");
}
