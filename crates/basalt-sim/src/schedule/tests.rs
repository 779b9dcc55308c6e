//! Tests of the window scheduler: overlap, prefetch, stalls, regions, the on-chip store.

use super::*;
use crate::machine::{Overlap, UnitClass};
use crate::synth::Builder;
use crate::units::tests::unit;
use basalt_trace::ElemOp;

/// 1 GHz, 1000 GB/s (1000 B/cycle), 4-byte words; NTT and element-wise units of 2048 lanes.
fn toy(overlap: Overlap) -> Machine {
    let mut m = crate::machine::tests::minimal();
    m.schedule.overlap = overlap;
    m.units.push(unit(UnitClass::Elem, 1, 2048));
    m
}

const N: u32 = 1 << 16;

fn three(split: bool) -> Trace {
    let mut b = Builder::new();
    b.k(Kernel::Ntt { n: N, limbs: 2 }); // 64 cycles
    let rest = |b: &mut Builder| {
        b.k(Kernel::Elem { n: N, limbs: 3, op: ElemOp::Add }); // 96 cycles
        b.k(Kernel::PlainLoad { n: N, limbs: 1 }); // 262,144 B = 262.144 cycles
    };
    if split {
        b.region("second", rest);
    } else {
        rest(&mut b);
    }
    b.build()
}

#[test]
fn chained_window_is_busiest_unit_or_memory() {
    let r = simulate(&toy(Overlap::Chained), &three(false)).unwrap();
    assert!((r.cycles - 262.144).abs() < 1e-9, "{}", r.cycles);
    assert!((r.compute_cycles - 96.0).abs() < 1e-9);
    assert!((r.stall_cycles - 166.144).abs() < 1e-9);
    assert_eq!(r.traffic.plaintexts, 262_144.0);
    assert_eq!(r.unit("ntt").unwrap().busy_cycles, 64.0);
}

#[test]
fn pooled_units_share_their_resource() {
    // NTT 64 + Add 96 cycles in one window: chained overlap takes the busier unit, unless
    // both draw on one pool (FAB's FU array), which sums them; a unit outside the pool
    // still overlaps.
    let mut b = Builder::new();
    b.k(Kernel::Ntt { n: N, limbs: 2 });
    b.k(Kernel::Elem { n: N, limbs: 3, op: ElemOp::Add });
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    assert_eq!(simulate(&m, &t).unwrap().compute_cycles, 96.0);
    for u in &mut m.units {
        u.pools = vec!["fu".into()];
    }
    assert_eq!(simulate(&m, &t).unwrap().compute_cycles, 160.0);
    m.units[0].pools = vec!["other".into()];
    assert_eq!(simulate(&m, &t).unwrap().compute_cycles, 96.0);
}

#[test]
fn serial_sums_and_regions_cut_windows() {
    let r = simulate(&toy(Overlap::Serial), &three(false)).unwrap();
    assert!((r.compute_cycles - 160.0).abs() < 1e-9);
    let r = simulate(&toy(Overlap::Chained), &three(true)).unwrap();
    assert!((r.cycles - (64.0 + 262.144)).abs() < 1e-9);
    assert_eq!(r.regions["(top)"].cycles, 64.0);
    assert!((r.regions["second"].stall_cycles - 166.144).abs() < 1e-9);
    assert_eq!(r.folded().lines().count(), 2);
}

#[test]
fn prefetch_lets_loads_run_under_the_previous_window() {
    let mut b = Builder::new();
    b.region("a", |b| {
        b.k(Kernel::Ntt { n: N, limbs: 4 }); // 128 cycles, no memory
    });
    b.region("b", |b| {
        b.k(Kernel::Elem { n: N, limbs: 1, op: ElemOp::Add }); // 32 cycles
        b.k(Kernel::PlainLoad { n: N, limbs: 1 }); // 262.144 cycles
    });
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    let r0 = simulate(&m, &t).unwrap();
    assert!((r0.cycles - (128.0 + 262.144)).abs() < 1e-9);
    m.schedule.prefetch_windows = 1;
    let r1 = simulate(&m, &t).unwrap();
    // The load starts with window "a" and ends at 262.144; window "b" ends then.
    assert!((r1.cycles - 262.144).abs() < 1e-9, "{}", r1.cycles);
    assert!((r1.regions["b"].stall_cycles - (262.144 - 128.0 - 32.0)).abs() < 1e-9);
}

