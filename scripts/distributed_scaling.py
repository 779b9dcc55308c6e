#!/usr/bin/env python3
"""Scaling of basalt.distributed on a Ray cluster, as JSON lines (one record per measurement).

- ``helr``: FAB-2's data-parallel HELR training (FAB §4.9) with k workers, each holding only
  the keys of its role (the bootstrapping keys and circuit on worker 0, which sums, updates
  and bootstraps; the relinearisation key and the gradient's rotations on the others): seconds
  per iteration (server side), bytes of the two exchanges per iteration (partial gradients to
  one worker, the new weights broadcast) and of the client's mini-batch, the peak memory of
  every process (client and workers) beside what the key-size API predicts for each role;
  then FAB's Table 8 rows (the paper's figures, and the simulator's FAB-1/FAB-2 model).
- ``pbs``: a batch of programmable bootstraps split over k workers: PBS per second.
- ``nn``: one layer of a deep network of Strix Fig. 7 (``--nn nn-20``, ``--nn-layer``: 0 is
  the convolution, 840 ReLU bootstraps) with its neurons split over k workers: seconds and PBS
  per second.

Run on a machine with as many cores as workers (one core per worker, ``--cpus-per-worker``):

    .venv/bin/python scripts/distributed_scaling.py --workers 1,2,4,8 --helr quick --pbs 256

``--helr quick`` trains on the toy ring (N = 2^10), ``--helr mid`` the same task on a toy
bootstrapping ring of N = 2^14 (``--mid-log-n``), ``--helr fab`` FAB's shape on a 2^16
bootstrapping preset (``--preset``, default ``FAB``): 8 data ciphertexts of 128 images per
mini-batch (FAB-2's 1,024). The client generates the keys seeded (half the bytes), writes
them one file per key to ``--keys-dir`` (default: a temporary directory), frees its own copy,
and each worker loads its role's files. ``--address auto`` joins an existing Ray cluster
instead of starting a local one. ``--roles-only`` prints what each role holds at ``--preset``
without generating a key.
"""

from __future__ import annotations

import argparse
import csv
import gc
import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import basalt
import basalt.distributed as bd
import basalt.helr


def emit(rec):
    print(json.dumps(rec), flush=True)


def helr_client(args):
    """The task, its client and the keys the servers need (seeded at N = 2^16, so that the
    client holds them at half size while it writes them)."""
    task = basalt.helr.Task(args.helr if args.helr != "mid" else "quick", cts=args.cts,
                            iterations=args.iterations)
    log_slots = task.slots.bit_length() - 1
    if args.helr == "quick":
        client = basalt.helr.Client.toy(task)
        seeded = False
    elif args.helr == "mid":
        ctx = basalt.ckks.Context.toy_bootstrappable(log_n=args.mid_log_n, log_slots=log_slots,
                                                     residual_levels=5,
                                                     rotations=task.rotations)
        # This ring's contexts hold full keys: free them, then make the servers' seeded.
        ctx.drop_evaluation_keys()
        client = basalt.helr.Client(ctx, task)
        return task, client, ctx.evaluation_keys(rotations=task.rotations, seeded=True)
    else:
        ctx = basalt.ckks.Context.preset(args.preset, bootstrapping=True,
                                         rotations=task.rotations, seeded_keys=True,
                                         log_slots=log_slots)
        client, seeded = basalt.helr.Client(ctx, task), True
    # The keys the context made for itself (relinearisation, the task's rotations, the
    # circuit's rotations, conjugation and bootstrapping keys): not generated again.
    keys = client.ctx.evaluation_keys(rotations=task.rotations, seeded=seeded)
    return task, client, keys


