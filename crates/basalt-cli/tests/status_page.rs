//! docs/reproduction-status.md is generated: this test fails when the committed page differs
//! from what the models compute now, so a change that moves a paper row must update the page
//! (`basalt sim reproduce --markdown > docs/reproduction-status.md`) in the same commit.

mod common;

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "the whole report takes minutes unoptimised: CI runs it (`make test` builds with --release)"
)]
fn the_committed_status_page_is_what_the_models_compute() {
    common::assert_page_is_current(
        "docs/reproduction-status.md",
        &["sim", "reproduce", "--markdown"],
    );
}