#[test]
fn overlapping_windows_share_time_but_keep_unit_order() {
    let mut b = Builder::new();
    b.region("a", |b| {
        b.k(Kernel::Ntt { n: N, limbs: 4 });
    }); // ntt 128
    b.region("b", |b| {
        b.k(Kernel::Elem { n: N, limbs: 3, op: ElemOp::Add });
    }); // elem 96
    b.region("c", |b| {
        b.k(Kernel::Ntt { n: N, limbs: 2 });
    }); // ntt 64
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    let r0 = simulate(&m, &t).unwrap();
    assert_eq!(r0.cycles, 128.0 + 96.0 + 64.0);
    m.schedule.overlap_windows = 1;
    let r1 = simulate(&m, &t).unwrap();
    // b runs beside a; c waits for a (two windows back) and for the NTT unit: 128 + 64.
    assert_eq!(r1.cycles, 192.0);
    assert_eq!((r1.regions["b"].cycles, r1.regions["c"].cycles), (0.0, 64.0));
    assert_eq!(r1.stall_cycles, 0.0);
    assert_eq!(r1.unit("ntt").unwrap().busy_cycles, 192.0);
    // A serial machine has one FU array: nothing overlaps.
    let mut s = toy(Overlap::Serial);
    s.schedule.overlap_windows = 1;
    assert_eq!(simulate(&s, &t).unwrap().cycles, 288.0);
}

#[test]
fn key_subsets_serve_lower_levels_from_the_resident_key() {
    use basalt_trace::KeyId;
    let g5 = || Event::Key { key: KeyId::Galois { element: 5 } };
    let load = |limbs| Event::Kernel(Kernel::KeyLoad { n: N, limbs, digits: 1, seeded: false });
    // The key at 4 limbs, then at 2 (a subset), then at 6 (larger: reloaded).
    let t = Trace { events: vec![g5(), load(4), g5(), load(2), g5(), load(6)] };
    let mut m = toy(Overlap::Chained);
    m.memory.onchip_mib = 64.0;
    let limb = 2.0 * 65_536.0 * 4.0;
    let off = simulate(&m, &t).unwrap();
    assert_eq!((off.onchip_hits, off.traffic.keys), (0, 12.0 * limb));
    m.memory.key_subsets = true;
    let on = simulate(&m, &t).unwrap();
    assert_eq!((on.onchip_hits, on.traffic.keys), (1, 10.0 * limb));
}

#[test]
fn prefetch_can_count_loading_windows_only() {
    // A load, two compute-only windows, a second load: counted over all windows the
    // second load waits for window "c" to start; counted over loading windows it may
    // start with window "a".
    let load = |b: &mut Builder| {
        b.k(Kernel::PlainLoad { n: N, limbs: 1 }); // 262.144 cycles
    };
    let ntt = |b: &mut Builder| {
        b.k(Kernel::Ntt { n: N, limbs: 4 }); // 128 cycles
    };
    let mut b = Builder::new();
    b.region("a", load);
    b.region("b", ntt);
    b.region("c", ntt);
    b.region("d", load);
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    m.schedule.prefetch_windows = 1;
    let by_window = simulate(&m, &t).unwrap();
    // d's load starts when c starts (262.144 + 128) and takes 262.144.
    assert!((by_window.cycles - (2.0 * 262.144 + 128.0)).abs() < 1e-9);
    m.schedule.prefetch_loading_windows = true;
    let by_load = simulate(&m, &t).unwrap();
    // d's load follows a's on the HBM timeline: both loads end at 524.288.
    assert!((by_load.cycles - 2.0 * 262.144).abs() < 1e-9, "{}", by_load.cycles);
}