def run_helr(args, workers):
    t0 = time.perf_counter()
    task, client, keys = helr_client(args)
    params = client.ctx.parameters
    keygen_s = time.perf_counter() - t0
    keys_dir = args.keys_dir or tempfile.mkdtemp(prefix="basalt-helr-keys-")
    files = bd.save_keys(params, keys, keys_dir)
    del keys
    client.ctx.drop_evaluation_keys()  # the workers load theirs from the files
    gc.collect()
    client_keygen = bd.process_memory()
    roles = bd.helr_role_memory(task, params=params)
    emit({"bench": "helr-roles", "source": "key-size API (no key generated)", **roles})
    emit({"bench": "helr-client", "preset": client.ctx.name, "keygen_seconds": keygen_s,
          "key_files_bytes": files.size_bytes(params), "keys_dir": keys_dir,
          "peak_rss_bytes_through_keygen": client_keygen["peak_rss_bytes"],
          "rss_bytes_after_drop": client_keygen["rss_bytes"]})
    plan = inputs = first = None
    for k in workers:
        with bd.CkksCluster(params, bd.helr_keys(params, files, task, k), workers=k,
                            cpus_per_worker=args.cpus_per_worker) as cluster:
            if inputs is None:  # one encryption of every input: the runs must agree bit for bit
                plan = cluster.helr_schedule(task)
                inputs = basalt.helr.encrypt_inputs(client, plan)
            w, stats = bd.train_helr(cluster, task, inputs, plan=plan)
            mem = cluster.memory()
            infos = cluster.infos
        first = w if first is None else first
        model = client.model(w)
        secs = [s["seconds"] for s in stats]
        emit({"bench": "helr", "task": task.kind, "preset": client.ctx.name, "workers": k,
              "cts_per_batch": task.cts, "iterations": len(stats),
              "seconds_per_iteration": statistics.mean(secs),
              "seconds_per_iteration_median": statistics.median(secs),
              "partial_bytes_per_iteration": stats[0]["partial_bytes"],
              "broadcast_bytes_per_iteration": stats[0]["broadcast_bytes"],
              "batch_bytes_per_iteration": stats[0]["batch_bytes"],
              "accuracy": task.accuracy(model, client.test),
              "model_sha256": hashlib.sha256(w).hexdigest(),
              "bit_identical_to_the_run_with_workers": [workers[0], w == first],
              "client_peak_rss_bytes": bd.process_memory()["peak_rss_bytes"],
              "processes": [{"worker": j, "role": "update" if info["bootstraps"] else
                             "gradient", "key_file_bytes": info["key_bytes"],
                             "rotation_keys": info["rotations"],
                             "peak_rss_bytes": m["peak_rss_bytes"]}
                            for j, (info, m) in enumerate(zip(infos, mem))]})
    if not args.keys_dir:
        shutil.rmtree(keys_dir, ignore_errors=True)
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
    ap.add_argument("--helr", choices=["quick", "mid", "fab", "none"], default="quick")
    ap.add_argument("--preset", default="FAB",
                    help="bootstrapping preset of --helr fab and --roles-only")
    ap.add_argument("--mid-log-n", type=int, default=14, help="ring of --helr mid")
    ap.add_argument("--cts", type=int, default=8, help="data ciphertexts per mini-batch")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--keys-dir", default=None,
                    help="write the HELR keys here, one file per key (kept); workers read "
                         "their role's files from it (a path every node reads)")
    ap.add_argument("--roles-only", action="store_true",
                    help="print the key and circuit bytes of each HELR role at --preset "
                         "(FAB's task shape) without generating keys, and stop")
    ap.add_argument("--object-store-mb", type=int, default=1024,
                    help="Ray's object store of a local cluster (ciphertexts only)")
    ap.add_argument("--pbs", type=int, default=128, help="PBS in the batch (0: skip)")
    ap.add_argument("--tfhe-set", default="TFHERS_2_2_KS_PBS")
    ap.add_argument("--allow-insecure", action="store_true")
    ap.add_argument("--nn", default=None, help="a network (nn-20, nn-50, nn-100) to split")
    ap.add_argument("--nn-layer", type=int, default=0)
    ap.add_argument("--nn-set", default="NN_N1024")
    ap.add_argument("--address", default=None, help="an existing Ray cluster ('auto')")
    args = ap.parse_args()
    if args.roles_only:
        task = basalt.helr.Task("fab", cts=args.cts)
        emit({"bench": "helr-roles", "source": "key-size API (no key generated)",
              **bd.helr_role_memory(task, preset=args.preset)})
        return 0
    workers = [int(k) for k in args.workers.split(",")]
    need = max(workers) * args.cpus_per_worker
    ray = bd.init(args.address, num_cpus=None if args.address else need,
                  object_store_memory=None if args.address else args.object_store_mb * 2**20)
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
