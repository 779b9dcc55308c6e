"""What the two-process examples share: the command line that picks the role, the folder the
client and the server exchange files in, and the client starting the server.

An example defines ``client(args, exchange)`` and ``server(exchange)`` and ends with

    ap = _roles.parser(__doc__)      # --role client|server, --work FOLDER
    ap.add_argument(...)             # the example's own options
    return _roles.run(ap.parse_args(), client, server)

Run without ``--work``, the client works in a temporary folder and starts the server on it as a
second process (``--role server --work FOLDER``); the server never sees the secret key.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


class Exchange:
    """The folder the two processes exchange files in; ``sizes`` holds the bytes of every file
    that crossed through it, by name."""

    def __init__(self, work: str):
        self.work = work
        self.sizes: dict[str, int] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.work, name)

    def send(self, name: str, data: bytes) -> None:
        """Write ``data`` as ``name`` for the other process."""
        with open(self.path(name), "wb") as f:
            f.write(data)
        self.sizes[name] = len(data)

    def receive(self, name: str) -> bytes:
        """The bytes the other process wrote as ``name``."""
        with open(self.path(name), "rb") as f:
            data = f.read()
        self.sizes[name] = len(data)
        return data

    def sent(self, name: str) -> None:
        """Count a file written in place (e.g. by a key's own ``save``)."""
        self.sizes[name] = os.path.getsize(self.path(name))


def start_server(script: str, exchange: Exchange):
    """Run ``script`` as the server on the exchange folder, in a second process: its JSON
    report and its wall time in seconds; no report (``None``) if it failed, with its output
    printed to stderr."""
    t = time.time()
    server = subprocess.run([sys.executable, script, "--role", "server", "--work",
                             exchange.work], capture_output=True, text=True)
    seconds = time.time() - t
    if server.returncode != 0:
        print(server.stdout, server.stderr, file=sys.stderr)
        return None, seconds
    return json.loads(server.stdout), seconds


def parser(doc: str) -> argparse.ArgumentParser:
    """The example's command line: its first doc line, ``--role`` and ``--work``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--role", choices=["client", "server"], default="client")
    ap.add_argument("--work", help="folder the two processes exchange files in")
    return ap


def run(args, client, server) -> int:
    """Play the role ``args`` names: the server on ``--work``, or the client on ``--work`` or
    on a temporary folder it removes afterwards."""
    if args.role == "server":
        return server(Exchange(args.work))
    if args.work:
        return client(args, Exchange(args.work))
    with tempfile.TemporaryDirectory() as work:
        return client(args, Exchange(work))
