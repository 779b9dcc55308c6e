#!/usr/bin/env python3
"""Regenerate the results table of docs/workloads.md from workload run records.

    basalt workload run lola --json >> docs/workloads.jsonl      # one record per run
    python3 scripts/workloads_md.py [docs/workloads.jsonl]       # rewrites the table

Each record is a line of ``basalt workload run NAME --json`` (or ``basalt.workloads.run``'s
dict as JSON). The latest record per (workload, preset) is kept. Beside each run the table puts
the paper's reported time on its accelerator and our simulator's time on that accelerator
model, both read from ``docs/reproduction-status.md`` (``basalt sim reproduce --markdown``).
Times of ``--quick`` runs (insecure toy rings) are not shown: they are CI checks, not results.
The table replaces the block between the ``workloads-table`` markers of docs/workloads.md.
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "workloads.md"
STATUS = ROOT / "docs" / "reproduction-status.md"
BEGIN, END = "<!-- workloads-table:begin -->", "<!-- workloads-table:end -->"

# Workload -> the paper rows it reproduces: (paper section, table, row, metric, label).
ROWS = {
    "helr": [("fab", "8", "FAB-1", "time per iteration", "FAB-1, per iteration"),
             ("osiris", "III(b)", "HELR-1024", "DH latency", "Osiris DH, per iteration")],
    "lola": [("osiris", "III(a)", "LoLA", "NH latency", "Osiris NH"),
             ("craterlake", "3", "MNIST Unencryp. Wghts.", "CraterLake time", "CraterLake")],
    "mlp": [("osiris", "III(a)", "MLP", "NH latency", "Osiris NH")],
    "lenet": [("osiris", "III(a)", "LeNet", "NH latency", "Osiris NH")],
    "sort": [("osiris", "III(b)", "Sorting", "DH latency", "Osiris DH, 2^14 values")],
    "resnet20": [("osiris", "III(b)", "ResNet-20", "DH latency", "Osiris DH"),
                 ("craterlake", "3", "ResNet-20", "CraterLake time", "CraterLake")],
    "lstm": [("craterlake", "3", "LSTM", "CraterLake time",
              "CraterLake, 150 steps (50 bootstraps)")],
}

# The full-size run of each CKKS workload: its preset, the command that appends its record, and
# what it costs here (2 threads). A workload without a full-size record gets a "not run" row.
FULL = {
    "helr": ("FAB", 16, "basalt workload run helr --threads 2 --json",
             "~15 GB of keys, 30 iterations"),
    "helr@lattigo": ("LATTIGO_N16QP1546H192H32", 16,
                     "basalt workload run helr --preset LATTIGO_N16QP1546H192H32 --threads 2 --json",
                     "N = 2^16 keys, 30 iterations"),
    "lola": ("OSIRIS_SET_I", 14, "basalt workload run lola --threads 2 --json",
             "~0.4 GB, 450 images, 25-50 min"),
    "mlp": ("OSIRIS_SET_I", 14, "basalt workload run mlp --threads 2 --json",
            "~0.4 GB, 450 images, 25-50 min"),
    "lenet": ("OSIRIS_SET_II", 14, "basalt workload run lenet --threads 2 --json",
              "~4 GB (diagonals at every limb and ~250 rotation keys), 450 images"),
    "lstm": ("CRATERLAKE_80_BOOT", 16, "basalt workload run lstm --threads 2 --json --allow-insecure",
             "~19 GiB (keys with the parts of their levels; cargo run --release -p basalt-workloads --example lstm_size), 20 images x 28 steps, 9 bootstraps each"),
    "lstm@lattigo": ("LATTIGO_N16QP1546H192H32", 16,
                     "basalt workload run lstm --preset LATTIGO_N16QP1546H192H32 --threads 2 --json",
                     "~11 GB, 20 images x 28 steps; --images N for the first N"),
    "resnet20": ("CRATERLAKE_80_BOOT", 16,
                 "basalt workload run resnet20 --threads 2 --json --allow-insecure",
                 "~14 GiB (keys, plaintexts encoded at use), 37 bootstraps per image; --images N for the first N"),
    "sort": ("LATTIGO_N16QP1546H192H32", 16, "basalt workload run sort --threads 2 --json",
             "N = 2^16, 64 values"),
}


def paper_rows() -> dict:
    """(paper, table, row, metric) -> (unit, theirs, ours) from the reproduction page."""
    out, paper = {}, None
    for line in STATUS.read_text().splitlines():
        if line.startswith("## "):
            paper = line[3:].strip()
        elif line.startswith("| ") and paper and not line.startswith("| table"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) >= 6 and cells[4] not in ("---:", ""):
                try:
                    theirs = float(cells[4])
                    ours = float(cells[5]) if cells[5] not in ("", "—", "-") else None
                except ValueError:
                    continue
                out.setdefault((paper, cells[0], cells[1], cells[2]), (cells[3], theirs, ours))
    return out


def pct(r: dict, k: str) -> str:
    v = r.get("accuracy", {}).get(k)
    return "—" if v is None else f"{100 * v:.1f} %"


def seconds(r: dict) -> str:
    if r.get("quick"):
        return "—"
    for k, label in (("per_iteration_s", "/ iteration"), ("per_image_s", "/ image"),
                     ("sort_s", "")):
        if k in r:
            v = r[k]
            return f"{v:.0f} s {label}".strip() if v >= 100 else f"{v:.3g} s {label}".strip()
    return f"{r['wall_s']:.3g} s"


def table(records: list[dict]) -> str:
    latest = {}
    for r in records:
        latest[(r["workload"], r["preset"])] = r
    status = paper_rows()
    lines = [
        "| workload | preset (N) | data | plaintext | encrypted | agreement | bits | "
        "bootstraps | keys | time here | paper's accelerator | paper | our model |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    missing = []
    for key, (preset, log_n, cmd, cost) in FULL.items():
        name = key.split("@")[0]
        if (name, preset) in latest and not latest[(name, preset)].get("quick"):
            continue
        missing.append((name, preset, cmd, cost))
        latest[(name, preset)] = {"workload": name, "preset": preset, "log_n": log_n,
                                  "not_run": cmd, "security": {"meets_128": True}}
    for (name, preset), r in sorted(latest.items()):
        refs = ROWS.get(name, []) or [(None, None, None, None, "—")]
        for i, (paper, tab, row, metric, label) in enumerate(refs):
            hit = status.get((paper, tab, row, metric)) if paper else None
            theirs = f"{hit[1]:g} {hit[0]}" if hit else "—"
            ours = f"{hit[2]:.4g} {hit[0]}" if hit and hit[2] is not None else "—"
            sec = r.get("security", {})
            toy = ("" if sec.get("meets_128")
                   else " (test ring, insecure)" if r.get("quick")
                   else f" (estimated {sec.get('estimated_bits', 0):.0f} bits)")
            k = r.get("images")
            count = "" if k is None else f"; {k} test image{'' if k == 1 else 's'}"
            if "not_run" in r:
                head = (f"| {name} | {preset} (2^{r['log_n']}) | full size | not run | not run "
                        "| not run | | | | not run " if i == 0 else "| | | | | | | | | | ")
                lines.append(f"{head}| {label} | {theirs} | {ours} |")
                continue
            head = (
                f"| {name} | {preset} (2^{r.get('log_n', '?')}){toy} | {r.get('data', '')}{count} | "
                f"{pct(r, 'plaintext')} | {pct(r, 'encrypted')} | {pct(r, 'agreement')} | "
                f"{r.get('precision_bits', float('nan')):.1f} | {r.get('bootstraps', 0)} | "
                f"{r.get('key_bytes', 0) / 2**20:.0f} MiB | {seconds(r)} "
                if i == 0 else "| | | | | | | | | | "
            )
            lines.append(f"{head}| {label} | {theirs} | {ours} |")
    if missing:
        lines += ["", "Full-size runs not yet recorded (each appends its record to "
                  "`docs/workloads.jsonl`; then rerun this script):", "", "```sh"]
        w = max(len(c) for _, _, c, _ in missing)
        lines += [f"{c} >> docs/workloads.jsonl".ljust(w + 25) + f"# {cost}"
                  for _, _, c, cost in missing]
        lines.append("```")
    return "\n".join(lines)


def main() -> int:
    path = (pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "workloads.jsonl").resolve()
    records = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    for r in records:
        for k in ("workload", "preset", "accuracy", "wall_s"):
            if k not in r:
                raise SystemExit(f"{path}: a record without `{k}`: {r}")
    doc = DOC.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC} has no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    cmd = f"python3 scripts/workloads_md.py {path.relative_to(ROOT)}"
    block = f"{BEGIN}\n<!-- generated by `{cmd}`; do not edit -->\n\n{table(records)}\n\n{END}"
    DOC.write_text(head + block + tail)
    print(f"{DOC.relative_to(ROOT)}: {len(records)} records", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