#[test]
fn key_share_splits_channels() {
    let mut b = Builder::new();
    b.k(Kernel::KeyLoad { n: N, limbs: 1, digits: 1, seeded: false }); // 524,288 B
    b.k(Kernel::PlainLoad { n: N, limbs: 1 }); // 262,144 B
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    assert!((simulate(&m, &t).unwrap().cycles - 786.432).abs() < 1e-9);
    // Half the channels for keys: max(524.288 / 0.5, 262.144 / 0.5) cycles.
    m.memory.key_share = Some(0.5);
    assert!((simulate(&m, &t).unwrap().cycles - 1048.576).abs() < 1e-9);
    // A TFHE ksk (524,288 B) rides with the keys, or on its own channels with `ksk_share`.
    let mut b = Builder::new();
    b.k(Kernel::KeyLoad { n: N, limbs: 1, digits: 1, seeded: false });
    b.k(Kernel::TfheKeyLoad { key: basalt_trace::TfheKey::Ksk, size: 1024, count: 128 });
    let t = b.build();
    assert!((simulate(&m, &t).unwrap().cycles - 2097.152).abs() < 1e-9);
    m.memory.ksk_share = Some(0.125);
    assert!((simulate(&m, &t).unwrap().cycles - 4194.304).abs() < 1e-9);
}

#[test]
fn limb_interleaving_off_isolates_bconv() {
    let mut m = toy(Overlap::Chained);
    let mut bc = unit(UnitClass::Bconv, 1, 2048);
    bc.style = Some(crate::machine::Style::Streaming);
    m.units.push(bc);
    let mut b = Builder::new();
    b.k(Kernel::Intt { n: N, limbs: 4 }); // 128
    b.k(Kernel::BConv { n: N, from: 4, to: 8 }); // 32 · 8 = 256
    b.k(Kernel::Ntt { n: N, limbs: 8 }); // 256
    let t = b.build();
    m.switches.limb_interleaving = Some(true);
    assert_eq!(simulate(&m, &t).unwrap().cycles, 384.0); // NTT unit 128 + 256
    m.switches.limb_interleaving = Some(false);
    assert_eq!(simulate(&m, &t).unwrap().cycles, 128.0 + 256.0 + 256.0);
}

#[test]
fn modchange_lockstep_holds_both_ntt_units_for_the_bconv_period() {
    // Osiris: two MDCs (INTT and NTT stage of ModChange) and a BConv array. A ModUp-like
    // 4 → 8 conversion takes the array 32 · 8 = 256 cycles; its INTT (4 limbs) and NTT
    // (8 limbs) cost the two NTT units 12 · 16 = 192 cycles. An independent 8-limb NTT
    // (OF-Limb, 128 cycles) then overlaps the array's idle remainder, unless the pipeline
    // holds the NTT units for the whole period: 256 + 128.
    let mut m = toy(Overlap::Chained);
    m.units[0].count = 2;
    let mut bc = unit(UnitClass::Bconv, 1, 2048);
    bc.style = Some(crate::machine::Style::Streaming);
    m.units.push(bc);
    let mut b = Builder::new();
    b.k(Kernel::Intt { n: N, limbs: 4 });
    b.k(Kernel::BConv { n: N, from: 4, to: 8 });
    b.k(Kernel::Ntt { n: N, limbs: 8 });
    b.k(Kernel::Ntt { n: N, limbs: 8 });
    let t = b.build();
    assert_eq!(simulate(&m, &t).unwrap().cycles, 320.0);
    m.switches.modchange_lockstep = Some(true);
    let r = simulate(&m, &t).unwrap();
    assert_eq!(r.cycles, 384.0);
    assert_eq!(r.unit("ntt").unwrap().busy_cycles, 384.0);
}

