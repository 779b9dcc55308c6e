//! `basalt workload run` without `--json` prints a readable summary of the record it ran; for
//! the TFHE networks that record holds one entry per parameter set (`sizes`), and the summary
//! must report each set's name and estimated security, not placeholders.

use std::path::Path;
use std::process::Command;

#[test]
fn nn_summary_names_each_set_and_its_security() {
    let out = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(["workload", "run", "nn-20", "--quick", "--images", "1", "--threads", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("set NN_N1024"), "the summary should name the set:\n{text}");
    assert!(!text.contains("preset ?"), "{text}");
    let bits: f64 = text
        .split_once("~")
        .and_then(|(_, rest)| rest.split_once("-bit security"))
        .and_then(|(b, _)| b.parse().ok())
        .unwrap_or_else(|| panic!("no security figure in the summary:\n{text}"));
    assert!(bits >= 100.0, "estimated security {bits} bits:\n{text}");
    assert!(text.contains("agreement with the plaintext twin 100.00 %"), "{text}");
    assert!(text.contains("s per image"), "{text}");
}
