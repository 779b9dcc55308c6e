#!/usr/bin/env python3
"""Write BENCHMARKS.md from the JSON records of one benchmark run.

Usage: scripts/benchmarks_md.py bench-out/<date> > BENCHMARKS.md

Reads every `*.jsonl` in the directory that `scripts/bench_all.sh` (Basalt alone) or
`scripts/bench_vs_peers.sh` (Basalt beside its peers) wrote, and prints the page: machine, date,
commands, the method, then one table per suite. Nothing is typed in by hand: every figure is a
field of a record, and the page says which command produced it.
"""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare_peers  # noqa: E402  (the peers' tables, when their records are in the run)

METHOD = """\
## Method

- **Harness** (`crates/basalt-bench`, `basalt bench <suite>`). One rayon pool per thread
  count, built and started once. Every measurement runs the operation once cold (reported
  apart: `cold_ms`, `cold_faults`), warms up for `--warmup` seconds, then times at least
  `--reps` repetitions and `--min-time` seconds. The thread counts are **interleaved**: each
  round runs the operation once in every pool, in an order that rotates by one each round, so
  a slow phase of the machine hits every thread count alike. The speed-up is the 1-thread
  median over the t-thread median of that same interleaved run; efficiency = speed-up / t.
- **Figures**: median wall time; `MAD` is the median absolute deviation (the noise of that
  measurement); `faults` is the median count of minor page faults per repetition (0 in a
  steady state).
- **Allocator**. glibc adapts its mmap and trim thresholds to the largest block freed so far
  and returns freed memory to the kernel. With two or more threads a key switch at N = 2^16
  then faults in tens of MB of fresh pages each time (mul + relinearise on the residual set:
  about 11,800 minor faults per operation on 2 threads, none on 1 in the steady state), and how
  many depends on what the process allocated and freed before. An earlier version of this
  benchmark measured the thread counts one after the other, each with a new pool and new keys,
  after one warm-up run: its 2-thread figure depended on the order (2.9× of 1 thread in one
  order, which two cores cannot give, 1.26× in the other). The harness now interleaves the
  thread counts, warms up to a steady state, and `basalt bench` pins the thresholds at start
  (`machine.allocator` says so; `--system-malloc` leaves glibc's defaults for comparison); the
  fault column shows whether a steady state was reached. A server gets the pinned behaviour
  without code: `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864`.
- **Fork-join points**: the kernels one operation runs, each of which splits its limbs over
  the pool and joins (a batch in throughput mode joins once).
- **Throughput mode** (`*_batch`): `Evaluator::mul_relin_batch` / `rotate_batch` /
  `rescale_batch` over the pool, one ciphertext per task with the per-limb parallelism off;
  `per op` is the batch time over its size.
- **Bit-for-bit**: `identical` says every thread count (and the batch path) produced the same
  ciphertexts as the first run.
- **Memory** (bootstrap): peak resident set (`VmHWM`, reset before the keys are generated)
  over key generation and every timed bootstrap, per key form (full or seeded keys).
"""