#[test]
fn identified_operands_go_through_the_onchip_store() {
    use basalt_trace::{KeyId, TfheKey};
    // Two loads of one named key, a result stored and reloaded, a fresh input, a TFHE key
    // loaded twice. Each key is 2 × 1 × 65,536 × 4 B = 512 KiB; a ciphertext 512 KiB.
    let key = Kernel::KeyLoad { n: N, limbs: 1, digits: 1, seeded: false };
    let ct = |id, store: bool| {
        if store {
            Kernel::CtStore { n: N, limbs: 1, polys: 2, id }
        } else {
            Kernel::CtLoad { n: N, limbs: 1, polys: 2, id }
        }
    };
    let bsk = Kernel::TfheKeyLoad { key: TfheKey::Bsk, size: 1024, count: 64 }; // 256 KiB
    let g5 = Event::Key { key: KeyId::Galois { element: 5 } };
    let k = |k: Kernel| Event::Kernel(k);
    let events = vec![
        g5.clone(),
        k(key.clone()),
        k(ct(1, false)),
        k(ct(7, true)),
        g5,
        k(key.clone()),
        k(ct(7, false)),
        k(bsk.clone()),
        k(bsk),
        k(key), // anonymous: always streams
    ];
    let t = Trace { events };
    let kib = 1024.0;
    let mut m = toy(Overlap::Chained);
    m.memory.onchip_mib = 64.0;
    let big = simulate(&m, &t).unwrap();
    assert_eq!(big.onchip_hits, 3); // second key, reloaded result, second bsk
    assert_eq!(big.traffic.keys, (512.0 + 256.0 + 512.0) * kib);
    assert_eq!(big.traffic.ciphertexts, 512.0 * kib);
    assert_eq!(big.traffic.intermediates, 0.0);
    // 0.25 MiB holds nothing but the bsk; everything else streams.
    m.memory.onchip_mib = 0.25;
    let tiny = simulate(&m, &t).unwrap();
    assert_eq!(tiny.onchip_hits, 1); // only the bsk fits
    assert_eq!(tiny.traffic.keys, (3.0 * 512.0 + 256.0) * kib);
    // The result is written through (too large to keep) and reloaded as an intermediate.
    assert_eq!(tiny.traffic.intermediates, 2.0 * 512.0 * kib);
    assert!(tiny.cycles > big.cycles);
    // LRU on the same sequence, large store: the same hits as Belady.
    m.memory.onchip_mib = 64.0;
    m.memory.eviction = crate::machine::Eviction::Lru;
    assert_eq!(simulate(&m, &t).unwrap().onchip_hits, 3);
}

#[test]
fn energy_and_area_roll_up_or_say_what_is_missing() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/");
    let t = crate::synth::ckks::hybrid_keyswitch(crate::synth::ckks::KsShape {
        n: N,
        limbs: 20,
        dnum: 1,
        special: 20,
        seeded: false,
    });
    // Osiris gives power and area for every block of Table V (its PRNG at zero: Table V has no
    // such block); `[physical]` turns them into energy per action and area per lane.
    let m = Machine::load(format!("{dir}osiris.toml")).unwrap();
    let r = simulate(&m, &t).unwrap();
    let c = &r.costs;
    let area: f64 = m.units.iter().filter_map(|u| m.unit_area_mm2(u)).sum::<f64>()
        + m.components.iter().map(|c| c.area_mm2.unwrap()).sum::<f64>();
    assert!((c.area_mm2.unwrap() - area).abs() < 1e-9);
    assert!((area - 243.96).abs() < 0.01, "Table V's column sum: {area}");
    assert!(c.no_area.is_empty(), "{:?}", c.no_area);
    assert_eq!(c.no_power, ["HBM"], "the HBM block's energy is per byte moved");
    let e = r.energy_j.unwrap();
    assert!((e - (c.units_j + c.components_j + c.hbm_j.unwrap_or(0.0))).abs() < 1e-15);
    assert!((c.power_w.unwrap() - e / r.seconds).abs() < 1e-9);
    let text = r.to_string();
    assert!(text.contains(" J (units ") && text.contains(" mm²"), "{text}");
    assert!(text.contains(" W average, "), "{text}");
    // CraterLake's paper gives areas (Table 2) and a power budget, no per-FU power: its
    // energies per action come from Osiris' by the scaling rule, its areas back as Table 2's.
    let m = Machine::load(format!("{dir}craterlake.toml")).unwrap();
    let r = simulate(&m, &hybrid_keyswitch_l60()).unwrap();
    assert!(r.energy_j.is_some());
    let text = r.to_string();
    assert!(text.contains("area 474.10 mm²"), "{text}"); // Table 2 blocks × instances
    // Our CPU model has neither, and says so without blaming a paper.
    let m = Machine::load(format!("{dir}cpu.toml")).unwrap();
    let text = simulate(&m, &t).unwrap().to_string();
    assert!(text.contains("energy: not given by the machine file"), "{text}");
}

