//! Every shipped machine file loads and simulates a small trace; loading errors are named.

use std::path::{Path, PathBuf};

use basalt_sim::synth::ckks::{KsShape, hybrid_keyswitch};
use basalt_sim::{Machine, SimError, simulate};

fn machines() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/machines")
}

#[test]
fn all_machine_files_load() {
    let mut names: Vec<String> = std::fs::read_dir(machines())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let m = Machine::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(m.units.iter().all(|u| !u.source.is_empty()));
            m.name
        })
        .collect();
    names.sort();
    // basalt_cpu.toml is written by `basalt sim calibrate` (this machine's measured kernels).
    assert_eq!(
        names,
        [
            "basalt_cpu",
            "cpu",
            "craterlake",
            "craterlake_128k",
            "f1plus",
            "fab",
            "mxv_u200",
            "osiris",
            "strix"
        ]
    );
}

#[test]
fn a_variant_extends_its_base() {
    // CraterLake §9.4: the 128K configuration is the chip with N up to 128K and 27.4 mm² more.
    let base = Machine::load(machines().join("craterlake.toml")).unwrap();
    let v = Machine::load(machines().join("craterlake_128k.toml")).unwrap();
    assert_eq!((base.max_ring_degree, v.max_ring_degree), (1 << 16, 1 << 17));
    assert_eq!((v.units.clone(), v.memory.clone()), (base.units.clone(), base.memory.clone()));
    assert_eq!(v.components.len(), base.components.len() + 1);
    let area = |m: &Machine| m.components.iter().filter_map(|c| c.area_mm2).sum::<f64>();
    assert!((area(&v) - area(&base) - 27.4).abs() < 1e-9);
    // An override lands on the merged file.
    let o = Machine::load_with(machines().join("craterlake_128k.toml"), &["units.crb.rows=30"]);
    assert_eq!(o.unwrap().units.iter().find(|u| u.name == "crb").unwrap().rows, Some(30));
    // N = 2^17 runs on the variant and is refused by the base.
    let t = hybrid_keyswitch(KsShape { n: 1 << 17, limbs: 8, dnum: 2, special: 4, seeded: true });
    assert!(matches!(simulate(&base, &t), Err(SimError::TraceMismatch { .. })));
    assert!(simulate(&v, &t).unwrap().cycles > 0.0);
}

#[test]
fn ckks_machines_run_a_keyswitch() {
    let t = hybrid_keyswitch(KsShape { n: 1 << 14, limbs: 8, dnum: 2, special: 4, seeded: true });
    for name in ["cpu", "craterlake", "f1plus", "fab", "mxv_u200", "osiris"] {
        let m = Machine::load(machines().join(format!("{name}.toml"))).unwrap();
        let r = simulate(&m, &t).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.cycles > 0.0 && r.traffic.keys > 0.0, "{name}");
        assert!(r.to_string().contains(name));
    }
}

#[test]
fn trace_from_other_parameters_is_a_clear_error() {
    let m = Machine::load(machines().join("fab.toml")).unwrap();
    // N = 2^17 on a 2^16 machine.
    let t = hybrid_keyswitch(KsShape { n: 1 << 17, limbs: 8, dnum: 1, special: 8, seeded: false });
    let e = simulate(&m, &t).unwrap_err();
    assert!(matches!(e, SimError::TraceMismatch { .. }), "{e}");
    assert!(e.to_string().contains("other parameters"), "{e}");
    // 40 + 40 moduli exceed FAB's 32 tables.
    let t =
        hybrid_keyswitch(KsShape { n: 1 << 16, limbs: 40, dnum: 1, special: 40, seeded: false });
    assert!(matches!(simulate(&m, &t), Err(SimError::TraceMismatch { .. })));
    // A TFHE trace on a CKKS machine: no unit.
    let strix = basalt_sim::synth::tfhe::pbs_epoch(basalt_sim::synth::tfhe::STRIX_SETS[0].1, 1, 2);
    assert!(matches!(simulate(&m, &strix), Err(SimError::NoUnitFor { .. })));
}

#[test]
fn a_program_that_fits_no_memory_is_a_clear_error() {
    // HE-MxV states 64 GB of DRAM (§V-A). One N = 2^14 key of 2 x 2 x 12 residues is 6 MiB:
    // it fits 21 MiB on chip, but not 1 MiB on chip + 1 MiB off chip.
    let t = hybrid_keyswitch(KsShape { n: 1 << 14, limbs: 8, dnum: 2, special: 4, seeded: false });
    let mut m = Machine::load(machines().join("mxv_u200.toml")).unwrap();
    assert_eq!(m.memory.hbm_gib, Some(64.0));
    simulate(&m, &t).unwrap();
    m.memory.onchip_mib = 1.0;
    m.memory.hbm_gib = Some(1.0 / 1024.0);
    let e = simulate(&m, &t).unwrap_err();
    assert!(matches!(e, SimError::DoesNotFit { .. }), "{e}");
    assert!(e.to_string().contains("does not fit"), "{e}");
    // Without a stated capacity nothing is checked.
    m.memory.hbm_gib = None;
    simulate(&m, &t).unwrap();
}

#[test]
fn missing_file_is_an_io_error() {
    assert!(matches!(Machine::load(machines().join("nope.toml")), Err(SimError::Io { .. })));
}

#[test]
fn a_million_kernels_simulate_quickly() {
    use basalt_trace::{ElemOp, Event, Kernel, Trace};
    let m = Machine::load(machines().join("craterlake.toml")).unwrap();
    let mut events = Vec::with_capacity(1_000_002);
    events.push(Event::Enter { name: "loop".into() });
    for i in 0..1_000_000u32 {
        events.push(Event::Kernel(match i % 4 {
            0 => Kernel::Ntt { n: 1 << 16, limbs: 1 },
            1 => Kernel::Elem { n: 1 << 16, limbs: 1, op: ElemOp::Mul },
            2 => Kernel::Elem { n: 1 << 16, limbs: 1, op: ElemOp::Add },
            _ => Kernel::BConv { n: 1 << 16, from: 2, to: 3 },
        }));
    }
    events.push(Event::Exit);
    let t0 = std::time::Instant::now();
    let r = simulate(&m, &Trace { events }).unwrap();
    // 250k NTT limbs on 2 FUs at 32 cycles = 4M cycles; CRB 250k × 32 × 3 = 24M cycles.
    assert_eq!(r.unit("crb").unwrap().busy_cycles, 24_000_000.0);
    assert_eq!(r.cycles, 24_000_000.0);
    assert!(t0.elapsed().as_secs_f64() < 2.0, "{:?}", t0.elapsed());
}
