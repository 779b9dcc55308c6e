#!/usr/bin/env bash
# Every Basalt benchmark of BENCHMARKS.md in one run, then the page rewritten from its records.
#
#   scripts/bench_all.sh [--quick] [--no-btp]
#
# Full run (a quiet machine, nothing else running): NTT; CKKS ops on the residual set and on
# the 1546-bit chain at 1 and 2 threads with the throughput mode; TFHE PBS; bootstrapping at
# N = 2^16 with full and seeded keys (about 16 GB peak; --no-btp skips it). THREADS overrides
# the thread counts (e.g. THREADS=1,2,4,8,16 on a larger machine).
# --quick: small rings, a few repetitions: checks the machinery in about a minute; the page
# goes to bench-out/<date>-quick/BENCHMARKS.md, not over BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 btp=1
for a in "$@"; do
  case $a in --quick) quick=1 ;; --no-btp) btp=0 ;; *) echo "usage: $0 [--quick] [--no-btp]" >&2; exit 2 ;; esac
done
T=${THREADS:-1,2}
OUT=${OUT:-bench-out/$(date -u +%F)$(if [[ $quick == 1 ]]; then echo -quick; fi)}
mkdir -p "$OUT"
rm -f "$OUT/basalt-btp.jsonl"
{ date -u; nproc; lscpu | grep -E 'Model name|Flags' | cut -c1-200; free -g | head -2; uptime; } > "$OUT/machine.txt"
cargo build --release -q -p basalt-cli
B=target/release/basalt
Q=(); [[ $quick == 1 ]] && Q=(--quick)
$B bench ntt --threads "$T" "${Q[@]}" > "$OUT/basalt-ntt.jsonl"
$B bench ckks --preset LATTIGO_RESIDUAL,N16QP1546H192H32 --threads "$T" --reps 5 --batch 8 "${Q[@]}" \
  > "$OUT/basalt-ckks.jsonl"
$B bench pbs --threads "$T" "${Q[@]}" > "$OUT/basalt-pbs.jsonl"
if [[ $btp == 1 ]]; then
  # One process per key form: each peak-memory figure starts from a fresh process.
  for k in full seeded; do
    $B bench bootstrap --preset N16QP1546H192H32 --threads "$T" --reps "${BTP_REPS:-3}" --keys $k "${Q[@]}" \
      >> "$OUT/basalt-btp.jsonl"
  done
fi
if [[ $quick == 1 ]]; then
  python3 scripts/benchmarks_md.py "$OUT" > "$OUT/BENCHMARKS.md"
  echo "quick run: $OUT/BENCHMARKS.md" >&2
else
  python3 scripts/benchmarks_md.py "$OUT" > BENCHMARKS.md
  echo "BENCHMARKS.md rewritten from $OUT" >&2
fi