fn hybrid_keyswitch_l60() -> Trace {
    use crate::synth::ckks::{KsShape, hybrid_keyswitch};
    hybrid_keyswitch(KsShape { n: N, limbs: 60, dnum: 1, special: 60, seeded: true })
}

#[test]
fn unbalanced_regions_are_errors() {
    let t = Trace { events: vec![Event::Exit] };
    assert!(matches!(simulate(&toy(Overlap::Serial), &t), Err(SimError::BadTrace(_))));
    let t = Trace { events: vec![Event::Enter { name: "a".into() }] };
    assert!(matches!(simulate(&toy(Overlap::Serial), &t), Err(SimError::BadTrace(_))));
}

#[test]
fn kshgen_ablation_doubles_key_traffic() {
    use crate::synth::ckks::{KsShape, hybrid_keyswitch};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/craterlake.toml");
    let mut m = Machine::load(path).unwrap();
    let t = hybrid_keyswitch(KsShape { n: N, limbs: 60, dnum: 1, special: 60, seeded: true });
    let on = simulate(&m, &t).unwrap();
    m.switches.kshgen = Some(false);
    let off = simulate(&m, &t).unwrap();
    assert_eq!(off.traffic.keys, 2.0 * on.traffic.keys);
    assert_eq!(off.skipped_keygen, 1);
    assert!(off.cycles > on.cycles);
    // CraterLake §3 (a 1 TB/s HBM streaming KSHs; 3 × 60 × 32 cycles of compute): the streamed half-KSH at L = 60 is 26.25 MiB ≈ 27.5 µs at 1 TB/s, so the
    // key switch is memory-bound (compute is 5.76k cycles per CRB/NTT).
    assert!(on.stall_cycles > 0.0);
    assert_eq!(on.unit("crb").unwrap().busy_cycles, 3.0 * 60.0 * 32.0);
    assert_eq!(on.unit("ntt").unwrap().busy_cycles, 6.0 * 60.0 * 32.0 / 2.0);
    // Without CRB/chaining the 3L² conversion MACs run on the 5 multiply and 5 add FUs, and
    // every operand crosses the 12 RF ports: 5 accesses per MAC bound the window.
    m.switches.crb_chaining = Some(false);
    let off = simulate(&m, &t).unwrap();
    assert_eq!(off.unit("crb").unwrap().busy_cycles, 0.0);
    let macs = 3.0 * 60.0 * 60.0;
    assert!(off.unit("mul").unwrap().busy_cycles >= macs * 32.0 / 5.0);
    assert!(off.compute_cycles >= 5.0 * macs * 32.0 / 12.0);
    assert!(off.compute_cycles > 10.0 * on.compute_cycles);
    // Without the port figures the ablation falls back to one kernel at a time.
    m.schedule.rf_ports = None;
    assert_eq!(m.overlap(), Overlap::Serial);
}

#[test]
fn without_a_bconv_unit_conversions_use_the_multipliers_and_adders() {
    let mut m = toy(Overlap::Chained);
    m.units[1].serves = vec!["Elem.Mul".into()];
    let mut add = unit(UnitClass::Elem, 1, 2048);
    add.name = "add".into();
    add.serves = vec!["Elem.Add".into()];
    m.units.push(add);
    m.validate().unwrap();
    let mut b = Builder::new();
    b.k(Kernel::BConv { n: N, from: 3, to: 4 });
    let t = b.build();
    let r = simulate(&m, &t).unwrap();
    // 12 products and 12 sums of 32 cycles each, on their own units, side by side.
    assert_eq!(r.unit("Elem").unwrap().busy_cycles, 12.0 * 32.0);
    assert_eq!(r.unit("add").unwrap().busy_cycles, 12.0 * 32.0);
    assert_eq!(r.cycles, 12.0 * 32.0);
    // No port model unless chaining is switched off.
    m.schedule.rf_ports = Some(1);
    m.schedule.rf_port_lanes = Some(2048);
    assert_eq!(simulate(&m, &t).unwrap().cycles, 12.0 * 32.0);
}

