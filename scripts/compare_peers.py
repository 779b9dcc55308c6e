#!/usr/bin/env python3
"""Put Basalt's benchmark records beside the peers' from the same run directory.

Usage: scripts/compare_peers.py bench-out/<date>   (prints Markdown tables)
"""

import json
import pathlib
import sys


def load(path):
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def fmt(x):
    return "—" if x is None else (f"{x:,.2f}" if x < 100 else f"{x:,.0f}")


def ratio(ours, theirs):
    return "—" if ours is None or theirs is None else f"{theirs / ours:.2f}×"


def ckks(d):
    ours = load(d / "basalt-ckks.jsonl")
    lat = {g: load(d / f"lattigo-ops-gomaxprocs{g}.jsonl") for g in (1, 2)}
    preset_of = {"N16QP1546H192H32/btp-full": "N16QP1546H192H32", "N16QP1546H192H32/residual": "LATTIGO_RESIDUAL"}
    op_map = {"mul_relin": "mul_relin", "rescale": "rescale", "rotate": "rotate_1", "rotate_hoisted_8": "rotate_hoisted_8"}
    rows = []
    for r in ours:
        lop = op_map.get(r.get("op"))
        if lop is None or r.get("batch") or r.get("bench") not in (None, f"ckks/{r.get('op')}"):
            continue
        name = "N16QP1546H192H32" if r["limbs"] == 25 else "LATTIGO_RESIDUAL" if r["limbs"] == 10 else None
        peer = None
        for p in lat.get(r["threads"], []):
            if p.get("bench") == lop and preset_of.get(p.get("params")) == name:
                peer = p.get("median_ms")
        rows.append([r["op"], r["preset"], str(r["level"]), str(r["dnum"]), str(r["threads"]),
                     fmt(r["median_ms"]), fmt(peer), ratio(r["median_ms"], peer)])
    table("CKKS, N = 2^16 (median ms; ratio = Lattigo / Basalt, > 1 means Basalt is faster)",
          ["op", "Basalt preset", "level", "dnum", "threads", "Basalt", "Lattigo v6.2", "ratio"], rows)

    ntt = load(d / "basalt-ntt.jsonl")
    rows = []
    for r in ntt:
        if r["bench"] == "ntt/forward":
            rows.append([r["impl"], str(r["q_bits"]), fmt(r["stats"]["median_ms"]), fmt(r["stats"]["min_ms"])])
    for p in lat.get(1, []):
        if p.get("bench") == "ntt_one_limb" and p.get("params", "").endswith("btp-full"):
            rows.append(["Lattigo v6.2", "60", fmt(p["median_ms"]), fmt(p["min_ms"])])
    table("NTT of one limb, N = 2^16, one thread (ms)", ["implementation", "prime bits", "median", "min"], rows)


def tfhe(d):
    ours = [r for r in load(d / "basalt-pbs.jsonl") if r.get("set", "").upper().startswith("TFHERS_2_2")]
    peer = [p for p in load(d / "tfhe-rs.jsonl")
            if p.get("params", "").startswith("PARAM_MESSAGE_2_CARRY_2_KS_PBS")]
    if not ours and not peer:
        return
    def peer_ms(bench, threads):
        for p in peer:
            if p.get("bench") == bench and p.get("threads") == threads:
                return p
        return None
    rows = []
    for bench, pb in (("pbs/latency", "pbs_only"), ("ks/latency", "keyswitch_only"), ("ks_pbs/latency", "ks_pbs_latency")):
        for r in ours:
            if r["bench"] == bench and r["threads"] == 1:
                p = peer_ms(pb, 1)
                theirs = p and p["median_ms"]
                rows.append([bench, "1", "—", fmt(r["median_ms"]), fmt(theirs), ratio(r["median_ms"], theirs)])
    for count in (64, 512):
        for r in ours:
            if r["bench"] == "ks_pbs/throughput" and r["count"] == count:
                # The TFHE-rs program times batches of 64 only.
                p = peer_ms(f"ks_pbs_batch{count}", r["threads"])
                theirs = p and p.get("pbs_per_s_at_median")
                mine = r.get("pbs_per_s")
                rows.append([f"{count} × KS+PBS (PBS/s)", str(r["threads"]),
                             "batched" if r["batched"] else "one by one", fmt(mine),
                             fmt(theirs) if p else "not timed by its program",
                             "—" if not (mine and theirs) else f"{mine / theirs:.2f}×"])
    table("TFHE, TFHE-rs's default 2+2-bit set (latency: median ms, ratio = TFHE-rs / Basalt; "
          "throughput: PBS/s, ratio = Basalt / TFHE-rs; > 1 means Basalt is faster)",
          ["measurement", "threads", "mode", "Basalt", "TFHE-rs 1.8.2", "ratio"], rows)
    integer(d)


