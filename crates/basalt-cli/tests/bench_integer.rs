//! `basalt bench integer --quick`: one JSON line per (operation, thread count), named as the
//! TFHE-rs peer benchmark names its integer lines, so `scripts/compare_peers.py` can pair them.

use std::path::Path;
use std::process::Command;

#[test]
fn quick_integer_suite_prints_peer_named_lines() {
    let out = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(["bench", "integer", "--quick", "--threads", "1,2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let recs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut seen: Vec<(String, u64)> = recs
        .iter()
        .map(|r| (r["bench"].as_str().unwrap().to_string(), r["threads"].as_u64().unwrap()))
        .collect();
    seen.sort();
    let want: Vec<(String, u64)> =
        [("uint8_add", 1), ("uint8_add", 2), ("uint8_mul", 1), ("uint8_mul", 2)]
            .iter()
            .map(|(b, t)| (b.to_string(), *t))
            .collect();
    assert_eq!(seen, want, "{recs:?}");
    for r in &recs {
        assert_eq!(r["set"], "TFHERS_2_2_KS_PBS", "{r}");
        assert!(r["median_ms"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["machine"].is_object() && r["command"].is_string(), "{r}");
    }
}