#[test]
fn energy_uses_unit_power_and_serializes() {
    use crate::synth::tfhe::{STRIX_SETS, pbs_epoch};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/machines/strix.toml");
    let m = Machine::load(path).unwrap();
    let r = simulate(&m, &pbs_epoch(STRIX_SETS[0].1, 24, 2)).unwrap();
    let e = r.energy_j.unwrap();
    // Bounded by peak power × time.
    assert!(e > 0.0 && e <= 77.3 * r.seconds, "{e} J in {} s", r.seconds);
    // FFT units are the bottleneck: ~100 % busy in blind rotation, the rotator 50 % (Fig. 8).
    // (A single-epoch trace does not overlap KS with the next epoch, so compare against
    // the blind-rotation region rather than the whole run.)
    let br = r.regions["PBS;BlindRotate"].cycles;
    assert!(r.unit("fft").unwrap().busy_cycles / br > 0.99);
    assert!((r.unit("rotator").unwrap().busy_cycles / br - 0.5).abs() < 0.01);
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"utilisation\""));
    let summary = r.summary_toml();
    assert!(summary.contains("machine = \"strix\""), "{summary}");
    let csv = r.breakdown_csv();
    assert_eq!(csv.lines().count(), 1 + r.units.len() + r.regions.len());
    assert!(csv.contains("region,PBS;BlindRotate,"));
}

#[test]
fn residue_tiling_moves_2_4x_the_words_of_polynomial_tiling_per_rotation() {
    // CraterLake §4.3: with G = 8, residue tiling moves 3·G·N·L words per key switch (every
    // input residue of the three L → L conversions to every group), "over 2.4x" the fixed
    // network's traffic for a rotation: one transpose (N words) per NTT residue, two per
    // automorphism residue (§4.2), 6L NTTs and 2L automorphism residues.
    use crate::machine::Crossbar;
    use crate::synth::ckks::{KsShape, hybrid_keyswitch};
    let l = 60;
    let t = hybrid_keyswitch(KsShape { n: N, limbs: l, dnum: 1, special: l, seeded: true });
    let x = Crossbar { clusters: 8, words_per_cycle: 8192, cluster_rf_bytes: None };
    let mut crossbar = 0.0;
    let mut fixed = 2.0 * 2.0 * (l * N) as f64; // the rotation's automorphism of 2 polynomials
    for ev in &t.events {
        if let Event::Kernel(k) = ev {
            let (i, o) = units::crossbar_words(k, &x, 3.5);
            assert_eq!(o, 0.0, "a one-level store writes nothing back over the crossbar");
            crossbar += i;
            if let Kernel::Ntt { n, limbs } | Kernel::Intt { n, limbs } = *k {
                fixed += (n * limbs) as f64;
            }
        }
    }
    assert_eq!(crossbar, 3.0 * 8.0 * (N * l) as f64);
    assert!((crossbar / fixed - 2.4).abs() < 1e-12, "{}", crossbar / fixed);
}

#[test]
fn a_crossbar_bounds_conversions_and_a_small_cluster_rf_streams_operands() {
    let mut m = toy(Overlap::Chained);
    m.units[1].serves = vec!["Elem.Mul".into(), "Elem.Add".into()];
    m.switches.network = Some(crate::machine::Network::Crossbar);
    assert!(m.validate().is_err(), "a crossbar needs its clusters and bandwidth");
    m.schedule.clusters = Some(8);
    m.schedule.network_words_per_cycle = Some(8192);
    m.validate().unwrap();
    let mut b = Builder::new();
    b.k(Kernel::BConv { n: N, from: 4, to: 16 });
    let t = b.build();
    // 4 input residues to each of 8 clusters: 8 · 4 · 2^16 words at 8192 per cycle = 256
    // cycles, hidden under the 64 products and 64 sums of 32 cycles on the one unit; at 64
    // words per cycle the crossbar binds.
    let r = simulate(&m, &t).unwrap();
    assert_eq!(r.cycles, 2.0 * 64.0 * 32.0);
    m.schedule.network_words_per_cycle = Some(64);
    assert_eq!(simulate(&m, &t).unwrap().cycles, 8.0 * 4.0 * N as f64 / 64.0);
    // A two-level store: a 1 MiB cluster RF holds four 2^16 x 4-byte residues, fewer than a
    // key switch's five, so an add reads 2 residues over the crossbar (2 · 2^16 words at 2048
    // per cycle = 64 cycles) and the adder's 32 cycles hide under it.
    m.schedule.network_words_per_cycle = Some(2048);
    m.schedule.cluster_rf_kib = Some(1024.0);
    let mut b = Builder::new();
    b.k(Kernel::Elem { n: N, limbs: 1, op: ElemOp::Add });
    let t = b.build();
    assert_eq!(simulate(&m, &t).unwrap().cycles, 2.0 * N as f64 / 2048.0);
    // At N = 2^14 the residues fit (16 per RF): only the adder's 8 cycles remain.
    let mut b = Builder::new();
    b.k(Kernel::Elem { n: 1 << 14, limbs: 1, op: ElemOp::Add });
    assert_eq!(simulate(&m, &b.build()).unwrap().cycles, 8.0);
}

