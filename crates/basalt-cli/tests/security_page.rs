//! docs/security.md is generated: this test fails when the committed page differs from what the
//! estimator computes now (`basalt security --markdown > docs/security.md`), and checks that
//! the CLI refuses a preset estimated below 128 bits without `--allow-insecure`.

use std::path::Path;
use std::process::Command;

fn basalt(args: &[&str]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    Command::new(env!("CARGO_BIN_EXE_basalt")).current_dir(&root).args(args).output().unwrap()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "building every preset's ring takes minutes unoptimised: CI runs it (`make test` builds with --release)"
)]
fn the_committed_security_page_is_what_the_estimator_computes() {
    let out = basalt(&["security", "--markdown"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now = String::from_utf8(out.stdout).unwrap();
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/security.md");
    let committed = std::fs::read_to_string(&page).unwrap_or_default();
    if now != committed {
        let first = now
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| now.lines().count().min(committed.lines().count()));
        panic!(
            "docs/security.md is stale (first difference at line {}): regenerate it with \
             `basalt security --markdown > docs/security.md`\n  now:       {}\n  committed: {}",
            first + 1,
            now.lines().nth(first).unwrap_or("<end>"),
            committed.lines().nth(first).unwrap_or("<end>"),
        );
    }
}

#[test]
fn the_cli_refuses_an_insecure_preset_without_the_opt_in() {
    let args = ["trace", "--program", "hmult", "--preset", "CRATERLAKE_80_1DIGIT", "--level", "3"];
    let out = basalt(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("insecure") && err.contains("--allow-insecure"), "{err}");
    let mut with = args.to_vec();
    with.push("--allow-insecure");
    let out = basalt(&with);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // TFHE: Strix set II claims 128 bits, the estimate is below.
    let out = basalt(&["bench", "pbs", "--set", "STRIX_II", "--counts", "1", "--reps", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("insecure"));
}
