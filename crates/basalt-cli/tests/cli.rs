//! The CLI end to end: the quick tour passes its own checks, a recorded trace runs on a machine
//! model, and bad input is a clear error (exit code 1 and a message), not a panic.

use std::path::Path;
use std::process::Command;

fn basalt() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_basalt"));
    // The repository root, where data/ lives.
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

#[test]
fn quick_tour_checks_every_step() {
    let out = basalt().args(["tour", "--quick"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tour failed:\n{err}");
    assert!(err.contains("Tour complete."), "{err}");
    assert!(!err.contains("TOO LOW") && !err.contains("WRONG"), "{err}");
    assert!(err.contains("strix"), "the TFHE trace should reach the Strix model:\n{err}");
    assert!(err.contains("strix       target      12 rows,"), "the papers' step:\n{err}");
}

#[test]
fn a_recorded_trace_runs_on_a_machine_model() {
    let trace =
        basalt().args(["trace", "--program", "rotate", "--preset", "MXV_SET_A"]).output().unwrap();
    assert!(trace.status.success(), "{}", String::from_utf8_lossy(&trace.stderr));
    let file = std::env::temp_dir().join(format!("basalt-cli-test-{}.json", std::process::id()));
    std::fs::write(&file, &trace.stdout).unwrap();
    let run = basalt()
        .args(["sim", "run", "--machine", "craterlake", "--json", "--trace"])
        .arg(&file)
        .output()
        .unwrap();
    // Machine names also resolve from outside the repository (the data folder the binary was
    // built from), and a named machine is not mistaken for a directory of that name there.
    let elsewhere = std::env::temp_dir().join(format!("basalt-cli-cwd-{}", std::process::id()));
    std::fs::create_dir_all(elsewhere.join("craterlake")).unwrap();
    let outside = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .current_dir(&elsewhere)
        .env_remove("BASALT_DATA")
        .args(["sim", "run", "--machine", "craterlake", "--json", "--trace"])
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&elsewhere).ok();
    std::fs::remove_file(&file).ok();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(report["seconds"].as_f64().unwrap() > 0.0);
    assert!(outside.status.success(), "{}", String::from_utf8_lossy(&outside.stderr));
    assert_eq!(outside.stdout, run.stdout, "the same machine file from any directory");
}

#[test]
fn bad_input_is_an_error_message_not_a_panic() {
    for args in [
        vec!["trace", "--preset", "NO_SUCH_PRESET"],
        vec!["sim", "run", "--machine", "no_such_machine", "--trace", "/nonexistent"],
        vec!["bench", "ckks", "--preset", "NO_SUCH_PRESET", "--threads", "1"],
        vec!["sim", "validate-cpu", "--preset", "NO_SUCH_PRESET"],
        vec!["sim", "validate-cpu", "--machine", "no_such_machine"],
        vec!["trace", "--program", "bootstrap", "--preset", "MXV_SET_A"],
        vec!["trace", "--program", "bootstrap", "--preset", "FAB", "--dft-n1", "40000"],
        vec!["trace", "--program", "sort", "--preset", "OSIRIS_SET_IV", "--log-slots", "16"],
        vec![
            "sim",
            "validate-cpu",
            "--bootstrap-log-slots",
            "5",
            "--bootstrap-preset",
            "MXV_SET_A",
        ],
        vec!["sim", "reproduce", "heax"],
        vec!["sim", "calibrate", "--holdout", "NO_SUCH_PRESET", "--out", "/nonexistent/x.toml"],
        vec!["bench", "lintrans", "--case", "dense", "--lt-preset", "NO_SUCH_PRESET"],
        vec!["bench", "lintrans", "--case", "dense", "--lt-level", "99"],
        vec!["bench", "lintrans", "--quick", "--lt-level", "2"],
        vec!["bench", "bootstrap", "--preset", "MXV_SET_A", "--threads", "1"],
        vec!["trace", "--program", "bootstrap", "--preset", "MXV_SET_A"],
        vec!["trace", "--program", "bootstrap", "--preset", "FAB", "--log-slots", "16"],
        vec!["trace", "--program", "lstm", "--preset", "MXV_SET_A"],
        vec!["trace", "--program", "logreg", "--preset", "MXV_SET_A"],
        vec![
            "trace",
            "--program",
            "logreg",
            "--preset",
            "CRATERLAKE_80_BOOT",
            "--level",
            "5",
            "--allow-insecure",
        ],
    ] {
        let out = basalt().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("basalt: ") || err.contains("\nbasalt: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_bandwidth_sweep_never_slows_down_and_a_bad_field_is_an_error() {
    let trace = basalt()
        .args(["trace", "--program", "hoisted8", "--preset", "MXV_SET_A"])
        .output()
        .unwrap();
    assert!(trace.status.success());
    let file = std::env::temp_dir().join(format!("basalt-sweep-test-{}.json", std::process::id()));
    std::fs::write(&file, &trace.stdout).unwrap();
    let sweep = |field: &str, values: &str| {
        basalt()
            .args(["sim", "sweep", "--machine", "osiris", "--json", "--field", field])
            .arg(format!("--values={values}"))
            .arg("--trace")
            .arg(&file)
            .output()
            .unwrap()
    };
    let out = sweep("memory.hbm_gbps", "100,400,1600");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let secs: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["report"]["seconds"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(secs.len(), 3);
    assert!(secs.windows(2).all(|w| w[1] <= w[0]), "{secs:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("does not change"));
    // Both sizes hold everything this small trace stores: a flat sweep says so.
    let flat = sweep("memory.onchip_mib", "1000,2000");
    assert!(flat.status.success());
    assert!(
        String::from_utf8_lossy(&flat.stderr).contains("does not change with memory.onchip_mib")
    );
    let bad = sweep("memory.no_such_field", "1");
    assert_eq!(bad.status.code(), Some(1));
    let bad = sweep("memory.hbm_gbps", "-5");
    assert_eq!(bad.status.code(), Some(1), "a negative bandwidth must be refused");
    std::fs::remove_file(&file).ok();
}

/// Records `program` at MXV_SET_A and returns the trace file (removed by the caller).
fn recorded(program: &str, tag: &str) -> std::path::PathBuf {
    let trace =
        basalt().args(["trace", "--program", program, "--preset", "MXV_SET_A"]).output().unwrap();
    assert!(trace.status.success(), "{}", String::from_utf8_lossy(&trace.stderr));
    let file = std::env::temp_dir().join(format!("basalt-{tag}-{}.json", std::process::id()));
    std::fs::write(&file, &trace.stdout).unwrap();
    file
}

#[test]
fn two_rotations_by_one_key_hit_on_chip_only_when_the_key_fits() {
    let file = recorded("rotate-twice", "onchip");
    let run = |onchip_mib: &str| {
        let out = basalt()
            .args(["sim", "run", "--machine", "craterlake", "--json", "--set"])
            .arg(format!("memory.onchip_mib={onchip_mib}"))
            .arg("--trace")
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let big = run("256");
    let tiny = run("0.01");
    std::fs::remove_file(&file).ok();
    let keys = |r: &serde_json::Value| r["traffic"]["keys"].as_f64().unwrap();
    // Same Galois key twice: loaded once when it fits, twice when it does not. The first
    // rotation's result, read by the second, is the other hit.
    assert_eq!(big["onchip_hits"], 2);
    assert_eq!(big["traffic"]["intermediates"], 0.0);
    assert!(tiny["traffic"]["intermediates"].as_f64().unwrap() > 0.0);
    assert_eq!(tiny["onchip_hits"], 0);
    assert!(keys(&big) > 0.0);
    assert!((keys(&tiny) - 2.0 * keys(&big)).abs() < 1e-6 * keys(&tiny), "{big} {tiny}");
    assert!(big["seconds"].as_f64().unwrap() < tiny["seconds"].as_f64().unwrap());
}

#[test]
fn sim_run_refuses_bad_machines_and_traces_by_name() {
    let file = recorded("rotate", "badrun");
    let run = |sets: &[&str]| {
        let mut c = basalt();
        c.args(["sim", "run", "--machine", "mxv_u200", "--trace"]).arg(&file);
        for s in sets {
            c.args(["--set", s]);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{sets:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // Unknown config field, negative bandwidth, a trace recorded with other parameters (a
    // 2^13 ring on a machine that holds 2^12), a program larger than on-chip + off-chip memory
    // (a 1.5 MiB rotation key against 1 MiB + 10 KiB).
    let cases: [(&[&str], &str); 4] = [
        (&["memory.hbm_gbs=77"], "hbm_gbs"),
        (&["memory.hbm_gbps=-77"], "must be positive"),
        (&["max_ring_degree=4096"], "other parameters"),
        (&["memory.onchip_mib=1", "memory.hbm_gib=0.00001"], "does not fit"),
    ];
    let errs: Vec<String> = cases.iter().map(|(sets, _)| run(sets)).collect();
    std::fs::remove_file(&file).ok();
    for ((sets, want), err) in cases.iter().zip(&errs) {
        assert!(err.contains(want) && !err.contains("panicked"), "{sets:?}: {err}");
    }
}

#[test]
fn a_sort_trace_is_timed_with_its_bootstraps_or_refused() {
    let sort = basalt()
        .args(["trace", "--program", "sort", "--preset", "OSIRIS_SET_IV", "--log-slots", "3"])
        .output()
        .unwrap();
    assert!(sort.status.success(), "{}", String::from_utf8_lossy(&sort.stderr));
    let file = std::env::temp_dir().join(format!("basalt-sort-{}.json", std::process::id()));
    std::fs::write(&file, &sort.stdout).unwrap();
    // Any trace stands in for the bootstrap here; the point is that it is counted.
    let boot = recorded("rotate", "sortboot");
    let run = |extra: &[&std::path::Path]| {
        let mut c = basalt();
        c.args(["sim", "run", "--machine", "osiris", "--json", "--trace"]).arg(&file);
        for b in extra {
            c.arg("--bootstrap-trace").arg(b);
        }
        c.output().unwrap()
    };
    let refused = run(&[]);
    let with = run(&[&boot]);
    std::fs::remove_file(&file).ok();
    std::fs::remove_file(&boot).ok();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1));
    assert!(err.contains("bootstrap(s) it does not contain") && !err.contains("panicked"), "{err}");
    assert!(with.status.success(), "{}", String::from_utf8_lossy(&with.stderr));
    let r: serde_json::Value = serde_json::from_slice(&with.stdout).unwrap();
    assert!(r["seconds"].as_f64().unwrap() > 0.0);
}

/// A small, strict XML check: tags close in order, one root, no raw `<`/`&` in text.
fn well_formed(doc: &str) -> bool {
    let Some(body) = doc.strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#) else {
        return false;
    };
    let mut stack = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find('<') {
        if rest[..i].contains('&') && !rest[..i].contains("&amp;") && !rest[..i].contains("&lt;") {
            return false;
        }
        let Some(j) = rest[i..].find('>') else { return false };
        let tag = rest[i + 1..i + j].to_string();
        rest = &rest[i + j + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop().as_deref() != Some(name) {
                return false;
            }
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().unwrap_or("").to_string());
        }
    }
    stack.is_empty() && rest.trim().is_empty()
}

#[test]
fn run_sweep_and_reproduce_write_svg_figures() {
    let file = recorded("hmult", "plots");
    let dir = std::env::temp_dir().join(format!("basalt-plots-{}", std::process::id()));
    let run = basalt()
        .args(["sim", "run", "--machine", "osiris", "--trace"])
        .arg(&file)
        .arg("--plot-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for (name, label) in [
        ("utilisation.svg", "utilisation (%)"),
        ("traffic.svg", "traffic (MiB)"),
        ("roofline.svg", "arithmetic intensity"),
    ] {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(well_formed(&svg), "{name} is not well-formed");
        assert!(svg.contains(label), "{name} lacks its axis label");
    }
    let sweep_svg = dir.join("sweep.svg");
    let sweep = basalt()
        .args(["sim", "sweep", "--machine", "osiris", "--field", "memory.hbm_gbps"])
        .args(["--values", "250,500,1000,2000", "--trace"])
        .arg(&file)
        .arg("--plot")
        .arg(&sweep_svg)
        .output()
        .unwrap();
    assert!(sweep.status.success(), "{}", String::from_utf8_lossy(&sweep.stderr));
    let svg = std::fs::read_to_string(&sweep_svg).unwrap();
    assert!(well_formed(&svg));
    assert_eq!(svg.matches("<circle").count(), 4);
    let repro_svg = dir.join("repro.svg");
    let repro =
        basalt().args(["sim", "reproduce", "strix", "--plot"]).arg(&repro_svg).output().unwrap();
    assert!(repro.status.success(), "{}", String::from_utf8_lossy(&repro.stderr));
    assert!(well_formed(&std::fs::read_to_string(&repro_svg).unwrap()));
    // A plot path that cannot be written is an error message, not a panic.
    let bad = basalt()
        .args(["sim", "run", "--machine", "osiris", "--trace"])
        .arg(&file)
        .args(["--plot-dir", "/proc/no-such-dir/x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("basalt: "));
    std::fs::remove_file(&file).ok();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn quick_lintrans_bench_prints_parsable_records_that_favour_bsgs_and_hoisting() {
    let out = basalt()
        .args(["bench", "lintrans", "--quick", "--json", "--lt-reps", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Two cases × (2 diagonal + 6 BSGS + 2 auto) strategies.
    assert_eq!(recs.len(), 20);
    for case in ["dense", "c2s"] {
        let find = |strategy: &str, hoisting: &str, order: &str| {
            recs.iter()
                .find(|r| {
                    r["case"] == case
                        && r["strategy"] == strategy
                        && r["hoisting"] == hoisting
                        && r["order"] == order
                })
                .unwrap_or_else(|| panic!("{case} {strategy} {hoisting} {order}"))
        };
        let u = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
        let diag = find("diagonal", "none", "bsc");
        let diag_sh = find("diagonal", "single", "bsc");
        let bsgs = find("bsgs", "none", "bsc");
        let bsgs_dh = find("bsgs", "double", "bsc");
        // BSGS cuts rotations and key switches; hoisting cuts NTTs and modular multiplications.
        assert!(u(bsgs, "rotations") < u(diag, "rotations"), "{case}");
        assert!(u(bsgs, "key_switches") < u(diag, "key_switches"), "{case}");
        assert!(u(diag_sh, "ntts") < u(diag, "ntts"), "{case}");
        assert!(u(bsgs_dh, "modmults") < u(bsgs, "modmults"), "{case}");
        for r in recs.iter().filter(|r| r["case"] == case) {
            assert_eq!(r["matches_closed_form"], true, "{r}");
            assert!(r["precision_bits"].as_f64().unwrap() > 20.0, "{r}");
            assert!(r["thread_cpu_ms"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let bad = basalt().args(["bench", "lintrans", "--quick", "--case", "sparse"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown lintrans case \"sparse\""));
}

/// A reader that stops early (`basalt trace … | head -c 100`) ends `basalt` quietly: no panic
/// message from a failed write to the closed pipe.
#[test]
fn a_closed_pipe_ends_the_command_without_a_panic() {
    use std::io::Read;
    let mut child = basalt()
        // 160 KB of JSON: more than a pipe buffers, so the write meets the closed pipe.
        .args(["trace", "--program", "mnist-lola", "--preset", "OSIRIS_SET_I"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // Dropping the read end closes the pipe while the trace is still being written.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(head.starts_with(b"{"), "the trace is JSON");
}

#[test]
fn compare_times_one_trace_on_variants_and_reports_a_machine_that_cannot_run_it() {
    let file = recorded("hmult", "compare");
    let svg = std::env::temp_dir().join(format!("basalt-compare-{}.svg", std::process::id()));
    let out = basalt()
        .args(["sim", "compare", "--json", "--machines", "osiris,osiris@memory.hbm_gbps=100,strix"])
        .arg("--trace")
        .arg(&file)
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let figure = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_file(&svg).ok();
    assert!(well_formed(&figure));
    assert_eq!(figure.matches(r#"<rect class="bar""#).count(), 2, "strix could not run it");
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    let secs = |r: &serde_json::Value| r["report"]["seconds"].as_f64().unwrap();
    assert_eq!(rows[1]["machine"], "osiris@memory.hbm_gbps=100");
    assert!(secs(&rows[1]) > secs(&rows[0]), "a tenth of the bandwidth is slower");
    // Strix has no CKKS units: its row says so, the others still ran.
    assert!(rows[2]["error"].as_str().unwrap().contains("no unit"), "{}", rows[2]);
    // A bad override fails the whole command before any row is printed.
    let bad = basalt()
        .args(["sim", "compare", "--machines", "osiris,fab@memory.hbm_gbps=-1", "--trace"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(bad.stdout.is_empty());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("fab@memory.hbm_gbps=-1"));
    // A switch only a recording reads would change nothing here: refused, with where it acts.
    let moot = basalt()
        .args(["sim", "compare", "--machines", "fab@switches.fpgas=8", "--trace"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(moot.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&moot.stderr).contains("reproduce fab"));
    std::fs::remove_file(&file).ok();
}

/// The GSC schedule as a switch whose effect is measurable: the loop order alone
/// (`--stored-diagonals`) against Osiris' GSC with OF-Limb and against Lattigo's order.
#[test]
fn the_gsc_order_and_of_limb_are_separate_switches() {
    let plaintext_mib = |flags: &[&str]| -> f64 {
        let t = basalt()
            .args(["trace", "--program", "mnist-lola", "--preset", "OSIRIS_SET_I", "--seeded"])
            .args(flags)
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let file = std::env::temp_dir().join(format!(
            "basalt-oflimb-{}-{}.json",
            flags.join(""),
            std::process::id()
        ));
        std::fs::write(&file, &t.stdout).unwrap();
        let out = basalt()
            .args(["sim", "run", "--machine", "osiris", "--json", "--trace"])
            .arg(&file)
            .output()
            .unwrap();
        std::fs::remove_file(&file).ok();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["traffic"]["plaintexts"].as_f64().unwrap() / f64::from(1u32 << 20)
    };
    let (of_limb, stored, plain) = (
        plaintext_mib(&[]),
        plaintext_mib(&["--stored-diagonals"]),
        plaintext_mib(&["--plain-order"]),
    );
    // Stored diagonals stream every limb, as Lattigo's order does; OF-Limb streams one.
    assert_eq!(stored, plain);
    assert!(of_limb < stored / 2.0, "{of_limb} vs {stored}");
    let both = basalt()
        .args(["trace", "--program", "mnist-lola", "--plain-order", "--stored-diagonals"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "clap refuses the contradiction");
}

/// Zero, negative, huge and non-numeric values are refused by the argument parser, naming the
/// option and its range (they divided by zero, hung, or aborted on an allocation).
#[test]
fn bad_numbers_are_refused_naming_the_option() {
    for (args, option) in [
        (
            vec![
                "trace",
                "--program",
                "mnist-lola",
                "--preset",
                "OSIRIS_SET_I",
                "--max-partials",
                "0",
            ],
            "--max-partials",
        ),
        (vec!["trace", "--program", "bootstrap", "--preset", "FAB", "--dft-n1", "0"], "--dft-n1"),
        (
            vec!["trace", "--program", "sort", "--preset", "OSIRIS_SET_IV", "--log-slots", "40"],
            "--log-slots",
        ),
        (
            vec!["trace", "--program", "lstm", "--preset", "CRATERLAKE_80_BOOT", "--steps", "0"],
            "--steps",
        ),
        (
            vec![
                "trace",
                "--program",
                "lstm",
                "--preset",
                "CRATERLAKE_80_BOOT",
                "--steps",
                "1000000000",
            ],
            "--steps",
        ),
        (vec!["bench", "ntt", "--threads", "0"], "--threads"),
        (vec!["bench", "ntt", "--log-n", "0"], "--log-n"),
        (vec!["bench", "ntt", "--log-n", "40"], "--log-n"),
        (vec!["bench", "ntt", "--min-time", "nan"], "--min-time"),
        (vec!["bench", "pbs", "--counts", "8,0"], "--counts"),
        (vec!["bench", "integer", "--bits", "12"], "--bits"),
        (vec!["bench", "integer", "--int-ops", "add,div"], "--int-ops"),
        (vec!["bench", "bootstrap", "--reps", "0"], "--reps"),
        (vec!["bench", "lintrans", "--quick", "--lt-reps", "0"], "--lt-reps"),
        (vec!["bench", "lintrans", "--quick", "--n1", "0"], "--n1"),
        (vec!["sim", "validate-cpu", "--min-time=-1"], "--min-time"),
        (vec!["sim", "calibrate", "--min-time", "0"], "--min-time"),
    ] {
        let out = basalt().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(option) && !err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A trace whose size grows with `--steps` is measured before it is recorded, and refused
/// when it would not fit in memory (it aborted on a failed allocation).
#[test]
fn a_trace_beyond_memory_is_refused_before_it_is_recorded() {
    let out = basalt()
        .args([
            "trace",
            "--program",
            "logreg",
            "--preset",
            "CRATERLAKE_80_BOOT",
            "--allow-insecure",
        ])
        .args(["--steps", "1000000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs about") && err.contains("available"), "{err}");
}
