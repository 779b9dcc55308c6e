#!/usr/bin/env bash
# Basalt and its peers (Lattigo v6.2.0, TFHE-rs 1.8.2, Poulpy 0.10.0) measured in ONE run on
# THIS machine, then BENCHMARKS.md rewritten from the run's records.
#
#   scripts/bench_vs_peers.sh [--quick] [ckks|tfhe|poulpy|btp|all]   (default: all = ckks, tfhe, poulpy)
#
#   ckks    basalt bench ntt + ckks (1546-bit chain and its residual set; 1 and 2 threads;
#           throughput mode) beside Lattigo's ops (GOMAXPROCS 1 and 2, incl. its concurrent mode)
#   tfhe    basalt bench pbs (PBS, KS+PBS, 64 and 512 batched KS+PBS) and basalt bench integer
#           (uint8 and uint32 add and mul) beside TFHE-rs's shortint 2+2 set and its radix
#           integers on the same set (1 and 2 threads each)
#   poulpy  Poulpy's CKKS ops (NTT3x42Ifma, 1 and 2 threads) at the same ciphertext widths
#   btp     bootstrapping, one library at a time (each needs 15-22 GB at N = 2^16): Lattigo,
#           Basalt (full and seeded keys, 1 and 2 threads, peak memory), Poulpy's two presets
#
# --quick: small rings and few repetitions for Basalt, peers' quick modes; a peer whose binary
# is not built yet is skipped with a note (cold builds take 2-10 min each; a full run builds
# them). For checking the script, not for figures.
#
# The peer programs are our own small bench programs that call the libraries from their
# registries, in the folder PEERS names (it holds lattigo/, tfhe-rs/ and poulpy/; required);
# they are built outside the repository in
# $PEER_BUILD. Results: bench-out/<UTC date>/*.jsonl, summary.md, and BENCHMARKS.md.
# Run nothing else meanwhile: these are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [[ ${1:-} == --quick ]]; then quick=1; shift; fi
what=${1:-all}
case $what in ckks|tfhe|poulpy|btp|all) ;; *) echo "usage: $0 [--quick] [ckks|tfhe|poulpy|btp|all]" >&2; exit 2 ;; esac
if [[ -z ${PEERS:-} ]]; then
    echo "$0: set PEERS to the folder holding the peer harnesses (lattigo/, tfhe-rs/, poulpy/)" >&2
    exit 2
fi
PEER_BUILD=${PEER_BUILD:-$HOME/.cache/basalt-peers}
OUT=${OUT:-bench-out/$(date -u +%F)$(if [[ $quick == 1 ]]; then echo -quick; fi)}
mkdir -p "$OUT" "$PEER_BUILD"
{ date -u; nproc; lscpu | grep -E 'Model name|Flags' | cut -c1-200; free -g | head -2; uptime; } > "$OUT/machine.txt"

cargo build --release -q -p basalt-cli
B=target/release/basalt
Q=(); [[ $quick == 1 ]] && Q=(--quick)
LATTIGO=$PEER_BUILD/lattigo-bench
TFHERS=$PEER_BUILD/tfhe-rs-target/release/tfhe-rs-peer-bench
POULPY=$PEER_BUILD/poulpy-target/release/poulpy-peer-bench

# peer NAME BINARY BUILD-COMMAND...: build unless --quick (then only use what is built).
peer() {
  local name=$1 bin=$2; shift 2
  if [[ $quick == 0 ]]; then "$@"; fi
  if [[ -x $bin ]]; then return 0; fi
  echo "note: $name not built ($bin); skipped (run without --quick to build it)" | tee -a "$OUT/skipped.txt" >&2
  return 1
}
build_lattigo() { (cd "$PEERS/lattigo" && go build -o "$LATTIGO" .); }
build_tfhers() { (cd "$PEERS/tfhe-rs" && CARGO_TARGET_DIR="$PEER_BUILD/tfhe-rs-target" cargo build --release -q); }
# Poulpy's harness is built on its AVX-512 IFMA backend (NTT3x42Ifma), which refuses to compile
# on a CPU without AVX-512 IFMA: there it is skipped with a note instead of failing the run.
build_poulpy() {
  if ! grep -qw avx512ifma /proc/cpuinfo; then
    echo "note: Poulpy skipped: its IFMA backend needs AVX-512 IFMA, which this CPU lacks" | tee -a "$OUT/skipped.txt" >&2
    return 1
  fi
  (cd "$PEERS/poulpy" && CARGO_TARGET_DIR="$PEER_BUILD/poulpy-target" cargo build --release -q -j 2)
}

