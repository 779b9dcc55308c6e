"""HELR training under encryption, step by step (FAB §7 and §4.9; HELR, Han et al.).

The data owner (a `basalt.ckks.Context`, the only holder of the secret) encrypts the weights
and each iteration's mini-batch at the level the schedule reads them; a `basalt.ckks.Server`
runs the iterations: the encrypted gradient of every data ciphertext at the weights, summed,
Nesterov's update, and a bootstrap of both weight vectors when the levels run out. The data
owner decrypts the model at the end.

An iteration is computed as FAB-2 splits it over its FPGAs: the mini-batch cut into
``shares`` contiguous shares, the partial gradient of each share, the partials summed in
share order and the update (with its bootstrap) on one node. :func:`train` runs every piece in
this process; :mod:`basalt.distributed` runs the partial gradients on a cluster's workers and
gives the same bytes.

>>> import numpy as np, basalt
>>> task = basalt.helr.Task("quick", iterations=2)
>>> client = basalt.helr.Client.toy(task)                     # insecure toy ring, N = 2^10
>>> server = basalt.ckks.Server(client.ctx.parameters, client.evaluation_keys())
>>> w = basalt.helr.train(server, task, client)               # bytes of the encrypted model
>>> model = client.model(w)
>>> twin = task.train_plain(client.batches[:2])
>>> bool(np.abs(model - twin).max() < 1e-2)
True
"""

from __future__ import annotations

import numpy as np

from . import _basalt
from .ckks import BasaltError, Context, Server

__all__ = ["Task", "Client", "train", "schedule", "shares"]


class Task:
    """A HELR training task: ``"quick"`` (4×4 digits, 512-slot ciphertexts of 16 samples, 2
    data ciphertexts per mini-batch, 10 iterations) or ``"fab"`` (FAB's shape: 14×14 digits,
    2^15 slots of 128 samples, 30 iterations); ``cts`` sets the data ciphertexts per
    mini-batch (FAB-2's 1,024 images are 8), ``iterations`` the iteration count. Pickles by
    its description."""

    __slots__ = ("_t", "_spec")

    def __init__(self, kind="quick", *, cts=None, iterations=None):
        self._spec = (str(kind), None if cts is None else int(cts),
                      None if iterations is None else int(iterations))
        self._t = _basalt.HelrTask(*self._spec)

    kind = property(lambda self: self._t.kind)
    cts = property(lambda self: self._t.cts, doc="Data ciphertexts per mini-batch.")
    iterations = property(lambda self: self._t.iterations)
    slots = property(lambda self: self._t.slots, doc="Slots of every ciphertext.")
    block = property(lambda self: self._t.block, doc="Slots of one sample.")
    rotations = property(lambda self: self._t.rotations,
                         doc="Rotation steps of an iteration (conjugation is needed too).")

    def data(self):
        """``(batches, test)``: ``batches[b][c]`` the slots of data ciphertext ``c`` of
        mini-batch ``b`` (label-folded samples, zero-padded); ``test`` a list of (features,
        label ±1)."""
        return self._t.data()

    def train_plain(self, batches) -> np.ndarray:
        """The cleartext twin: one NAG iteration per mini-batch of ``batches`` (the same
        sigmoid and constants)."""
        return np.asarray(self._t.train_plain([[list(map(float, c)) for c in b]
                                                for b in batches]))

    def accuracy(self, w, test) -> float:
        return self._t.accuracy([float(x) for x in w], test)

    def __reduce__(self):
        k, c, i = self._spec
        return (_task, (k, c, i))

    def __repr__(self):
        return repr(self._t)


def _task(kind, cts, iterations):
    return Task(kind, cts=cts, iterations=iterations)


def schedule(server: Server, task: Task) -> list:
    """The iterations as ``(level, refresh)`` pairs, from the bootstrap's output level: the
    level the weights and the mini-batch enter at, and whether the weights are bootstrapped
    after it."""
    if not server.can_bootstrap:
        raise BasaltError("HELR training needs a server that bootstraps")
    return task._t.schedule(server._c, server.bootstrap_output_level)


def shares(n: int, k: int) -> list:
    """The contiguous shares ``(start, end)`` of ``n`` data ciphertexts over ``k`` workers."""
    return _basalt.helr_shares(int(n), int(k))


