"""The server process holds no secret: its whole memory is searched for the client's secret key.

A server is started as its own OS process from the parameters and the evaluation keys (files,
as a deployment sends them); it computes, then waits while the test reads every readable
mapping of its memory (``/proc/PID/mem``) and looks for 64-byte windows of the secret key's
residues, in the layout the library keeps them (the exported key holds its coefficients, two
bits each; ``CkksParameters._secret_key_residues`` turns it into those ``u64`` words).
A control process that does hold a secret key is searched the same way and must be found, so a
search that reads nothing cannot pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import basalt

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/maps"),
                                reason="needs Linux's /proc/PID/mem")

SERVER = textwrap.dedent("""
    import sys, basalt, numpy as np
    work = sys.argv[1]
    params = basalt.ckks.Parameters.from_json(open(work + "/params.json").read())
    keys = basalt.ckks.EvaluationKeys.load(params, work + "/keys.bin")
    server = basalt.ckks.Server(params, keys)
    ct = server.ciphertext_from_bytes(open(work + "/x.ct", "rb").read())
    out = ((ct.rotate(1) + ct) * ct).rescale().to_bytes()
    open(work + "/y.ct", "wb").write(out)
    print("ready", flush=True)
    sys.stdin.readline()
""")

CONTROL = textwrap.dedent("""
    import sys, basalt
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    sk = ctx.export_secret_key()
    open(sys.argv[1] + "/control.sk", "wb").write(sk)
    open(sys.argv[1] + "/control.json", "w").write(ctx.parameters.to_json())
    del sk
    print("ready", flush=True)
    sys.stdin.readline()
""")


def windows(params, exported: bytes, count: int = 16, width: int = 64) -> list[bytes]:
    """`count` windows of the residues of the secret key ``exported`` for ``params``, spread
    over them."""
    residues = params._p._secret_key_residues(exported)
    starts = np.linspace(len(residues) // 4, len(residues) - width - 8, count).astype(int)
    return [residues[s - s % 8: s - s % 8 + width] for s in starts]


def found(pid: int, patterns: list[bytes]) -> int:
    """How many of `patterns` occur somewhere in the writable memory of process `pid`."""
    hits = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            lo, hi, perms = int(m[1], 16), int(m[2], 16), m[3]
            # Data lives in writable mappings (heap, anonymous, stacks); code and read-only
            # file mappings cannot hold a key made at run time.
            if not perms.startswith("rw") or "[vvar" in line or hi - lo > 1 << 31:
                continue
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, ValueError, OverflowError):
                continue
            hits.update(i for i, p in enumerate(patterns) if p in data)
    return len(hits)


def start(script: str, *args: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.strip() == "ready", p.stderr.read()
    return p


def stop(p: subprocess.Popen) -> None:
    p.communicate("\n", timeout=60)


def test_server_process_memory_holds_no_secret_key(tmp_path):
    client = basalt.ckks.Context.toy_insecure(log_n=10, levels=2, rotations=[1])
    (tmp_path / "params.json").write_text(client.parameters.to_json())
    client.evaluation_keys(rotations=[1]).save(str(tmp_path / "keys.bin"))
    x = np.linspace(-0.5, 0.5, client.slots)
    (tmp_path / "x.ct").write_bytes(client.encrypt(x).to_bytes())
    secret = windows(client.parameters, client.export_secret_key())

    server = start(SERVER, str(tmp_path))
    try:
        in_server = found(server.pid, secret)
    finally:
        stop(server)
    # The server computed for real: the client decrypts its answer.
    y = client.decrypt(client.ciphertext_from_bytes((tmp_path / "y.ct").read_bytes())).real
    assert np.allclose(y, (np.roll(x, -1) + x) * x, atol=1e-3)

    control = start(CONTROL, str(tmp_path))
    try:
        params = basalt.ckks.Parameters.from_json((tmp_path / "control.json").read_text())
        in_control = found(control.pid, windows(params, (tmp_path / "control.sk").read_bytes()))
    finally:
        stop(control)
    assert in_control > 0, "the search found the secret in no process: it reads nothing"
    assert in_server == 0, f"{in_server} of {len(secret)} secret-key windows in the server"