#[test]
fn generated_plaintexts_load_one_residue_and_run_the_ntts() {
    let mut b = Builder::new();
    b.k(Kernel::PlainLoad { n: N, limbs: 4 });
    b.k(Kernel::Elem { n: N, limbs: 4, op: ElemOp::Mul });
    let t = b.build();
    let mut m = toy(Overlap::Chained);
    let stored = simulate(&m, &t).unwrap();
    assert_eq!(stored.traffic.plaintexts, 4.0 * 262_144.0);
    assert_eq!(stored.unit("ntt").unwrap().busy_cycles, 0.0);
    m.switches.plaintext_generation = Some(true);
    let generated = simulate(&m, &t).unwrap();
    assert_eq!(generated.traffic.plaintexts, 262_144.0);
    // Four residues through the NTT unit at 32 cycles each (as `three`'s 2 residues take 64).
    assert_eq!(generated.unit("ntt").unwrap().busy_cycles, 4.0 * 32.0);
    assert!(generated.cycles < stored.cycles);
}

#[test]
fn a_warm_start_finds_the_inputs_on_chip_and_still_streams_keys() {
    // An input ciphertext (512 KiB), a result stored and reloaded, one named key.
    let k = |k: Kernel| Event::Kernel(k);
    let events = vec![
        k(Kernel::CtLoad { n: N, limbs: 1, polys: 2, id: 1 }),
        Event::Key { key: basalt_trace::KeyId::Relin },
        k(Kernel::KeyLoad { n: N, limbs: 1, digits: 1, seeded: false }),
        k(Kernel::CtStore { n: N, limbs: 1, polys: 2, id: 2 }),
        k(Kernel::CtLoad { n: N, limbs: 1, polys: 2, id: 2 }),
        k(Kernel::CtLoad { n: N, limbs: 1, polys: 2, id: 1 }),
    ];
    let t = Trace { events };
    let mut m = toy(Overlap::Chained);
    m.memory.onchip_mib = 64.0;
    let cold = simulate(&m, &t).unwrap();
    assert_eq!(cold.traffic.ciphertexts, 512.0 * 1024.0);
    m.memory.warm = true;
    let warm = simulate(&m, &t).unwrap();
    assert_eq!(warm.traffic.ciphertexts, 0.0);
    assert_eq!(warm.traffic.keys, cold.traffic.keys);
    assert_eq!(warm.onchip_hits, cold.onchip_hits + 1);
    assert!(warm.cycles < cold.cycles);
}

/// HBM latency delays a window's data, not the channel: without prefetch a loading window ends
/// a latency later; with the load issued a window ahead, the latency hides under compute.
#[test]
fn hbm_latency_delays_data_unless_prefetch_hides_it() {
    let m0 = toy(Overlap::Chained);
    let mut m = m0.clone();
    m.memory.hbm_latency_ns = Some(500.0); // 500 cycles at 1 GHz
    let t = three(true); // window 1: NTT (64 cycles); window 2: Add (96) + 262.144 load cycles
    let (r0, r) = (simulate(&m0, &t).unwrap(), simulate(&m, &t).unwrap());
    assert!((r.cycles - r0.cycles - 500.0).abs() < 1e-9, "{} vs {}", r.cycles, r0.cycles);
    // Prefetch one window ahead: the load starts at 0, under the NTT's 64 cycles.
    m.schedule.prefetch_windows = 1;
    let mut mp = m0.clone();
    mp.schedule.prefetch_windows = 1;
    let (rp0, rp) = (simulate(&mp, &t).unwrap(), simulate(&m, &t).unwrap());
    assert!((rp0.cycles - 262.144).abs() < 1e-9, "{}", rp0.cycles);
    assert!((rp.cycles - (262.144 + 500.0)).abs() < 1e-9, "{}", rp.cycles);
    assert!(rp.cycles < r.cycles, "prefetch hides part of the latency");
}

