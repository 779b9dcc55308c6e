"""CKKS bootstrapping for numpy users: refresh a ciphertext that has run out of levels.

>>> import numpy as np, basalt
>>> ctx = basalt.bootstrap.Context.toy_insecure(log_n=10, log_slots=4)
>>> x = np.exp(2j * np.pi * np.arange(16) / 16) / 2
>>> ct = ctx.encrypt(x)                 # at level 0: no product possible
>>> fresh = ctx.bootstrap(ct)
>>> fresh.level == ctx.output_level > 0
True
>>> bool(np.abs(ctx.decrypt(fresh) - x).max() < 1e-4)
True
"""

from __future__ import annotations

import numpy as np

from . import _basalt


class Context:
    """Keys, evaluator and the bootstrapping circuit of one parameter set."""

    __slots__ = ("_c",)

    def __init__(self, raw):
        self._c = raw

    @classmethod
    def preset(cls, name: str, *, log_slots=None, seeded_keys=False, symbolic=False,
               allow_insecure=False) -> "Context":
        """The circuit of a preset that has one (``N16QP1546H192H32``, ``FAB``,
        ``OSIRIS_SET_III_BOOT``, ``CRATERLAKE_80_BOOT``…). At N = 2^16 a real context makes
        several GB of keys (half with ``seeded_keys``) and takes minutes. A ``symbolic`` one
        (trace mode) is built at once: bootstrap `encrypt_symbolic()` inside `basalt.sim.record`
        to get the circuit's kernel stream for the accelerator models. A preset estimated below
        128-bit security raises unless ``allow_insecure=True``."""
        return cls(_basalt.BootstrapContext.preset(name, log_slots, seeded_keys, symbolic,
                                                   allow_insecure))

    @classmethod
    def toy_insecure(cls, *, log_n=11, log_slots=None, residual_levels=2,
                     symbolic=False) -> "Context":
        """A small, INSECURE ring with Lattigo's chain shape, for experiments and tests."""
        return cls(_basalt.BootstrapContext.toy_insecure(log_n, log_slots, residual_levels,
                                                         symbolic))

    slots = property(lambda self: self._c.slots, doc="Slots of the circuit.")
    output_level = property(lambda self: self._c.output_level,
                            doc="Level of a bootstrapped ciphertext.")

    def levels(self) -> dict:
        """Levels consumed by CoeffToSlot, EvalMod, SlotToCoeff, and the output level."""
        return dict(self._c.levels())

    symbolic = property(lambda self: self._c.symbolic, doc="True in trace mode (no secret).")

    def encrypt_symbolic(self, *, level=None):
        """A shape-only input (symbolic contexts only), as `encrypt` would give."""
        return self._c.encrypt_symbolic(level)

    def encrypt(self, values, *, level=None):
        """Encrypt up to ``slots`` complex values (by default at the base level, which needs
        bootstrapping: 0 unless the preset splits ``q_0`` over several primes)."""
        v = np.ascontiguousarray(np.asarray(values, dtype=np.complex128))
        return self._c.encrypt(v, level)

    def decrypt(self, ct) -> np.ndarray:
        return self._c.decrypt(ct)

    def bootstrap(self, ct):
        """Refresh ``ct`` to :attr:`output_level`, same slots and scale."""
        return self._c.bootstrap(ct)

    def mul(self, a, b):
        """Relinearised, rescaled product."""
        return self._c.mul(a, b)
