#!/usr/bin/env bash
# Soak tests, outside CI (minutes): 1,000 chained bootstraps on a toy ring with operations in
# between (precision must stay stable), then 8 Python threads sharing one CKKS context, checked
# against numpy. BASALT_SOAK_ROUNDS=N shortens the first; run from the repository root after
# `make setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release -p basalt-circuits --test soak -- --ignored --nocapture
.venv/bin/python scripts/soak_threads.py
