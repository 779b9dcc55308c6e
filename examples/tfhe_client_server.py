"""TFHE client and server as two OS processes exchanging files.

The client makes the secret key and sends the server key (bootstrapping and key-switching keys,
no secret) and encrypted inputs: small messages, booleans and two 8-bit integers. The server, a
separate process that never sees the secret, loads the key, applies a lookup table to a batch,
a gate, and integer arithmetic and a comparison on the radix integers, and writes the results;
the client decrypts them and checks them against Python.

    python examples/tfhe_client_server.py                      # TFHE-rs's 2+2-bit set
    python examples/tfhe_client_server.py --set STRIX_III      # no radix integers (1-bit digits)

prints the size of every object sent and the wall time of each step. The role dispatch and the
file exchange are in ``_roles.py`` next to this file.
"""

from __future__ import annotations

import json
import os
import sys
import time

import _roles


def square_plus_one(m: int, p: int) -> int:
    return (m * m + 1) % p


def client(args, ex: _roles.Exchange) -> int:
    import basalt

    t = time.time()
    ctx = basalt.tfhe.Context(args.set, allow_insecure=args.allow_insecure)
    times = {"keygen_s": time.time() - t}
    integers = True
    try:
        ctx._integer_client()
    except basalt.BasaltError:
        integers = False  # 1-bit digits or a 32-bit torus: no radix integers on this set

    ex.send("set.json", json.dumps({"set": ctx.name, "allow_insecure": args.allow_insecure,
                                    "integers": integers}).encode())
    t = time.time()
    ctx.server_key().save(ex.path("server.key"))
    ex.sent("server.key")
    times["server_key_write_s"] = time.time() - t
    p = ctx.plaintext_modulus
    msgs = [m % p for m in range(2 * p)]
    for i, m in enumerate(msgs):
        ex.send(f"m{i}.ct", ctx.encrypt(m).to_bytes())
    ex.send("a.ct", ctx.encrypt_bool(True).to_bytes())
    ex.send("b.ct", ctx.encrypt_bool(False).to_bytes())
    x, y = 200, 77
    if integers:
        ex.send("x.ct", basalt.tfhe.Uint8.encrypt(ctx, x).to_bytes())
        ex.send("y.ct", basalt.tfhe.Uint8.encrypt(ctx, y).to_bytes())

    report, times["server_process_s"] = _roles.start_server(__file__, ex)
    if report is None:
        return 1

    def receive(name):
        return ctx.ciphertext_from_bytes(ex.receive(name))

    got = [ctx.decrypt(receive(f"r{i}.ct")) for i in range(len(msgs))]
    checks = {"table": got == [square_plus_one(m, p) for m in msgs],
              "gate": ctx.decrypt_bool(receive("nand.ct")) is True}
    if integers:
        def receive_int(name, cls):
            return ctx.load(cls, ex.receive(name))  # checked against the client's key

        checks["integer"] = ctx.decrypt(receive_int("z.ct", basalt.tfhe.Uint8)) == (x * 3 + y) % 256
        checks["compare"] = ctx.decrypt(receive_int("gt.ct", basalt.tfhe.EncryptedBool)) is (x > y)
    ok = all(checks.values())
    print(json.dumps({"set": ctx.name, "bytes": ex.sizes, "client": times, "server": report,
                      "checks": checks, "ok": ok}, indent=1))
    if not ok:
        print(f"FAILED: {checks}", file=sys.stderr)
        return 1
    return 0


def server(ex: _roles.Exchange) -> int:
    import basalt

    info = json.loads(ex.receive("set.json"))
    name = info["set"]
    t = time.time()
    key = basalt.tfhe.ServerKey.load(name, ex.path("server.key"),
                                     allow_insecure=info["allow_insecure"])
    srv = basalt.tfhe.Server(name, key)
    load_s = time.time() - t
    # The server process holds no secret: no decryption, no client key.
    assert not hasattr(srv, "decrypt") and not hasattr(srv._c, "decrypt")

    def load(fname):
        return srv.ciphertext_from_bytes(ex.receive(fname))

    def write(fname, ct):
        ex.send(fname, ct.to_bytes())

    p = srv.plaintext_modulus
    names = sorted((f for f in os.listdir(ex.work) if f.startswith("m") and f.endswith(".ct")),
                   key=lambda f: int(f[1:-3]))
    t = time.time()
    outs = srv.apply_batch([load(f) for f in names], lambda m: square_plus_one(m, p))
    batch_s = time.time() - t
    for f, ct in zip(names, outs):
        write("r" + f[1:], ct)
    write("nand.ct", srv.gate("nand", load("a.ct"), load("b.ct")))
    report = {"load_key_s": load_s, "batch_s": batch_s, "batch": len(names),
              "key_id": srv.key_id}
    if info["integers"]:
        x = srv.load(basalt.tfhe.Uint8, ex.receive("x.ct"))
        y = srv.load(basalt.tfhe.Uint8, ex.receive("y.ct"))
        t = time.time()
        with srv:
            z = x * 3 + y
            gt = x > y
        report["integer_s"] = time.time() - t
        write("z.ct", z)
        write("gt.ct", gt)
    print(json.dumps(report))
    return 0


def main() -> int:
    ap = _roles.parser(__doc__)
    ap.add_argument("--set", default="TFHERS_2_2_KS_PBS", help="a TFHE parameter set")
    ap.add_argument("--allow-insecure", action="store_true",
                    help="accept a set estimated below 128-bit security (STRIX_I)")
    return _roles.run(ap.parse_args(), client, server)


if __name__ == "__main__":
    sys.exit(main())
