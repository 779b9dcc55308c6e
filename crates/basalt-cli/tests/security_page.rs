//! docs/security.md is generated: this test fails when the committed page differs from what the
//! estimator computes now (`basalt security --markdown > docs/security.md`), and checks that
//! the CLI refuses a preset estimated below 128 bits without `--allow-insecure`.

mod common;

use common::basalt;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "building every preset's ring takes minutes unoptimised: CI runs it (`make test` builds with --release)"
)]
fn the_committed_security_page_is_what_the_estimator_computes() {
    common::assert_page_is_current("docs/security.md", &["security", "--markdown"]);
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
