"""Client and server as two OS processes exchanging files.

The client makes the keys, sends the parameters and the evaluation keys (no secret) and an
encrypted vector; the server, a separate process that never sees the secret, computes
``p(rotate(x, 1) + x)`` with a bootstrap in between, where p is a polynomial evaluated by the
Chebyshev evaluator, and writes the result; the client decrypts it and checks it against numpy.

    python examples/client_server.py                 # toy ring (seconds)
    python examples/client_server.py --preset N16QP1546H192H32 --seeded

prints the size of every object sent and the wall time of each step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def poly(x):
    return 0.5 * x * x - 0.25 * x + 0.125


def client(args, work: str) -> int:
    import basalt

    t = time.time()
    if args.preset:
        # Keys made once, in the form sent (seeded or full).
        ctx = basalt.ckks.Context.preset(args.preset, rotations=[1], bootstrapping=True,
                                         log_slots=args.log_slots, seeded_keys=args.seeded)
    else:
        ctx = basalt.ckks.Context.toy_bootstrappable(log_n=args.log_n, log_slots=args.log_slots,
                                                     rotations=[1])
    keys = ctx.evaluation_keys(rotations=[1], seeded=args.seeded)
    sizes, times = {}, {"keygen_s": time.time() - t}

    def send(name, data):
        with open(os.path.join(work, name), "wb") as f:
            f.write(data)
        sizes[name] = len(data)

    send("params.json", ctx.parameters.to_json().encode())
    send("evaluation_keys.bin", keys.to_bytes())
    slots = 2 ** args.log_slots
    rng = np.random.default_rng(1)
    x = rng.uniform(-0.5, 0.5, slots)
    # At the bootstrapping input level and scale: the server refreshes it before computing.
    send("input.ct", ctx.encrypt(x, level=0).to_bytes())

    t = time.time()
    server = subprocess.run([sys.executable, __file__, "--role", "server", "--work", work],
                            capture_output=True, text=True)
    times["server_process_s"] = time.time() - t
    if server.returncode != 0:
        print(server.stdout, server.stderr, file=sys.stderr)
        return 1
    report = json.loads(server.stdout)
    with open(os.path.join(work, "result.ct"), "rb") as f:
        data = f.read()
    sizes["result.ct"] = len(data)
    got = ctx.decrypt(ctx.ciphertext_from_bytes(data)).real
    want = poly(np.roll(x, -1) + x)
    err = float(np.abs(got - want).max())
    print(json.dumps({"bytes": sizes, "client": times, "server": report,
                      "max_error": err}, indent=1))
    if err > 1e-2:
        print(f"FAILED: max error {err}", file=sys.stderr)
        return 1
    return 0


def server(work: str) -> int:
    import basalt

    t = time.time()
    with open(os.path.join(work, "params.json")) as f:
        params = basalt.ckks.Parameters.from_json(f.read())
    keys = basalt.ckks.EvaluationKeys.load(params, os.path.join(work, "evaluation_keys.bin"),
                                           rotations=[1])
    srv = basalt.ckks.Server(params, keys)
    load_s = time.time() - t
    # The server process holds no secret: no decryption, no secret-key object.
    assert not hasattr(srv, "decrypt") and not hasattr(srv._c, "decrypt")
    with open(os.path.join(work, "input.ct"), "rb") as f:
        ct = srv.ciphertext_from_bytes(f.read())
    t = time.time()
    fresh = srv.bootstrap(ct)
    s = fresh + fresh.rotate(1)
    out = srv.evaluate(s, poly, interval=(-1.0, 1.0), degree=2)
    compute_s = time.time() - t
    with open(os.path.join(work, "result.ct"), "wb") as f:
        f.write(out.to_bytes())
    print(json.dumps({"load_keys_s": load_s, "compute_s": compute_s,
                      "key_id": srv.key_id, "rotations": srv.rotations}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--role", choices=["client", "server"], default="client")
    ap.add_argument("--work", help="folder the two processes exchange files in")
    ap.add_argument("--preset", help="a bootstrappable preset (default: a toy ring)")
    ap.add_argument("--log-n", type=int, default=10)
    ap.add_argument("--log-slots", type=int, default=3)
    ap.add_argument("--seeded", action="store_true", help="send seeded keys (half the bytes)")
    args = ap.parse_args()
    if args.role == "server":
        return server(args.work)
    if args.work:
        return client(args, args.work)
    with tempfile.TemporaryDirectory() as work:
        return client(args, work)


if __name__ == "__main__":
    sys.exit(main())
