//! Paper reproductions: assert only the rows the simulator genuinely models, within the
//! tolerance the CSV states; check that known misses stay visible instead of being hidden.

use std::path::{Path, PathBuf};

use basalt_repro::papers::Role;
use basalt_repro::reproduce::ReproReport;
use basalt_repro::{ReproError, reproduce};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn assert_within(r: &ReproReport, paper: &str, table: &str, row: &str, metric: &str) {
    let x = r
        .get(paper, table, row, metric)
        .unwrap_or_else(|| panic!("no row {paper}/{table}/{row}/{metric}"));
    assert!(x.ours.is_some(), "{paper}/{table}/{row}/{metric} is not modelled");
    assert_eq!(
        x.within,
        Some(true),
        "{paper}/{table}/{row}/{metric}: ours {:?} vs theirs {} (tolerance {})",
        x.ours,
        x.theirs,
        x.tolerance
    );
}

#[test]
fn strix_throughput_sets_i_to_iv_and_no_folding() {
    let r = reproduce(Some("strix"), &data()).unwrap();
    for set in ["I", "II", "III", "IV"] {
        assert_within(&r, "strix", "V", &format!("Strix {set}"), "throughput");
    }
    assert_within(&r, "strix", "VI", "no folding", "throughput");
    assert_within(&r, "strix", "VI", "improvement", "throughput");
    assert_within(&r, "strix", "III", "total", "energy per PBS (set I)");
}

#[test]
fn strix_table7_is_validation_and_its_memory_bound_rows_are_reported() {
    let r = reproduce(Some("strix"), &data()).unwrap();
    let t7: Vec<_> = r.rows.iter().filter(|x| x.table == "VII").collect();
    assert!(t7.iter().all(|x| x.role == Role::Validation));
    // The compute-bound design points agree; the memory-bound ones are 12 % fast, inside
    // the ±20 % tolerance of this validation table but reported as they are (ratio 1.12).
    assert_within(&r, "strix", "VII", "TvLP8 CLP4", "throughput");
    let mb = r.get("strix", "VII", "TvLP1 CLP32", "throughput").unwrap();
    assert!((mb.tolerance - 0.20).abs() < 1e-12 && mb.within == Some(true));
    assert!(mb.ratio.unwrap() > 1.1, "{:?}", mb.ratio);
    // The ksk (its own 4 of 16 channels, §IV-A) now bounds the memory-bound epochs: 325 MB at
    // 75 GB/s per 3 LWEs = 692 PBS/s (the bsk alone gave 866).
    assert!((mb.ours.unwrap() - 692.2).abs() < 1.0, "{:?}", mb.ours);
    // Required bandwidth counts bsk and ksk: more than the bsk alone (51 GB/s at TvLP 8).
    let bw = r.get("strix", "VII", "TvLP8 CLP4", "required bandwidth").unwrap();
    assert!(bw.ours.unwrap() > 80.0, "{:?}", bw.ours);
}

#[test]
fn strix_latency_is_one_lwe_through_n_iterations_and_its_key_switch() {
    let r = reproduce(Some("strix"), &data()).unwrap();
    let ms = |table: &str, row: &str| r.get("strix", table, row, "latency").unwrap().ours.unwrap();
    // Key switch of one LWE on its core's 64-MAC cluster: k·N·l_k·(n+1) / 64 cycles.
    let ks = |n: f64, big_n: f64, l_k: f64, lanes: f64| big_n * l_k * (n + 1.0) / lanes / 1.2e6;
    // Set I: 500 iterations, each bsk-bound (32 KiB at 150 GB/s = 262 cycles > 256 busy), plus
    // 1024 · 8 · 501 / 64 = 64,128 cycles of key switching.
    let set_i = 500.0 * 32_768.0 / 150e9 * 1e3 + ks(500.0, 1024.0, 8.0, 64.0);
    assert!((ms("V", "Strix I") - set_i).abs() < 0.001, "{}", ms("V", "Strix I"));
    assert_within(&r, "strix", "V", "Strix I", "latency");
    // Without folding only the FFT-bound blind rotation changes (500 × 512 cycles): no fill
    // term that grows with the FFT length (the reading Table VI's pair supports).
    assert!(
        (ms("VI", "no folding") - (500.0 * 512.0 / 1.2e6 + ks(500.0, 1024.0, 8.0, 64.0))).abs()
            < 1e-3
    );
    assert_within(&r, "strix", "VI", "no folding", "latency");
    // Memory-bound design point: the bsk stream (512 KiB per iteration at 150 GB/s) sets the
    // blind rotation; the KS cluster has 16 · CLP = 512 lanes.
    let mb = 991.0 * 524_288.0 / 150e9 * 1e3 + ks(991.0, 16384.0, 5.0, 512.0);
    assert!((ms("VII", "TvLP1 CLP32") - mb).abs() < 0.01, "{}", ms("VII", "TvLP1 CLP32"));
}

