#!/usr/bin/env python3
"""Scaling of basalt.distributed on a Ray cluster, as JSON lines (one record per measurement).

- ``helr``: FAB-2's data-parallel HELR training (FAB §4.9) with k workers: seconds per
  iteration (server side), bytes of the two exchanges per iteration (partial gradients to one
  worker, the new weights broadcast) and of the client's mini-batch; then FAB's Table 8 rows
  (the paper's figures, and the simulator's FAB-1/FAB-2 model) for comparison.
- ``pbs``: a batch of programmable bootstraps split over k workers: PBS per second.
- ``nn``: one layer of a deep network of Strix Fig. 7 (``--nn nn-20``, ``--nn-layer``: 0 is
  the convolution, 840 ReLU bootstraps) with its neurons split over k workers: seconds and PBS
  per second.

Run on a machine with as many cores as workers (one core per worker, ``--cpus-per-worker``):

    .venv/bin/python scripts/distributed_scaling.py --workers 1,2,4,8 --helr quick --pbs 256

``--helr fab`` trains FAB's shape (N = 2^16 bootstrapping preset, 8 data ciphertexts of 128
images per mini-batch: FAB-2's 1,024): about 15 GB of evaluation keys, held by the client and
by every worker (``--keys-path`` on a shared disk keeps them out of the object store).
``--address auto`` joins an existing Ray cluster instead of starting a local one.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

import basalt
import basalt.distributed as bd
import basalt.helr


def emit(rec):
    print(json.dumps(rec), flush=True)


def helr_client(kind, cts, iterations):
    task = basalt.helr.Task(kind, cts=cts, iterations=iterations)
    if kind == "quick":
        return task, basalt.helr.Client.toy(task)
    ctx = basalt.ckks.Context.preset("FAB", bootstrapping=True, rotations=task.rotations,
                                     log_slots=task.slots.bit_length() - 1)
    return task, basalt.helr.Client(ctx, task)


def run_helr(args, workers):
    task, client = helr_client(args.helr, args.cts, args.iterations)
    keys = client.evaluation_keys()
    if args.keys_path:  # gigabyte-sized keys: a file every worker reads, not the object store
        keys.save(args.keys_path)
        keys = args.keys_path
    for k in workers:
        with bd.CkksCluster(client.ctx.parameters, keys, workers=k,
                            cpus_per_worker=args.cpus_per_worker) as cluster:
            w, stats = bd.train_helr(cluster, task, client)
        model = client.model(w)
        secs = [s["seconds"] for s in stats]
        emit({"bench": "helr", "task": task.kind, "workers": k, "cts_per_batch": task.cts,
              "iterations": len(stats),
              "seconds_per_iteration": statistics.mean(secs),
              "seconds_per_iteration_median": statistics.median(secs),
              "partial_bytes_per_iteration": stats[0]["partial_bytes"],
              "broadcast_bytes_per_iteration": stats[0]["broadcast_bytes"],
              "batch_bytes_per_iteration": stats[0]["batch_bytes"],
              "key_bytes": cluster.key_bytes,
              "accuracy": task.accuracy(model, client.test)})
    rows = list(csv.DictReader(open(Path(__file__).resolve().parent.parent
                                    / "data/papers/fab/table8.csv")))
    for r in rows:
        if r["row"] in ("FAB-1", "FAB-2") and r["metric"] in ("time per iteration",
                                                              "communication per iteration"):
            emit({"bench": "helr", "source": "FAB Table 8 (paper)", "row": r["row"],
                  "metric": r["metric"], "seconds": float(r["value"])})
    for r in basalt.sim.reproduce("fab")["rows"]:
        if str(r.get("table")) == "8" and r.get("row") in ("FAB-1", "FAB-2") \
                and r.get("metric") in ("time per iteration", "communication per iteration") \
                and r.get("ours") is not None:
            emit({"bench": "helr", "source": "basalt sim (FAB model)", "row": r["row"],
                  "metric": r["metric"], "seconds": r["ours"]})


def run_pbs(args, workers):
    ctx = basalt.tfhe.Context(args.tfhe_set, allow_insecure=args.allow_insecure)
    p = ctx.plaintext_modulus
    cts = [ctx.encrypt(m % p).to_bytes() for m in range(args.pbs)]
    table = ctx.table(lambda m: (m * m + 1) % p)
    for k in workers:
        with bd.TfheCluster(ctx, workers=k, cpus_per_worker=args.cpus_per_worker,
                            allow_insecure=args.allow_insecure) as cluster:
            cluster.apply_batch(cts[:k], table)  # warm-up: every worker's key in memory
            t0 = time.perf_counter()
            out = cluster.apply_batch(cts, table)
            dt = time.perf_counter() - t0
        ok = all(ctx.decrypt(ctx.ciphertext_from_bytes(b)) == (m % p * (m % p) + 1) % p
                 for m, b in enumerate(out))
        emit({"bench": "pbs", "set": args.tfhe_set, "workers": k,
              "threads_per_worker": args.cpus_per_worker, "pbs": len(cts), "seconds": dt,
              "pbs_per_second": len(cts) / dt, "correct": ok})


def run_nn(args, workers):
    name, layer = args.nn, args.nn_layer
    ctx = basalt.tfhe.Context(args.nn_set)
    image, _ = basalt._basalt.tfhe_nn_test_image(0)
    acts = [image] + basalt._basalt.tfhe_nn_plain(name, image)
    p = ctx.plaintext_modulus
    inputs = [ctx.encrypt(v % p).to_bytes() for v in acts[layer]]
    outputs = bd.nn_layers(name)[layer][1]
    for k in workers:
        with bd.TfheCluster(ctx, workers=k, cpus_per_worker=args.cpus_per_worker) as cluster:
            cluster.apply_batch(inputs[:k], list(range(p)))  # warm-up
            t0 = time.perf_counter()
            out = cluster.nn_layer(name, layer, inputs)
            dt = time.perf_counter() - t0
        relu = layer + 1 < len(bd.nn_layers(name))
        ok = not relu or [ctx.decrypt(ctx.ciphertext_from_bytes(b)) for b in out] == \
            [v % p for v in acts[layer + 1]]
        emit({"bench": "nn", "network": name, "layer": layer, "set": args.nn_set,
              "workers": k, "threads_per_worker": args.cpus_per_worker, "neurons": outputs,
              "seconds": dt, "pbs_per_second": outputs / dt if relu else None,
              "agrees_with_plaintext": ok})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--cpus-per-worker", type=int, default=1)
    ap.add_argument("--helr", choices=["quick", "fab", "none"], default="quick")
    ap.add_argument("--cts", type=int, default=8, help="data ciphertexts per mini-batch")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--keys-path", default=None,
                    help="save the HELR evaluation keys here; workers load them from this path")
    ap.add_argument("--pbs", type=int, default=128, help="PBS in the batch (0: skip)")
    ap.add_argument("--tfhe-set", default="TFHERS_2_2_KS_PBS")
    ap.add_argument("--allow-insecure", action="store_true")
    ap.add_argument("--nn", default=None, help="a network (nn-20, nn-50, nn-100) to split")
    ap.add_argument("--nn-layer", type=int, default=0)
    ap.add_argument("--nn-set", default="NN_N1024")
    ap.add_argument("--address", default=None, help="an existing Ray cluster ('auto')")
    args = ap.parse_args()
    workers = [int(k) for k in args.workers.split(",")]
    need = max(workers) * args.cpus_per_worker
    ray = bd.init(args.address, num_cpus=None if args.address else need)
    emit({"bench": "setup", "ray": ray.__version__, "cluster_cpus":
          ray.cluster_resources().get("CPU"), "basalt": basalt.__version__})
    if args.helr != "none":
        run_helr(args, workers)
    if args.pbs:
        run_pbs(args, workers)
    if args.nn:
        run_nn(args, workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