def load_dir(d):
    recs = []
    for f in sorted(d.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                r["_file"] = f.name
                recs.append(r)
    return recs


def fmt(x, digits=None):
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    if isinstance(x, int):
        return f"{x:,}"
    if digits is not None:
        return f"{x:.{digits}f}"
    return f"{x:,.3f}" if x < 1 else f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def table(title, header, rows, note=None):
    if not rows:
        return
    print(f"\n## {title}\n")
    if note:
        print(note + "\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def speed(r):
    sp, ef = r.get("speedup"), r.get("efficiency")
    return fmt(sp, 2) + "×" if sp else "—", (f"{100 * ef:.0f} %" if ef else "—")


def prec(r):
    p = r.get("precision") or {}
    mean = (p.get("mean") or {}).get("real")
    worst = (p.get("min") or {}).get("real")
    return "—" if mean is None else f"{mean:.1f} / {worst:.1f}"


def ckks_tables(recs):
    ops = [r for r in recs if str(r.get("bench", "")).startswith("ckks/")]
    for batch in (False, True):
        rows = []
        for r in ops:
            if bool(r.get("batch")) != batch:
                continue
            sp, ef = speed(r)
            shape = f"{r['preset']} (N = 2^{r['log_n']}, L = {r['level']}, dnum {r['dnum']}, {r['log_qp']:.0f}-bit QP)"
            rows.append([r["op"], shape, str(r["threads"])]
                        + ([str(r["batch"]), fmt(r["median_ms"]), fmt(r["per_op_ms"]), fmt(r["ops_per_s"])] if batch
                           else [fmt(r["median_ms"]), fmt(r["min_ms"]), fmt(r["mad_ms"])])
                        + [sp, ef, fmt(r.get("faults_per_rep"))]
                        + ([] if batch else [fmt(r.get("fork_join_points"))])
                        + [fmt(r.get("identical_across_threads")), prec(r)])
        if batch:
            table("CKKS throughput mode (a batch of independent ciphertexts, one per task)",
                  ["op", "parameters", "threads", "batch", "batch ms", "per op ms", "ops/s", "speed-up",
                   "efficiency", "faults", "identical", "precision re mean / worst (bits)"], rows)
        else:
            table("CKKS operations (one ciphertext, limbs split over the pool)",
                  ["op", "parameters", "threads", "median ms", "min ms", "MAD ms", "speed-up", "efficiency",
                   "faults", "fork-joins", "identical", "precision re mean / worst (bits)"], rows,
                  "`rotate_hoisted_8` is 8 rotations sharing one decomposition (its per-rotation time is the "
                  "median / 8); `keyswitch` is one hybrid key switch (ModUp, inner product, ModDown) of one "
                  "polynomial; `ntt` is a forward and an inverse NTT of both polynomials.")


def ntt_tables(recs):
    rows = []
    for r in recs:
        b = r.get("bench", "")
        if b in ("ntt/forward", "ntt/inverse"):
            s = r["stats"]
            rows.append([b, r["impl"], str(r["q_bits"]), "1", "1", fmt(s["median_ms"]), fmt(s["mad_ms"]), "—", "—"])
    for r in recs:
        b = r.get("bench", "")
        if b in ("ntt/forward_inverse_poly", "mod_down"):
            s = r["stats"]
            sp, ef = speed(r)
            limbs = r.get("limbs", r.get("q_limbs"))
            rows.append([b, r["impl"], "60", str(limbs), str(r["threads"]), fmt(s["median_ms"]), fmt(s["mad_ms"]), sp, ef])
    n = next((r.get("n") for r in recs if r.get("bench", "").startswith("ntt/")), None)
    table(f"NTT and ModDown, N = {n}" if n else "NTT and ModDown",
          ["kernel", "implementation", "prime bits", "limbs", "threads", "median ms", "MAD ms", "speed-up",
           "efficiency"], rows)


def bootstrap_tables(recs):
    rows = []
    for r in recs:
        if r.get("bench") != "bootstrap" or r.get("library") != "basalt":
            continue
        sp, ef = speed(r)
        rows.append([f"{r['preset']} (N = 2^{r['log_n']}, {r['slots']:,} slots)", "seeded" if r["seeded"] else "full",
                     str(r["threads"]), fmt(r["median_ms"]), fmt(r["min_ms"]), sp, ef,
                     fmt(r.get("identical_across_threads")), prec(r), f"{r['key_bytes'] / 2**30:.2f}",
                     f"{r['peak_rss_bytes'] / 2**30:.2f}", str(r["levels"]["output_level"])])
    table("CKKS bootstrapping",
          ["preset", "keys", "threads", "median ms", "min ms", "speed-up", "efficiency", "identical",
           "precision re mean / worst (bits)", "keys GiB", "peak RSS GiB", "levels left"], rows,
          "Peak RSS: the whole process (binary, tables, keys, working memory) from key generation to the "
          "last timed bootstrap of that key form.")


def pbs_tables(recs):
    rows = []
    for r in recs:
        if r.get("library") != "basalt-tfhe":
            continue
        b = r.get("bench", "")
        if b.endswith("/latency") or b.endswith("/throughput"):
            mode = "batched" if r.get("batched") else ("one by one" if b.endswith("throughput") else "—")
            rows.append([r["set"], b, str(r["threads"]), str(r.get("count")), mode, fmt(r["median_ms"]),
                         fmt(r.get("per_pbs_ms")), fmt(r.get("pbs_per_s"))])
    table("TFHE programmable bootstrapping",
          ["set", "measurement", "threads", "count", "mode", "median ms", "ms per PBS", "PBS/s"], rows)


def integer_tables(recs):
    rows = []
    for r in recs:
        if r.get("library") != "basalt" or not str(r.get("bench", "")).startswith("uint"):
            continue
        rows.append([r["set"], r["bench"], str(r["threads"]), r.get("carry", "—"), str(r.get("reps")),
                     fmt(r["median_ms"]), fmt(r.get("min_ms"))])
    table("TFHE radix integers (fresh operands, result checked by decryption)",
          ["set", "operation", "threads", "carry propagation", "reps", "median ms", "min ms"], rows)


def main():
    d = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
    recs = load_dir(d) if d and d.is_dir() else []
    print("# Benchmarks\n")
    print("Generated by `scripts/benchmarks_md.py` from the JSON records of one output folder "
          "(each suite's latest run there: its command's date below); regenerate "
          "every figure with `scripts/bench_all.sh` (Basalt alone; `THREADS=1,2,4,8,16` on a "
          "larger machine) or `scripts/bench_vs_peers.sh all` and `scripts/bench_vs_peers.sh btp` "
          "(beside Lattigo, TFHE-rs and Poulpy), each of which ends by rewriting this page. "
          "Raw records: `bench-out/<date>/*.jsonl` (not committed).\n")
    if not recs:
        print("No run has been recorded with the current benchmark harness yet: "
              "`scripts/bench_all.sh` on a quiet machine writes the tables here.\n")
        print(METHOD)
        return
    m = next((r["machine"] for r in recs if "machine" in r), {})
    dates = sorted({r["date"] for r in recs if "date" in r})
    cmds = []
    first = {}
    for r in recs:
        c = r.get("command")
        if c and c not in cmds:
            cmds.append(c)
        if c and "date" in r:
            first[c] = min(first.get(c, r["date"]), r["date"])
    print("## Machine and run\n")
    print(f"- CPU: {m.get('cpu', '?')}, {m.get('cores', '?')} cores, AVX-512 IFMA: "
          f"{'yes' if m.get('avx512ifma') else 'no'}; allocator: {m.get('allocator', '?')}.")
    loads = sorted({r['machine'].get('load_average') for r in recs if r.get('machine', {}).get('load_average') is not None})
    if loads:
        print(f"- Load average (1 min) when the records were made: {loads[0]:.2f} – {loads[-1]:.2f} "
              f"(a quiet machine reads below its core count).")
    if dates:
        print(f"- Date (UTC): {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "") + ".")
    print("- Commands:\n")
    for c in cmds:
        when = f" ({first[c]})" if c in first else ""
        c = " ".join(["basalt"] + c.split()[1:]) if c.split()[0].endswith("basalt") else c
        print(f"  - `{c}`{when}")
    print()
    print(METHOD)
    ckks_tables(recs)
    ntt_tables(recs)
    bootstrap_tables(recs)
    pbs_tables(recs)
    integer_tables(recs)
    if any(f.name.startswith(("lattigo", "tfhe-rs", "poulpy")) for f in d.glob("*.jsonl")):
        print("\n## Beside the peers (same run)\n")
        print("Ratios > 1: Basalt faster. The peers' programs and what each of them times are described "
              "in `scripts/bench_vs_peers.sh`.")
        skipped = d / "skipped.txt"
        if skipped.exists():
            notes = sorted({line.removeprefix("note: ").strip() for line in skipped.read_text().splitlines()
                            if "IFMA" in line or "not built" not in line})
            for note in notes:
                print(f"\n- Not in this run: {note}.")
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            compare_peers.ckks(d)
            compare_peers.throughput(d)
            compare_peers.poulpy(d)
            compare_peers.tfhe(d)
            compare_peers.btp(d)
        print(buf.getvalue().replace("\n### ", "\n### "))


if __name__ == "__main__":
    main()