#[test]
fn mxv_key_switch_stream_is_bound_by_the_ntt_cores() {
    // The library's key switch on MXV_SET_B (recorded shape-only: milliseconds).
    let r = basalt_repro::library::reproduce(Some("mxv"), &data()).unwrap();
    // (l+1)(l+2) = 72 transforms of 14,658 cycles over 14 PEs per key switch at 180 MHz.
    let ks = r.get("mxv", "V", "Our Design", "key switch throughput").unwrap();
    assert!((ks.ours.unwrap() - 180e6 / (72.0 * 14_658.0 / 14.0)).abs() < 1.0, "{:?}", ks.ours);
    assert!(ks.how.contains("library trace"), "{}", ks.how);
    assert_within(&r, "mxv", "VII", "Set-B/C", "BRAM");
    // Without a library there is no key switch to time: the row says so.
    let closed = reproduce(Some("mxv"), &data()).unwrap();
    assert_eq!(closed.get("mxv", "V", "Our Design", "key switch throughput").unwrap().ours, None);
}

#[test]
fn craterlake_table1_counts_are_exact() {
    let r = reproduce(Some("craterlake"), &data()).unwrap();
    for (row, metric) in [
        ("boosted CRB L=60", "mult"),
        ("boosted CRB L=60", "add"),
        ("boosted other L=60", "mult"),
        ("boosted other L=60", "add"),
        ("boosted L=60", "ntt"),
        ("standard L=60", "mult"),
        ("standard L=60", "add"),
        ("standard L=60", "ntt"),
        ("boosted vs standard L=60", "ntt reduction"),
    ] {
        let x = r.get("craterlake", "1", row, metric).unwrap();
        assert_eq!(x.ours, Some(x.theirs), "{row}/{metric}");
    }
}

#[test]
fn mxv_primitives_and_traffic_model() {
    let r = basalt_repro::library::reproduce(Some("mxv"), &data()).unwrap();
    for (t, row, metric) in [
        ("VI", "NTT/INTT", "cycles"),
        ("VI", "Automorphism", "cycles"),
        ("VI", "Element-wise", "cycles"),
        ("VII", "Set-A", "DSP"),
        ("VII", "Set-B/C", "DSP"),
        ("fig1", "input vector", "share of DRAM read traffic"),
        ("fig3", "baseline", "DRAM read traffic"),
        ("fig3", "+ input ct", "DRAM read traffic"),
        ("fig3", "+ input ct", "minimal SRAM"),
    ] {
        assert_within(&r, "mxv", t, row, metric);
    }
    // Table V is modelled and misses by ~3x (a Table VI cycle-count model gives about half the
    // paper's figure too): keep it visible.
    assert_eq!(
        r.get("mxv", "V", "Our Design", "key switch throughput").unwrap().within,
        Some(false)
    );
}

