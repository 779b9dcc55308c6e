//! docs/reproduction-status.md is generated: this test fails when the committed page differs
//! from what the models compute now, so a change that moves a paper row must update the page
//! (`basalt sim reproduce --markdown > docs/reproduction-status.md`) in the same commit.

use std::path::Path;
use std::process::Command;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "the whole report takes minutes unoptimised: CI runs it (`make test` builds with --release)"
)]
fn the_committed_status_page_is_what_the_models_compute() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .current_dir(&root)
        .args(["sim", "reproduce", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now = String::from_utf8(out.stdout).unwrap();
    let page = root.join("docs/reproduction-status.md");
    let committed = std::fs::read_to_string(&page).unwrap_or_default();
    if now != committed {
        let first = now
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| now.lines().count().min(committed.lines().count()));
        panic!(
            "docs/reproduction-status.md is stale (first difference at line {}): regenerate it \
             with `basalt sim reproduce --markdown > docs/reproduction-status.md`\n  now:       {}\n  committed: {}",
            first + 1,
            now.lines().nth(first).unwrap_or("<end>"),
            committed.lines().nth(first).unwrap_or("<end>"),
        );
    }
}
