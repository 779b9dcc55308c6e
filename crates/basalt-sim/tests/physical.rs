//! Area and energy per action (`basalt_sim::physical`): a sweep of the configuration moves area
//! and energy by the documented rule, every paper's machine reports power, and an energy table
//! that leaves a unit out is refused by name.

use std::path::{Path, PathBuf};

use basalt_sim::synth::ckks::{KsShape, hybrid_keyswitch};
use basalt_sim::{Machine, Report, simulate};

fn machine(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/machines/{name}.toml"))
}

fn keyswitch(m: &Machine) -> Report {
    let n = m.max_ring_degree.min(1 << 16);
    let t = hybrid_keyswitch(KsShape { n, limbs: 24, dnum: 3, special: 8, seeded: true });
    simulate(m, &t).unwrap()
}

#[test]
fn osiris_area_and_energy_follow_lanes_and_word_size() {
    let base = Machine::load(machine("osiris")).unwrap();
    let lanes: Vec<String> =
        base.units.iter().map(|u| format!("units.{}.lanes={}", u.name, 2 * u.lanes)).collect();
    let lanes: Vec<&str> = lanes.iter().map(String::as_str).collect();
    let wide = Machine::load_with(machine("osiris"), &lanes).unwrap();
    let (a, b) = (keyswitch(&base), keyswitch(&wide));

    // Doubling every unit's lanes doubles the datapath area; SRAM, HBM PHY and wiring stay.
    let (da, db) = (a.costs.datapath_area_mm2.unwrap(), b.costs.datapath_area_mm2.unwrap());
    assert!((db / da - 2.0).abs() < 1e-9, "datapath {da} -> {db} mm²");
    let blocks = a.costs.area_mm2.unwrap() - da;
    assert!((b.costs.area_mm2.unwrap() - db - blocks).abs() < 1e-9);
    // Table V's figures come back at the reference configuration (bookkeeping, not evidence).
    assert!((a.costs.area_mm2.unwrap() - 243.96).abs() < 0.05, "{:?}", a.costs.area_mm2);
    assert!((base.peak_power_w() - 116.04).abs() < 0.05, "{}", base.peak_power_w());

    // The same key switch does the same actions on wider units: dynamic energy stays (up to
    // pipeline fill), the static blocks burn for as long as it takes (no longer: a key switch
    // at 1 TB/s waits on its key), and the datapath's peak power doubles.
    assert!(b.seconds <= a.seconds);
    let (ua, ub) = (a.costs.units_j, b.costs.units_j);
    assert!(((ub / ua) - 1.0).abs() < 0.1, "unit energy {ua} -> {ub} J");
    assert!(b.costs.components_j <= a.costs.components_j);
    let units_peak =
        |m: &Machine| -> f64 { m.units.iter().filter_map(|u| m.unit_peak_power_w(u)).sum() };
    assert!((units_peak(&wide) / units_peak(&base) - 2.0).abs() < 1e-9);

    // Wider words cost (w / w_ref)² per action: 60-bit words take 2.25x the unit energy for
    // the same kernels (the trace is the same, the cycles the same).
    let w60 = Machine::load_with(machine("osiris"), &["word_bits=60"]).unwrap();
    let c = keyswitch(&w60);
    assert!((c.costs.units_j / ua - 2.25).abs() < 1e-6, "{} vs {ua}", c.costs.units_j);
    assert!((c.costs.datapath_area_mm2.unwrap() / da - 2.25).abs() < 1e-9);
    // A newer node shrinks area quadratically and energy linearly.
    let n5 = Machine::load_with(machine("osiris"), &["physical.node_nm=3.5"]).unwrap();
    let d = keyswitch(&n5);
    assert!((d.costs.datapath_area_mm2.unwrap() / da - 0.25).abs() < 1e-9);
    assert!((d.costs.units_j / ua - 0.5).abs() < 1e-9);
}

#[test]
fn every_paper_machine_reports_power_and_hbm_energy() {
    for name in ["osiris", "fab", "mxv_u200", "craterlake", "strix"] {
        let m = Machine::load(machine(name)).unwrap();
        let r = keyswitch_or_pbs(&m);
        let p = r.costs.power_w.unwrap_or_else(|| panic!("{name}: no power"));
        assert!(p > 0.0 && p.is_finite(), "{name}: {p} W");
        assert!(r.costs.peak_power_w.unwrap() >= p * 0.999, "{name}: average above peak");
        assert!(m.memory.hbm_pj_per_byte.is_some(), "{name}: no HBM energy per byte");
        let unpowered: Vec<_> =
            m.units.iter().filter(|u| r.costs.no_power.contains(&u.name)).collect();
        assert!(unpowered.is_empty(), "{name}: no power for {unpowered:?}");
    }
}

fn keyswitch_or_pbs(m: &Machine) -> Report {
    if m.name == "strix" {
        let t = basalt_sim::synth::tfhe::pbs_epoch(basalt_sim::synth::tfhe::STRIX_SETS[0].1, 24, 2);
        return simulate(m, &t).unwrap();
    }
    keyswitch(m)
}

#[test]
fn an_energy_table_that_leaves_a_unit_out_is_an_error() {
    let text = std::fs::read_to_string(machine("osiris")).unwrap();
    let cut = text.replacen("pj_per_action = 0.0 ", "# (removed) ", 1);
    assert_ne!(cut, text);
    let e = Machine::from_toml(&cut, Path::new("osiris.toml")).unwrap_err().to_string();
    assert!(e.contains("prng") && e.contains("pj_per_action"), "{e}");
    let both = text.replacen("pj_per_action = 1.5625", "power_w = 0.8\npj_per_action = 1.5625", 1);
    let e = Machine::from_toml(&both, Path::new("osiris.toml")).unwrap_err().to_string();
    assert!(e.contains("benes") && e.contains("instead of"), "{e}");
}
