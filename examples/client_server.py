"""Client and server as two OS processes exchanging files.

The client makes the keys, sends the parameters and the evaluation keys (no secret) and an
encrypted vector; the server, a separate process that never sees the secret, computes
``p(rotate(x, 1) + x)`` with a bootstrap in between, where p is a polynomial evaluated by the
Chebyshev evaluator, and writes the result; the client decrypts it and checks it against numpy.

    python examples/client_server.py                 # toy ring (seconds)
    python examples/client_server.py --preset N16QP1546H192H32 --seeded

prints the size of every object sent and the wall time of each step. The role dispatch and the
file exchange are in ``_roles.py`` next to this file.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import _roles


def poly(x):
    return 0.5 * x * x - 0.25 * x + 0.125


def client(args, ex: _roles.Exchange) -> int:
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
    times = {"keygen_s": time.time() - t}

    ex.send("params.json", ctx.parameters.to_json().encode())
    ex.send("evaluation_keys.bin", keys.to_bytes())
    slots = 2 ** args.log_slots
    rng = np.random.default_rng(1)
    x = rng.uniform(-0.5, 0.5, slots)
    # At the bootstrapping input level and scale: the server refreshes it before computing.
    ex.send("input.ct", ctx.encrypt(x, level=0).to_bytes())

    report, times["server_process_s"] = _roles.start_server(__file__, ex)
    if report is None:
        return 1
    got = ctx.decrypt(ctx.ciphertext_from_bytes(ex.receive("result.ct"))).real
    want = poly(np.roll(x, -1) + x)
    err = float(np.abs(got - want).max())
    print(json.dumps({"bytes": ex.sizes, "client": times, "server": report,
                      "max_error": err}, indent=1))
    if err > 1e-2:
        print(f"FAILED: max error {err}", file=sys.stderr)
        return 1
    return 0


def server(ex: _roles.Exchange) -> int:
    import basalt

    t = time.time()
    params = basalt.ckks.Parameters.from_json(ex.receive("params.json").decode())
    keys = basalt.ckks.EvaluationKeys.load(params, ex.path("evaluation_keys.bin"), rotations=[1])
    srv = basalt.ckks.Server(params, keys)
    load_s = time.time() - t
    # The server process holds no secret: no decryption, no secret-key object.
    assert not hasattr(srv, "decrypt") and not hasattr(srv._c, "decrypt")
    ct = srv.ciphertext_from_bytes(ex.receive("input.ct"))
    t = time.time()
    fresh = srv.bootstrap(ct)
    s = fresh + fresh.rotate(1)
    out = srv.evaluate(s, poly, interval=(-1.0, 1.0), degree=2)
    compute_s = time.time() - t
    ex.send("result.ct", out.to_bytes())
    print(json.dumps({"load_keys_s": load_s, "compute_s": compute_s,
                      "key_id": srv.key_id, "rotations": srv.rotations}))
    return 0


def main() -> int:
    ap = _roles.parser(__doc__)
    ap.add_argument("--preset", help="a bootstrappable preset (default: a toy ring)")
    ap.add_argument("--log-n", type=int, default=10)
    ap.add_argument("--log-slots", type=int, default=3)
    ap.add_argument("--seeded", action="store_true", help="send seeded keys (half the bytes)")
    return _roles.run(ap.parse_args(), client, server)


if __name__ == "__main__":
    sys.exit(main())
