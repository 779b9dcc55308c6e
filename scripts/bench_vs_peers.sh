#!/usr/bin/env bash
# Basalt and its peers (Lattigo v6.2.0, TFHE-rs 1.8.2) measured in ONE run on THIS machine.
#
#   scripts/bench_vs_peers.sh [ckks|tfhe|btp|all]  (default: all; btp is run on its own:
#                                                   ~8 min and ~17 GB of RAM per library)
#
# The peer programs come from ../shared/peers (our own small bench programs that call the
# libraries from their registries); they are built outside the repository in $PEER_BUILD.
# Results: bench-out/<UTC date>/*.jsonl and summary.md (scripts/compare_peers.py).
# Run nothing else meanwhile: these are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
PEERS=${PEERS:-../shared/peers}
PEER_BUILD=${PEER_BUILD:-$HOME/.cache/basalt-peers}
OUT=bench-out/$(date -u +%F)
mkdir -p "$OUT" "$PEER_BUILD"
{ date -u; nproc; lscpu | grep -E 'Model name|Flags' | cut -c1-200; free -g | head -2; } > "$OUT/machine.txt"

cargo build --release -q -p basalt-cli
B=target/release/basalt

if [[ $what == ckks || $what == all ]]; then
  (cd "$PEERS/lattigo" && go build -o "$PEER_BUILD/lattigo-bench" .)
  $B bench ntt --threads 1,2 > "$OUT/basalt-ntt.jsonl"
  $B bench ckks --preset LATTIGO_RESIDUAL,N16QP1546H192H32 --threads 1,2 --reps 5 > "$OUT/basalt-ckks.jsonl"
  for g in 1 2; do
    GOMAXPROCS=$g "$PEER_BUILD/lattigo-bench" -mode ops > "$OUT/lattigo-ops-gomaxprocs$g.jsonl" 2> "$OUT/lattigo-ops-gomaxprocs$g.stderr"
  done
fi
if [[ $what == tfhe || $what == all ]]; then
  (cd "$PEERS/tfhe-rs" && CARGO_TARGET_DIR="$PEER_BUILD/tfhe-rs-target" cargo build --release -q)
  $B bench pbs --threads 1,2 > "$OUT/basalt-pbs.jsonl"
  "$PEER_BUILD/tfhe-rs-target/release/tfhe-rs-peer-bench" --threads 1,2 --skip-integer \
    > "$OUT/tfhe-rs.jsonl" 2> "$OUT/tfhe-rs.stderr"
fi
if [[ $what == btp ]]; then
  # One library at a time: each needs ~15-17 GB for its N = 2^16 bootstrapping keys.
  (cd "$PEERS/lattigo" && go build -o "$PEER_BUILD/lattigo-bench" .)
  GOMAXPROCS=1 "$PEER_BUILD/lattigo-bench" -mode btp -btp-reps ${BTP_REPS:-3} \
    > "$OUT/lattigo-btp-gomaxprocs1.jsonl" 2> "$OUT/lattigo-btp-gomaxprocs1.stderr"
  $B bench bootstrap --preset N16QP1546H192H32 --threads 1 --reps ${BTP_REPS:-3} \
    > "$OUT/basalt-btp.jsonl" 2> "$OUT/basalt-btp.stderr"
fi
python3 scripts/compare_peers.py "$OUT" | tee "$OUT/summary.md"