class Client:
    """The data owner's side: the client context (secret key), the task's mini-batches and
    test split. It encrypts, and decrypts the model; it never runs an iteration."""

    def __init__(self, ctx: Context, task: Task):
        if not isinstance(ctx, Context) or not ctx.can_bootstrap:
            raise BasaltError("a HELR client needs a basalt.ckks.Context that bootstraps")
        if ctx.slots < task.slots:
            raise BasaltError(f"the context packs {ctx.slots} slots; the task needs {task.slots}")
        self.ctx = ctx
        self.task = task
        self.batches, self.test = task.data()

    @classmethod
    def toy(cls, task: Task) -> "Client":
        """On the insecure toy ring that bootstraps (N = 2^10, five levels after a bootstrap:
        FAB's one bootstrap per iteration), with the task's rotation keys."""
        log_slots = task.slots.bit_length() - 1
        ctx = Context.toy_bootstrappable(log_n=log_slots + 1, log_slots=log_slots,
                                         residual_levels=5, rotations=task.rotations)
        return cls(ctx, task)

    def evaluation_keys(self):
        """What a server needs: relinearisation, the task's rotations, conjugation and the
        bootstrapping keys. No secret."""
        return self.ctx.evaluation_keys(rotations=self.task.rotations, conjugate=True)

    boot_scale = property(lambda self: self.ctx.bootstrap_input_scale,
                          doc="Largest scale the bootstrap takes.")

    def start(self, level: int):
        """Zero weights ``(v, w)`` encrypted at ``level``, as bytes; and their scale (the
        working scale a bootstrap's output is raised towards)."""
        zero = np.zeros(self.task.slots)
        v = self.ctx.encrypt(zero, level=int(level))
        w = self.ctx.encrypt(zero, level=int(level))
        return v.to_bytes(), w.to_bytes(), v.scale

    def batch(self, i: int, level: int) -> list:
        """Iteration ``i``'s mini-batch (cycling over the set), encrypted at ``level``, as
        bytes."""
        b = self.batches[i % len(self.batches)]
        return [self.ctx.encrypt(np.asarray(c), level=int(level)).to_bytes() for c in b]

    def model(self, w: bytes) -> np.ndarray:
        """The decrypted model: the first sample block of ``w``."""
        return self.ctx.decrypt(self.ctx.ciphertext_from_bytes(w)).real[:self.task.block]


def _inputs(client, plan):
    """``(v, w, working, batch(i) -> list of bytes, boot_scale)`` from a `Client`, or from a
    dict of ready-made encrypted inputs (``v``, ``w``, ``working``, ``batches``,
    ``boot_scale``)."""
    if isinstance(client, dict):
        return (client["v"], client["w"], client["working"],
                lambda i: client["batches"][i], client["boot_scale"])
    v, w, working = client.start(plan[0][0])
    return v, w, working, (lambda i: client.batch(i, plan[i][0])), client.boot_scale


def train(server: Server, task: Task, client, *, shares: int = 1, plan=None) -> bytes:
    """Train in this process: every iteration on ``server`` with its mini-batch cut into
    ``shares`` (FAB-2's split; the bytes do not depend on it). ``client`` is a `Client`, or a
    dict of encrypted inputs (see :func:`encrypt_inputs`). Returns the encrypted model ``w``
    as bytes."""
    plan = schedule(server, task) if plan is None else plan
    v, w, working, batch, boot_scale = _inputs(client, plan)
    v, w = server.ciphertext_from_bytes(v), server.ciphertext_from_bytes(w)
    for i, it in enumerate(plan):
        cts = [server.ciphertext_from_bytes(b)._live() for b in batch(i)]
        rv, rw = _basalt.helr_step(server._c, task._t, tuple(it), cts, int(shares),
                                   (v._live(), w._live()), (float(boot_scale), float(working)))
        v, w = v._wrap(rv), w._wrap(rw)
    return w.to_bytes()


def encrypt_inputs(client: Client, plan) -> dict:
    """Every input of a run encrypted once (weights and each iteration's mini-batch), so two
    runs can be fed the same ciphertexts: ``{"v", "w", "working", "batches", "boot_scale"}``."""
    v, w, working = client.start(plan[0][0])
    return {"v": v, "w": w, "working": working, "boot_scale": client.boot_scale,
            "batches": [client.batch(i, lvl) for i, (lvl, _) in enumerate(plan)]}
