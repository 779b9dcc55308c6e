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
    std::fs::remove_file(&file).ok();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(report["seconds"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_input_is_an_error_message_not_a_panic() {
    for args in [
        vec!["trace", "--preset", "NO_SUCH_PRESET"],
        vec!["sim", "run", "--machine", "no_such_machine", "--trace", "/nonexistent"],
        vec!["bench", "ckks", "--preset", "NO_SUCH_PRESET", "--threads", "1"],
    ] {
        let out = basalt().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("basalt: ") || err.contains("\nbasalt: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