if [[ $what == ckks || $what == all ]]; then
  $B bench ntt --threads 1,2 "${Q[@]}" > "$OUT/basalt-ntt.jsonl"
  $B bench ckks --preset LATTIGO_RESIDUAL,N16QP1546H192H32 --threads 1,2 --reps 5 --batch 8 "${Q[@]}" \
    > "$OUT/basalt-ckks.jsonl"
  if peer Lattigo "$LATTIGO" build_lattigo; then
    LQ=(); [[ $quick == 1 ]] && LQ=(-quick)
    for g in 1 2; do
      GOMAXPROCS=$g "$LATTIGO" -mode ops "${LQ[@]}" > "$OUT/lattigo-ops-gomaxprocs$g.jsonl" 2> "$OUT/lattigo-ops-gomaxprocs$g.stderr"
    done
  fi
fi
if [[ $what == poulpy || $what == all ]]; then
  if peer Poulpy "$POULPY" build_poulpy; then
    R=10; [[ $quick == 1 ]] && R=2
    "$POULPY" --mode ops --threads 1,2 --reps $R > "$OUT/poulpy.jsonl" 2> "$OUT/poulpy.stderr"
  fi
fi
if [[ $what == tfhe || $what == all ]]; then
  $B bench pbs --threads 1,2 "${Q[@]}" > "$OUT/basalt-pbs.jsonl"
  $B bench integer --bits 8,32 --int-ops add,mul --threads 1,2 "${Q[@]}" > "$OUT/basalt-integer.jsonl"
  if peer TFHE-rs "$TFHERS" build_tfhers; then
    TQ=(); [[ $quick == 1 ]] && TQ=(--quick)
    "$TFHERS" --threads 1,2 "${TQ[@]}" > "$OUT/tfhe-rs.jsonl" 2> "$OUT/tfhe-rs.stderr"
  fi
fi
if [[ $what == btp ]]; then
  # One library at a time: each needs 15-22 GB for its N = 2^16 bootstrapping keys.
  BR=${BTP_REPS:-3}; [[ $quick == 1 ]] && BR=1
  if [[ $quick == 0 ]] && peer Lattigo "$LATTIGO" build_lattigo; then
    GOMAXPROCS=1 "$LATTIGO" -mode btp -btp-reps "$BR" \
      > "$OUT/lattigo-btp-gomaxprocs1.jsonl" 2> "$OUT/lattigo-btp-gomaxprocs1.stderr"
  fi
  # One process per key form: each peak-memory figure starts from a fresh process.
  rm -f "$OUT/basalt-btp.jsonl"
  for k in full seeded; do
    $B bench bootstrap --preset N16QP1546H192H32 --threads 1,2 --reps "$BR" --keys $k "${Q[@]}" \
      >> "$OUT/basalt-btp.jsonl" 2>> "$OUT/basalt-btp.stderr"
  done
  if [[ $quick == 0 ]] && peer Poulpy "$POULPY" build_poulpy; then
    "$POULPY" --mode btp --threads 1 --btp-reps "$BR" \
      --presets n16_d35_k636_p20_c2s,n16_d35_k685_p19_s2c_ffr_ci > "$OUT/poulpy-btp.jsonl" 2> "$OUT/poulpy-btp.stderr"
    cat "$OUT/poulpy-btp.jsonl" >> "$OUT/poulpy.jsonl"
  fi
fi
python3 scripts/compare_peers.py "$OUT" | tee "$OUT/summary.md"
if [[ $quick == 0 ]]; then
  python3 scripts/benchmarks_md.py "$OUT" > BENCHMARKS.md
  echo "BENCHMARKS.md rewritten from $OUT" >&2
else
  python3 scripts/benchmarks_md.py "$OUT" > "$OUT/BENCHMARKS.md"
  echo "quick run: page written to $OUT/BENCHMARKS.md (BENCHMARKS.md left as it is)" >&2
fi