def integer(d):
    """Radix integers on the 2+2-bit set: `basalt bench integer` beside TFHE-rs's
    `add_parallelized` / `mul_parallelized` lines (same names: uint8_add, uint32_mul, ...)."""
    ours = [r for r in load(d / "basalt-integer.jsonl") if str(r.get("bench", "")).startswith("uint")]
    peer = [p for p in load(d / "tfhe-rs.jsonl") if str(p.get("bench", "")).startswith("uint")
            and "PARAM_MESSAGE_2_CARRY_2_KS_PBS" in p.get("params", "")]
    if not ours and not peer:
        return
    keys = sorted({(r["bench"], r["threads"]) for r in ours + peer},
                  key=lambda k: (int(k[0][4:].split("_")[0]), k[0].split("_")[1], k[1]))
    rows = []
    for bench, th in keys:
        o = next((r for r in ours if r["bench"] == bench and r["threads"] == th), None)
        p = next((r for r in peer if r["bench"] == bench and r["threads"] == th), None)
        mine, theirs = o and o.get("median_ms"), p and p.get("median_ms")
        rows.append([bench, str(th), "—" if o is None else o.get("carry", "—"), fmt(mine), fmt(theirs),
                     ratio(mine, theirs)])
    table("Radix integers, 2+2-bit blocks on TFHE-rs's default set, fresh operands (median ms; "
          "ratio = TFHE-rs / Basalt, > 1 means Basalt is faster)",
          ["operation", "threads", "Basalt carry propagation", "Basalt", "TFHE-rs 1.8.2", "ratio"], rows)


def btp(d):
    """Bootstrapping: Basalt's `bench bootstrap` records beside Lattigo's `-mode btp`."""
    ours = load(d / "basalt-btp.jsonl")
    rows = []
    for g in (1, 2):
        lat = [r for r in load(d / f"lattigo-btp-gomaxprocs{g}.jsonl") if r.get("bench") == "bootstrap"]
        mine = [r for r in ours if r.get("bench") == "bootstrap" and r.get("threads") == g]
        if not lat and not mine:
            continue
        lm = lat[0] if lat else {}
        om = mine[0] if mine else {}
        l_ms = lm.get("median_ms", lm.get("ms"))
        o_ms = om.get("median_ms")
        rows.append([f"bootstrap, 2^15 slots, {g} thread(s)", fmt(o_ms), fmt(l_ms), ratio(o_ms, l_ms)])
        if om.get("stages", {}).get("total_cpu_ms") and g == 1:
            rows.append(["  thread CPU time (Basalt)", fmt(om["stages"]["total_cpu_ms"]), "", ""])
        # Like for like on the real part. Lattigo v6.2's "L2" statistic adds the real error's
        # square twice (schemes/ckks/precision.go), so it is sqrt(2)*|real error|: its real
        # precision is its "L2" + 0.5 bit, exactly, per slot (hence for the mean and the min).
        # Both means are the mean of the per-slot precisions (Lattigo's AVGLog2Prec).
        l_l2 = (lm.get("avg_log2_prec_L2_vs_cleartext"), lm.get("min_log2_prec_L2_vs_cleartext"))
        lp = tuple(None if x is None else x + 0.5 for x in l_l2)
        pr = om.get("precision", {})
        op = (pr.get("mean", {}).get("real"), pr.get("min", {}).get("real"))
        rows.append([f"  precision, real part, mean / worst slot (bits), {g} thread(s)",
                     " / ".join(fmt(x) for x in op), " / ".join(fmt(x) for x in lp), ""])
        oc = (pr.get("mean", {}).get("l2"), pr.get("min", {}).get("l2"))
        rows.append([f"  precision, complex (true L2), mean / worst slot (bits), {g} thread(s)",
                     " / ".join(fmt(x) for x in oc), "not reported", ""])
    if rows:
        table("Bootstrapping, N16QP1546H192H32 (ms; ratio = Lattigo / Basalt, > 1: Basalt faster)",
              ["measurement", "Basalt", "Lattigo v6.2", "ratio"], rows)


def main():
    d = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "bench-out")
    print(f"# Basalt vs peers, {d.name}\n")
    m = d / "machine.txt"
    if m.exists():
        print("```\n" + m.read_text().strip() + "\n```")
    ckks(d)
    throughput(d)
    poulpy(d)
    tfhe(d)
    btp(d)


