"""TFHE for Python users: encrypt small integers, apply any function by programmable
bootstrapping, decrypt.

>>> import basalt
>>> ctx = basalt.tfhe.Context("TOY_U64", allow_insecure=True)  # doctest: +SKIP
>>> ctx.decrypt(ctx.apply(ctx.encrypt(3), lambda m: (m * m) % ctx.plaintext_modulus))  # doctest: +SKIP
9
"""

from __future__ import annotations

from . import _basalt
from .integer import *  # noqa: F401,F403  (Uint8 … Int64, IntegerClient, IntegerServer)

BasaltError = _basalt.BasaltError


class Ciphertext:
    """An encrypted integer bound to its context."""

    __slots__ = ("_ctx", "_raw")

    def __init__(self, ctx: "Context", raw):
        self._ctx = ctx
        self._raw = raw

    def to_bytes(self) -> bytes:
        return self._ctx._c.ciphertext_to_bytes(self._raw)


class Context:
    """Client and server keys of one parameter set (`basalt.tfhe.presets()`)."""

    def __init__(self, name: str = "TFHERS_2_2_KS_PBS", *, allow_insecure: bool = False):
        self._c = _basalt.TfheContext(name, allow_insecure)

    plaintext_modulus = property(lambda self: self._c.plaintext_modulus,
                                 doc="Messages are integers in range(plaintext_modulus).")
    message_modulus = property(lambda self: self._c.message_modulus)
    name = property(lambda self: self._c.name)

    def encrypt(self, m: int) -> Ciphertext:
        return Ciphertext(self, self._c.encrypt(int(m)))

    def decrypt(self, ct: Ciphertext) -> int:
        self._own(ct)
        return self._c.decrypt(ct._raw)

    def table(self, f) -> list:
        """`f` evaluated on every message: the lookup table a bootstrap applies."""
        t = [int(f(m)) for m in range(self.plaintext_modulus)]
        bad = [(m, v) for m, v in enumerate(t) if not 0 <= v < self.plaintext_modulus]
        if bad:
            m, v = bad[0]
            raise BasaltError(f"f({m}) = {v} is outside the message space 0..{self.plaintext_modulus}")
        return t

    def apply(self, ct: Ciphertext, f) -> Ciphertext:
        """One programmable bootstrap computing f(m) (f is evaluated on all messages here)."""
        self._own(ct)
        return Ciphertext(self, self._c.apply_table(ct._raw, self.table(f)))

    def apply_batch(self, cts, f) -> list:
        """f on every ciphertext, batched (Strix's two-level batching) over the cores."""
        for c in cts:
            self._own(c)
        raws = self._c.apply_table_batch([c._raw for c in cts], self.table(f))
        return [Ciphertext(self, r) for r in raws]

    def gate(self, name: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """Boolean gate ('nand', 'and', 'or', 'xor') on encrypted booleans."""
        self._own(a)
        self._own(b)
        return Ciphertext(self, self._c.gate(name, a._raw, b._raw))

    def encrypt_bool(self, b: bool) -> Ciphertext:
        return Ciphertext(self, self._c.encrypt_bool(bool(b)))

    def decrypt_bool(self, ct: Ciphertext) -> bool:
        self._own(ct)
        return self._c.decrypt_bool(ct._raw)

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        return Ciphertext(self, self._c.ciphertext_from_bytes(bytes(data)))

    def _own(self, ct):
        if not isinstance(ct, Ciphertext) or ct._ctx is not self:
            raise BasaltError("this ciphertext belongs to another context")


def presets():
    """Names of the TFHE parameter sets shipped in data/params/tfhe."""
    return _basalt.tfhe_presets()
