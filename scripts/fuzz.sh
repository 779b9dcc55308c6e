#!/usr/bin/env bash
# Fuzz one deserializer for a given time: scripts/fuzz.sh TARGET SECONDS [extra libFuzzer args]
# Targets: ckks_ciphertext ckks_keys tfhe_ciphertext tfhe_keys trace machine (fuzz/fuzz_targets/).
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Runs at low priority,
# 2 GB memory cap and 10 s per input; new inputs are kept in fuzz/corpus/TARGET/ and crashes
# in fuzz/artifacts/TARGET/ (replay one with `cargo +nightly fuzz run TARGET FILE`).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer args]" >&2
    exit 2
fi
target=$1
seconds=$2
shift 2
cd "$(dirname "$0")/.."
if [ ! -d "fuzz/corpus/$target" ]; then
    cargo run --release --manifest-path fuzz/Cargo.toml --bin make_corpus
fi
exec nice -n 19 cargo +nightly fuzz run --release "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=262144 "$@"
