"""TFHE client and server as two OS processes exchanging files.

The client makes the secret key and sends the server key (bootstrapping and key-switching keys,
no secret) and encrypted inputs: small messages, booleans and two 8-bit integers. The server, a
separate process that never sees the secret, loads the key, applies a lookup table to a batch,
a gate, and integer arithmetic and a comparison on the radix integers, and writes the results;
the client decrypts them and checks them against Python.

    python examples/tfhe_client_server.py                      # TFHE-rs's 2+2-bit set
    python examples/tfhe_client_server.py --set STRIX_III      # no radix integers (1-bit digits)

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


def square_plus_one(m: int, p: int) -> int:
    return (m * m + 1) % p


def client(args, work: str) -> int:
    import basalt

    t = time.time()
    ctx = basalt.tfhe.Context(args.set, allow_insecure=args.allow_insecure)
    times = {"keygen_s": time.time() - t}
    sizes = {}
    integers = True
    try:
        ctx._integer_client()
    except basalt.BasaltError:
        integers = False  # 1-bit digits or a 32-bit torus: no radix integers on this set

    def send(name, data):
        with open(os.path.join(work, name), "wb") as f:
            f.write(data)
        sizes[name] = len(data)

    send("set.json", json.dumps({"set": ctx.name, "allow_insecure": args.allow_insecure,
                                 "integers": integers}).encode())
    t = time.time()
    ctx.server_key().save(os.path.join(work, "server.key"))
    sizes["server.key"] = os.path.getsize(os.path.join(work, "server.key"))
    times["server_key_write_s"] = time.time() - t
    p = ctx.plaintext_modulus
    msgs = [m % p for m in range(2 * p)]
    for i, m in enumerate(msgs):
        send(f"m{i}.ct", ctx.encrypt(m).to_bytes())
    send("a.ct", ctx.encrypt_bool(True).to_bytes())
    send("b.ct", ctx.encrypt_bool(False).to_bytes())
    x, y = 200, 77
    if integers:
        send("x.ct", basalt.tfhe.Uint8.encrypt(ctx, x).to_bytes())
        send("y.ct", basalt.tfhe.Uint8.encrypt(ctx, y).to_bytes())

    t = time.time()
    server = subprocess.run([sys.executable, __file__, "--role", "server", "--work", work],
                            capture_output=True, text=True)
    times["server_process_s"] = time.time() - t
    if server.returncode != 0:
        print(server.stdout, server.stderr, file=sys.stderr)
        return 1
    report = json.loads(server.stdout)

    def receive(name):
        with open(os.path.join(work, name), "rb") as f:
            data = f.read()
        sizes[name] = len(data)
        return ctx.ciphertext_from_bytes(data)

    got = [ctx.decrypt(receive(f"r{i}.ct")) for i in range(len(msgs))]
    checks = {"table": got == [square_plus_one(m, p) for m in msgs],
              "gate": ctx.decrypt_bool(receive("nand.ct")) is True}
    if integers:
        def receive_int(name, cls):
            with open(os.path.join(work, name), "rb") as f:
                data = f.read()
            sizes[name] = len(data)
            return ctx.load(cls, data)  # checked against the client's key

        checks["integer"] = ctx.decrypt(receive_int("z.ct", basalt.tfhe.Uint8)) == (x * 3 + y) % 256
        checks["compare"] = ctx.decrypt(receive_int("gt.ct", basalt.tfhe.EncryptedBool)) is (x > y)
    ok = all(checks.values())
    print(json.dumps({"set": ctx.name, "bytes": sizes, "client": times, "server": report,
                      "checks": checks, "ok": ok}, indent=1))
    if not ok:
        print(f"FAILED: {checks}", file=sys.stderr)
        return 1
    return 0


def server(work: str) -> int:
    import basalt

    with open(os.path.join(work, "set.json")) as f:
        info = json.load(f)
    name = info["set"]
    t = time.time()
    key = basalt.tfhe.ServerKey.load(name, os.path.join(work, "server.key"),
                                     allow_insecure=info["allow_insecure"])
    srv = basalt.tfhe.Server(name, key)
    load_s = time.time() - t
    # The server process holds no secret: no decryption, no client key.
    assert not hasattr(srv, "decrypt") and not hasattr(srv._c, "decrypt")

    def load(fname):
        with open(os.path.join(work, fname), "rb") as f:
            return srv.ciphertext_from_bytes(f.read())

    def write(fname, ct):
        with open(os.path.join(work, fname), "wb") as f:
            f.write(ct.to_bytes())

    p = srv.plaintext_modulus
    names = sorted((f for f in os.listdir(work) if f.startswith("m") and f.endswith(".ct")),
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
        with open(os.path.join(work, "x.ct"), "rb") as f:
            x = srv.load(basalt.tfhe.Uint8, f.read())
        with open(os.path.join(work, "y.ct"), "rb") as f:
            y = srv.load(basalt.tfhe.Uint8, f.read())
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--role", choices=["client", "server"], default="client")
    ap.add_argument("--work", help="folder the two processes exchange files in")
    ap.add_argument("--set", default="TFHERS_2_2_KS_PBS", help="a TFHE parameter set")
    ap.add_argument("--allow-insecure", action="store_true",
                    help="accept a set estimated below 128-bit security (STRIX_I)")
    args = ap.parse_args()
    if args.role == "server":
        return server(args.work)
    if args.work:
        return client(args, args.work)
    with tempfile.TemporaryDirectory() as work:
        return client(args, work)


if __name__ == "__main__":
    sys.exit(main())
