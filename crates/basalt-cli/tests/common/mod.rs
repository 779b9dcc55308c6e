//! What the tests of generated pages share: the CLI run from the repository root, and the
//! check that a committed page is what the CLI prints now.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root, where data/ and docs/ live.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `basalt ARGS` run from the repository root.
pub fn basalt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_basalt")).current_dir(root()).args(args).output().unwrap()
}

/// Fails when the committed `page` (a path from the repository root) differs from what
/// `basalt ARGS` prints now, naming the first line that differs and the command that
/// regenerates the page, so that a change that moves a figure updates its page in the same
/// commit.
pub fn assert_page_is_current(page: &str, args: &[&str]) {
    let out = basalt(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(root().join(page)).unwrap_or_default();
    if now != committed {
        let first = now
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| now.lines().count().min(committed.lines().count()));
        panic!(
            "{page} is stale (first difference at line {}): regenerate it with \
             `basalt {} > {page}`\n  now:       {}\n  committed: {}",
            first + 1,
            args.join(" "),
            now.lines().nth(first).unwrap_or("<end>"),
            committed.lines().nth(first).unwrap_or("<end>"),
        );
    }
}