def throughput(d):
    """Throughput mode: Basalt's batch calls beside Lattigo's concurrent goroutines (amortised ms
    per operation), and each beside its own single-thread time."""
    ours = [r for r in load(d / "basalt-ckks.jsonl") if r.get("batch")]
    lat = load(d / "lattigo-ops-gomaxprocs2.jsonl") + load(d / "lattigo-ops-gomaxprocs1.jsonl")
    preset_of = {"N16QP1546H192H32/btp-full": 25, "N16QP1546H192H32/residual": 10}
    peer_op = {"mul_relin": "mul_relin_concurrent", "rotate": "rotate_1_concurrent"}
    rows = []
    for r in ours:
        peer = None
        for p in lat:
            if p.get("bench") == peer_op.get(r["op"]) and preset_of.get(p.get("params")) == r["limbs"] \
                    and p.get("conc") == r["threads"]:
                peer = p.get("amortized_ms_per_op")
        sp = r.get("speedup")
        rows.append([r["op"], r["preset"], str(r["threads"]), str(r["batch"]), fmt(r["per_op_ms"]),
                     "—" if sp is None else f"{sp:.2f}×", fmt(peer), ratio(r["per_op_ms"], peer)])
    if rows:
        table("Throughput mode, N = 2^16 (amortised ms per operation; speed-up over Basalt's own 1-thread "
              "batch; ratio = Lattigo concurrent / Basalt batch, > 1: Basalt faster)",
              ["op", "Basalt preset", "threads", "batch", "Basalt", "speed-up", "Lattigo v6.2 concurrent", "ratio"],
              rows)


def poulpy(d):
    """Poulpy 0.10 (NTT3x42Ifma; base-2^K limbs) at an equal ciphertext width. Poulpy's product
    includes the rescale, so it is set beside Basalt's `mul_relin_rescale` (ModDown and rescale
    merged) and beside Basalt's `mul_relin` + `rescale`."""
    theirs = load(d / "poulpy.jsonl")
    if not theirs:
        return
    ours = [r for r in load(d / "basalt-ckks.jsonl") if not r.get("batch")]
    # Poulpy's point → the Basalt preset of about the same ciphertext width.
    width = {"L24_dsize6": 25, "L24_dsize5": 25, "L9_dsize5": 10}
    rows = []
    for p in theirs:
        if p.get("op") not in ("mul_relin_rescale", "rotate_1"):
            continue
        limbs = width.get(p.get("point"))
        mine = {r["op"]: r for r in ours if r["limbs"] == limbs and r["threads"] == p.get("threads")}
        if p["op"] == "rotate_1":
            o = mine.get("rotate", {}).get("median_ms")
            what = "rotate"
        elif "mul_relin_rescale" in mine:
            o = mine["mul_relin_rescale"]["median_ms"]
            what = "mul + relin + rescale (merged)"
        else:
            a, b = mine.get("mul_relin", {}).get("median_ms"), mine.get("rescale", {}).get("median_ms")
            o = None if a is None or b is None else a + b
            what = "mul + relin, + rescale"
        bits = next((r["log_qp"] for r in ours if r["limbs"] == limbs), None)
        rows.append([what, f"{p['point']} ({p['ct_k_bits']}-bit ct, dnum {p['dnum']})",
                     f"{limbs} limbs" + ("" if bits is None else f", {bits:.0f}-bit QP"), str(p["threads"]),
                     fmt(o), fmt(p.get("median_ms")), ratio(o, p.get("median_ms"))])
    table("Beside Poulpy 0.10, N = 2^16 (median ms; ratio = Poulpy / Basalt, > 1: Basalt faster)",
          ["op", "Poulpy point", "Basalt chain", "threads", "Basalt", "Poulpy", "ratio"], rows)
    rows = []
    for p in theirs:
        if p.get("op") == "bootstrap":
            rows.append([p.get("preset", "?"), str(p["threads"]), fmt(p.get("median_ms")),
                         f"{p.get('prec_re_avg_bits', 0):.2f} / {p.get('prec_re_min_bits', 0):.2f}",
                         fmt(p.get("peak_rss_mib"))])
    for r in load(d / "basalt-btp.jsonl"):
        if r.get("bench") == "bootstrap":
            pr = r.get("precision", {})
            rows.append([f"Basalt {r['preset']}" + (" (seeded keys)" if r.get("seeded") else ""), str(r["threads"]),
                         fmt(r.get("median_ms")),
                         f"{pr.get('mean', {}).get('real', 0):.2f} / {pr.get('min', {}).get('real', 0):.2f}",
                         fmt(r.get("peak_rss_bytes", 0) / 2**20)])
    table("Bootstrapping beside Poulpy's presets (ms; precision of the real part, mean / worst slot, bits)",
          ["preset", "threads", "median ms", "precision re", "peak RSS MiB"], rows)


if __name__ == "__main__":
    main()