/// The bank model: one large load reaches the peak; the same bytes as many one-limb loads of
/// a small ring open a row each and are activation-bound.
#[test]
fn hbm_banks_slow_small_scattered_loads() {
    let mut m = toy(Overlap::Chained);
    m.memory.hbm_banks = Some(16);
    m.memory.hbm_row_bytes = Some(2048);
    m.memory.hbm_row_cycle_ns = Some(64.0);
    let load = |n: u32, count: usize| {
        let mut b = Builder::new();
        for _ in 0..count {
            b.k(Kernel::PlainLoad { n, limbs: 1 });
        }
        b.build()
    };
    // 2^16 words x 4 B = 256 KiB: 128 rows x 64 / 16 = 512 activation cycles > 262 transfer.
    let big = simulate(&m, &load(N, 1)).unwrap();
    assert!((big.cycles - 512.0).abs() < 1e-9, "{}", big.cycles);
    // 512 loads of 512 B (N = 128): 512 rows, 4x the activations of the same bytes in one.
    let small = simulate(&m, &load(128, 512)).unwrap();
    assert!((small.cycles - 2048.0).abs() < 1e-9, "{}", small.cycles);
    assert_eq!(small.traffic.plaintexts, big.traffic.plaintexts);
    // Without the model both take the bytes' transfer time.
    let plain = toy(Overlap::Chained);
    let (a, b) =
        (simulate(&plain, &load(N, 1)).unwrap(), simulate(&plain, &load(128, 512)).unwrap());
    assert!((a.cycles - 262.144).abs() < 1e-9 && (b.cycles - 262.144).abs() < 1e-9);
}

/// The on-chip store's banks bound a window's compute by the bytes its loads move.
#[test]
fn sram_banks_bound_the_window() {
    let mut m = toy(Overlap::Chained);
    m.memory.hbm_gbps = 1e9; // memory time negligible
    m.memory.sram_banks = Some(4);
    m.memory.sram_bank_bytes_per_cycle = Some(64.0);
    let mut b = Builder::new();
    b.k(Kernel::PlainLoad { n: N, limbs: 1 }); // 262,144 B through the banks, twice
    b.k(Kernel::Elem { n: N, limbs: 3, op: ElemOp::Add }); // 96 cycles
    let r = simulate(&m, &b.build()).unwrap();
    // (262,144 read + 262,144 filled) / 256 B per cycle = 2048 cycles.
    assert!((r.compute_cycles - 2048.0).abs() < 1e-6, "{}", r.compute_cycles);
}

/// Prefetch is bounded by the buffer: a load larger than `prefetch_mib` starts at most the
/// buffer's transfer time before its window.
#[test]
fn prefetch_is_bounded_by_the_buffer() {
    let mut m = toy(Overlap::Chained);
    m.schedule.prefetch_windows = 1;
    let mut b = Builder::new();
    b.region("compute", |b| {
        b.k(Kernel::Ntt { n: N, limbs: 64 }); // 2048 cycles
    });
    b.region("load", |b| {
        b.k(Kernel::PlainLoad { n: N, limbs: 8 }); // 2 MiB = 2097.152 cycles
    });
    let t = b.build();
    // Unbounded (256 MiB buffer): the load runs under the NTT, the window ends at 2097.152.
    let r = simulate(&m, &t).unwrap();
    assert!((r.cycles - 2097.152).abs() < 1e-6, "{}", r.cycles);
    // A 1 MiB buffer: the load may start 1048.576 cycles before its window (at 2048).
    m.memory.prefetch_mib = Some(1.0);
    let r = simulate(&m, &t).unwrap();
    assert!((r.cycles - (2048.0 - 1048.576 + 2097.152)).abs() < 1e-6, "{}", r.cycles);
}