/// Table 5 times the library's own operations (records the FAB bootstraps of Tables 7 and 8
/// too: a few seconds).
#[test]
fn fab_add_matches_and_keyswitch_ops_overshoot() {
    let r = basalt_repro::library::reproduce(Some("fab"), &data()).unwrap();
    assert_within(&r, "fab", "5", "Add", "FAB latency");
    for op in ["Add", "Mult", "Rescale", "Rotate"] {
        let x = r.get("fab", "5", op, "FAB latency").unwrap();
        assert!(x.how.contains("library trace") && x.how.contains("memory.warm"), "{}", x.how);
    }
    for op in ["Mult", "Rescale", "Rotate"] {
        let x = r.get("fab", "5", op, "FAB latency").unwrap();
        assert!(x.ratio.unwrap() > 1.0, "{op}: top-level model should overshoot");
    }
    // Without a library there is no trace of an operation to time: the rows say so.
    let closed = reproduce(Some("fab"), &data()).unwrap();
    assert_eq!(closed.get("fab", "5", "Rotate", "FAB latency").unwrap().ours, None);
}

#[test]
fn full_report_lists_every_row_and_serializes() {
    let r = reproduce(None, &data()).unwrap();
    let text = r.to_string();
    for p in ["== osiris", "== fab", "== mxv", "== craterlake", "== strix"] {
        assert!(text.contains(p), "missing {p}");
    }
    assert!(text.contains("not yet modelled"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"kind\":\"validation\""));
    assert!(json.contains("\"kind\":\"calibration\""));
    // Validation rows are present for every paper that has them.
    for p in ["osiris", "craterlake", "strix"] {
        assert!(r.rows.iter().any(|x| x.paper == p && x.role == Role::Validation), "{p}");
    }
    // Every paper says which reading the model follows where it contradicts itself.
    assert_eq!(text.matches("the model follows:").count(), 5);
    for p in ["osiris", "fab", "mxv", "craterlake", "strix"] {
        assert!(r.readings.iter().any(|x| x.paper == p), "{p}: no readings");
    }
    assert!(json.contains("\"follows\""));
}

#[test]
fn unknown_paper_is_an_error() {
    assert!(matches!(reproduce(Some("heax"), &data()), Err(ReproError::UnknownPaper(_))));
}

/// A trace source standing in for the libraries: it answers one workload with a trace that
/// doubles the closed-form stream, so the row must move and say where its trace came from.
struct Doubled;

impl basalt_repro::TraceSource for Doubled {
    fn trace(&self, w: &basalt_repro::Workload) -> Option<basalt_trace::Trace> {
        match w {
            basalt_repro::Workload::StandardKeySwitch { .. } => {
                let mut t = w.closed_form();
                t.events.extend(w.closed_form().events);
                Some(t)
            }
            _ => None,
        }
    }
}

#[test]
fn library_traces_replace_closed_forms_row_by_row() {
    let r = basalt_repro::reproduce_with(Some("craterlake"), &data(), &Doubled).unwrap();
    let std = r.get("craterlake", "1", "standard L=60", "ntt").unwrap();
    assert_eq!(std.ours, Some(7200.0));
    assert!(std.how.contains("library trace"), "{}", std.how);
    let boosted = r.get("craterlake", "1", "boosted L=60", "ntt").unwrap();
    assert_eq!(boosted.ours, Some(360.0));
    assert!(boosted.how.contains("closed form"), "{}", boosted.how);
}

/// Bootstrapping rows have no closed form: without a library trace source they are listed as
/// not yet modelled, never computed from a hand-written stream.
#[test]
fn bootstrap_rows_need_a_library_trace() {
    let r = reproduce(None, &data()).unwrap();
    for (paper, table, row, metric) in [
        ("osiris", "III(a)", "Bootstrap", "DH latency"),
        ("osiris", "III(b)", "Bootstrap", "NH latency"),
        ("craterlake", "3", "Packed Bootstrapping", "CraterLake time"),
        ("craterlake", "5", "Packed Bootstrapping", "128-bit time"),
        ("craterlake", "5", "Packed Bootstrapping", "200-bit time"),
        ("craterlake", "5", "gmean", "200-bit slowdown vs 80-bit"),
        ("fab", "7", "FAB", "T_mult a/slot"),
    ] {
        let x = r.get(paper, table, row, metric).unwrap();
        assert_eq!(x.ours, None, "{paper} {table} {row} {metric}");
        assert_eq!(x.how, "not yet modelled");
    }
}
