"""TFHE for Python users: encrypt small integers, apply any function by programmable
bootstrapping, decrypt.

>>> import basalt
>>> ctx = basalt.tfhe.Context("TFHERS_2_2_KS_PBS")
>>> ctx.decrypt(ctx.apply(ctx.encrypt(3), lambda m: (m * m) % ctx.plaintext_modulus))
9
>>> ctx.decrypt_bool(ctx.gate("and", ctx.encrypt_bool(True), ctx.encrypt_bool(False)))
False

Booleans (`Bool`, gate encoding) and integers (`Ciphertext`) are distinct types: a gate on
integers or a table on a boolean is refused.
"""

from __future__ import annotations

import numpy as np

from . import _basalt
from .integer import *  # noqa: F401,F403  (Uint8 … Int64, IntegerClient, IntegerServer)

BasaltError = _basalt.BasaltError


def _integer(x, what):
    """An exact integer: a float, a string or a bool is refused rather than truncated."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise BasaltError(f"{what} must be an integer, got {x!r} ({type(x).__name__})")
    return int(x)


class Ciphertext:
    """An encrypted integer bound to its context."""

    __slots__ = ("_ctx", "_raw")

    def __init__(self, ctx: "Context", raw):
        self._ctx = ctx
        self._raw = raw

    def to_bytes(self) -> bytes:
        return self._ctx._c.ciphertext_to_bytes(self._raw)


class Bool(Ciphertext):
    """An encrypted boolean (gate encoding): the operand of `Context.gate`."""

    __slots__ = ()


class Context:
    """Client and server keys of one parameter set (`basalt.tfhe.presets()`)."""

    def __init__(self, name: str = "TFHERS_2_2_KS_PBS", *, allow_insecure: bool = False):
        self._c = _basalt.TfheContext(name, allow_insecure)

    plaintext_modulus = property(lambda self: self._c.plaintext_modulus,
                                 doc="Messages are integers in range(plaintext_modulus).")
    message_modulus = property(lambda self: self._c.message_modulus)
    name = property(lambda self: self._c.name)

    key_id = property(lambda self: self._c.key_id, doc="Identity of the key (hex).")

    def encrypt(self, m: int) -> Ciphertext:
        return Ciphertext(self, self._c.encrypt(_integer(m, "the message")))

    def decrypt(self, ct: Ciphertext) -> int:
        self._own(ct, Ciphertext)
        return self._c.decrypt(ct._raw)

    def table(self, f) -> list:
        """`f` evaluated on every message: the lookup table a bootstrap applies."""
        t = [_integer(f(m), f"f({m})") for m in range(self.plaintext_modulus)]
        bad = [(m, v) for m, v in enumerate(t) if not 0 <= v < self.plaintext_modulus]
        if bad:
            m, v = bad[0]
            raise BasaltError(f"f({m}) = {v} is outside the message space 0..{self.plaintext_modulus}")
        return t

    def apply(self, ct: Ciphertext, f) -> Ciphertext:
        """One programmable bootstrap computing f(m) (f is evaluated on all messages here)."""
        self._own(ct, Ciphertext)
        return Ciphertext(self, self._c.apply_table(ct._raw, self.table(f)))

    def apply_batch(self, cts, f) -> list:
        """f on every ciphertext, batched (Strix's two-level batching) over the cores."""
        cts = list(cts)  # a generator is consumed once: read it here
        for c in cts:
            self._own(c, Ciphertext)
        raws = self._c.apply_table_batch([c._raw for c in cts], self.table(f))
        return [Ciphertext(self, r) for r in raws]

    def gate(self, name: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """Boolean gate ('nand', 'and', 'or', 'xor') on encrypted booleans."""
        self._own(a, Bool)
        self._own(b, Bool)
        return Bool(self, self._c.gate(name, a._raw, b._raw))

    def encrypt_bool(self, b: bool) -> Bool:
        if not isinstance(b, (bool, np.bool_)):
            raise BasaltError(f"encrypt_bool takes a bool, got {b!r}")
        return Bool(self, self._c.encrypt_bool(bool(b)))

    def decrypt_bool(self, ct: Bool) -> bool:
        self._own(ct, Bool)
        return self._c.decrypt_bool(ct._raw)

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        """Load a ciphertext of this key (a `Bool` or a `Ciphertext`, as it was written)."""
        raw = self._c.ciphertext_from_bytes(bytes(data))
        return (Bool if self._c.is_boolean(raw) else Ciphertext)(self, raw)

    def _own(self, ct, kind):
        if not isinstance(ct, Ciphertext) or ct._ctx is not self:
            raise BasaltError("this ciphertext belongs to another context")
        if kind is Bool and not isinstance(ct, Bool):
            raise BasaltError("this operation takes an encrypted boolean (encrypt_bool), "
                              "not an integer")
        if kind is Ciphertext and isinstance(ct, Bool):
            raise BasaltError("this operation takes an encrypted integer (encrypt), not a "
                              "boolean")


def presets():
    """Names of the TFHE parameter sets shipped in data/params/tfhe."""
    return _basalt.tfhe_presets()
