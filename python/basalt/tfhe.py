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

The `Context` is the client: it holds the secret key, encrypts and decrypts, and makes the
`ServerKey` (bootstrapping and key-switching keys, no secret). A `Server` is built from the
parameter set's name and that key alone: it runs tables, gates, batches and the radix integers
(`Uint8` … `Int64`), and has no ``decrypt``. Ciphertexts travel as bytes; each carries the
identity of its key, and a ciphertext of another key is refused naming both.

>>> server = basalt.tfhe.Server(ctx.name, basalt.tfhe.ServerKey.from_bytes(
...     ctx.name, ctx.server_key().to_bytes()))
>>> ct = server.ciphertext_from_bytes(ctx.encrypt(2).to_bytes())
>>> ctx.decrypt(ctx.ciphertext_from_bytes(server.apply(ct, lambda m: (m + 1) % 16).to_bytes()))
3
>>> x = basalt.tfhe.Uint8.encrypt(ctx, 200)
>>> with server:
...     y = x * 2 + 7
>>> ctx.decrypt(y)
151
"""

from __future__ import annotations

import numpy as np

from . import _basalt
from .integer import *  # noqa: F401,F403  (Uint8 … Int64, IntegerClient, IntegerServer)
from .integer import _Integer

BasaltError = _basalt.BasaltError


def _integer(x, what):
    """An exact integer: a float, a string or a bool is refused rather than truncated."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise BasaltError(f"{what} must be an integer, got {x!r} ({type(x).__name__})")
    return int(x)


class Ciphertext:
    """An encrypted integer of the message space (`Context.encrypt`), tagged with its key."""

    __slots__ = ("_raw",)

    def __init__(self, raw):
        self._raw = raw

    key_id = property(lambda self: self._raw.key_id,
                      doc="Identity of the key it was encrypted under (hex).")

    def to_bytes(self) -> bytes:
        """Serialized, checksummed, with its parameter set and key id (load it with
        ``ciphertext_from_bytes`` of the client or the server)."""
        return self._raw.to_bytes()

    def __repr__(self):
        return f"<encrypted {type(self).__name__} under key {self.key_id}>"


class Bool(Ciphertext):
    """An encrypted boolean (gate encoding): the operand of `gate`."""

    __slots__ = ()


def _wrap(raw):
    return (Bool if raw.is_boolean() else Ciphertext)(raw)


def _check_kind(ct, kind):
    if not isinstance(ct, Ciphertext):
        raise BasaltError(f"expected a basalt.tfhe ciphertext, got {type(ct).__name__}")
    if kind is Bool and not isinstance(ct, Bool):
        raise BasaltError("this operation takes an encrypted boolean (encrypt_bool), "
                          "not an integer")
    if kind is Ciphertext and isinstance(ct, Bool):
        raise BasaltError("this operation takes an encrypted integer (encrypt), not a "
                          "boolean")
    return ct._raw


def _params_name(params) -> str:
    if not isinstance(params, str):
        raise BasaltError(f"params must be the name of a TFHE parameter set "
                          f"(basalt.tfhe.presets()), got {type(params).__name__}")
    return params


class _Evaluator:
    """What the client and the server share: tables, gates and batches on ciphertexts of
    their key (a ciphertext under another key is refused, naming both keys)."""

    plaintext_modulus = property(lambda self: self._c.plaintext_modulus,
                                 doc="Messages are integers in range(plaintext_modulus).")
    message_modulus = property(lambda self: self._c.message_modulus)
    name = property(lambda self: self._c.name, doc="Name of the parameter set.")
    key_id = property(lambda self: self._c.key_id, doc="Identity of the key (hex).")

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
        return Ciphertext(self._c.apply_table(_check_kind(ct, Ciphertext), self.table(f)))

    def apply_many(self, ct: Ciphertext, fs, *, max_value: int) -> list:
        """Several functions of one ciphertext from one programmable bootstrap (many-LUT):
        ``[f(m) for f in fs]`` as ciphertexts, each as usable as an `apply` result. The
        ciphertext must hold a value in ``range(max_value + 1)`` (the functions are evaluated
        there only), and ``(max_value + 1) * len(fs) <= plaintext_modulus``: on the 2+2 set, digit
        and carry of a value up to 7, or four functions of a value up to 3. The failure
        probability is that of one `apply`."""
        max_value = _integer(max_value, "max_value")
        fs = list(fs)
        if max_value < 0:
            raise BasaltError(f"max_value must be at least 0, got {max_value}")
        if not fs or (max_value + 1) * len(fs) > self.plaintext_modulus:
            raise BasaltError(
                f"many-LUT of {len(fs)} function(s) on inputs 0..={max_value}: needs at least "
                f"one function and (max_value + 1) x functions <= {self.plaintext_modulus}")
        tables = [[_integer(f(m), f"f({m})") for m in range(max_value + 1)] for f in fs]
        raws = self._c.apply_many_tables(_check_kind(ct, Ciphertext), tables, max_value)
        return [Ciphertext(r) for r in raws]

    def apply_batch(self, cts, f, *, progress=None) -> list:
        """f on every ciphertext, batched (Strix's two-level batching) over the cores.
        ``progress(stage, done, total)``, if given, is called as the batch advances (``done``
        ciphertexts of ``total``); Ctrl-C, or an exception the callback raises, stops it there."""
        cts = list(cts)  # a generator is consumed once: read it here
        raws = [_check_kind(c, Ciphertext) for c in cts]
        return [Ciphertext(r) for r in self._c.apply_table_batch(raws, self.table(f), progress)]

    def gate(self, name: str, a: Bool, b: Bool) -> Bool:
        """Boolean gate ('nand', 'and', 'or', 'xor') on encrypted booleans."""
        return Bool(self._c.gate(name, _check_kind(a, Bool), _check_kind(b, Bool)))

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        """Load a ciphertext of this key (a `Bool` or a `Ciphertext`, as it was written);
        corrupted bytes, another parameter set or another key raise `BasaltError`."""
        return _wrap(self._c.ciphertext_from_bytes(bytes(data)))


class Context(_Evaluator):
    """The client role: the secret key of one parameter set (`basalt.tfhe.presets()`); it
    encrypts, decrypts (booleans, integers of the message space, and radix integers
    ``Uint8`` … ``Int64``) and makes the `ServerKey`. It also evaluates, for single-process use."""

    def __init__(self, name: str = "TFHERS_2_2_KS_PBS", *, allow_insecure: bool = False,
                 progress=None, force: bool = False):
        """Fresh keys. ``progress(stage, done, total)`` is called as the server key is made
        (stages ``"bootstrapping key"``, ``"key-switching key"``, and ``"noise-reduction key"``
        where the set has one); Ctrl-C, or an exception the callback raises, stops key
        generation and is raised here. A server key beyond the memory available raises
        `BasaltError` before anything is allocated, unless ``force=True``."""
        self._c = _basalt.TfheContext(name, allow_insecure, progress, force)
        self._ints = None
        self._int_server = None

    def server_key(self) -> "ServerKey":
        """The server key (bootstrapping and key-switching keys; no secret): what a `Server`
        is built from."""
        return ServerKey(self._c.server_key())

    def encrypt(self, m: int) -> Ciphertext:
        return Ciphertext(self._c.encrypt(_integer(m, "the message")))

    def decrypt(self, ct):
        """The message of a `Ciphertext`; the value of a radix integer (``Uint8`` …) or of an
        `EncryptedBool`."""
        if isinstance(ct, EncryptedBool):
            return self._integer_client().decrypt_bool(ct._raw)
        if isinstance(ct, _Integer):
            return self._integer_client().decrypt(ct._raw)
        return self._c.decrypt(_check_kind(ct, Ciphertext))

    def encrypt_bool(self, b: bool) -> Bool:
        if not isinstance(b, (bool, np.bool_)):
            raise BasaltError(f"encrypt_bool takes a bool, got {b!r}")
        return Bool(self._c.encrypt_bool(bool(b)))

    def decrypt_bool(self, ct: Bool) -> bool:
        return self._c.decrypt_bool(_check_kind(ct, Bool))

    def load(self, cls, data: bytes):
        """A radix integer of type ``cls`` (``Uint8`` …, or ``EncryptedBool``) from its bytes,
        checked against this context's key; operators on it run with this context's server key."""
        if self._int_server is None:
            self._int_server = IntegerServer(self._c.integer_server())
        return self._int_server.load(cls, data)

    def _integer_client(self):
        # Radix integers encrypt with this context's secret key (64-bit sets only).
        if self._ints is None:
            self._ints = self._c.integer_client()
        return self._ints


class ServerKey:
    """The bootstrapping and key-switching keys of one client key: no secret. Made by
    ``Context.server_key()``; sent to a `Server` as bytes or a file, validated on load."""

    __slots__ = ("_k",)

    def __init__(self, raw):
        self._k = raw

    key_id = property(lambda self: self._k.key_id, doc="Identity of the client key (hex).")
    name = property(lambda self: self._k.name, doc="Name of the parameter set.")

    def to_bytes(self) -> bytes:
        return self._k.to_bytes()

    @classmethod
    def from_bytes(cls, params: str, data: bytes, *, allow_insecure: bool = False) -> "ServerKey":
        """A server key for the parameter set named ``params``: corrupted bytes, a key of
        another set or dimensions that do not match raise `BasaltError`. A set below 128-bit
        security needs ``allow_insecure=True`` here too."""
        return cls(_basalt.TfheServerKey.from_bytes(_params_name(params), bytes(data),
                                                    allow_insecure))

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, params: str, path, *, allow_insecure: bool = False) -> "ServerKey":
        with open(path, "rb") as f:
            return cls.from_bytes(params, f.read(), allow_insecure=allow_insecure)

    def __repr__(self):
        return f"<basalt.tfhe.ServerKey {self.name} key {self.key_id}>"


class Server(_Evaluator):
    """The server role: a parameter set and a `ServerKey`, no secret. Lookup tables, gates,
    batches, and the radix integers (``with server:`` makes it the server of their operators);
    no ``decrypt``."""

    def __init__(self, params: str, server_key: ServerKey):
        if not isinstance(server_key, ServerKey):
            raise BasaltError("Server(params, server_key) takes a parameter-set name and a "
                              "basalt.tfhe.ServerKey")
        self._c = _basalt.TfheServer(_params_name(params), server_key._k)
        self._ints = None

    def server_key(self) -> ServerKey:
        return ServerKey(self._c.server_key())

    @property
    def _s(self):
        # The radix-integer engine on the same key (what integer operators call).
        if self._ints is None:
            self._ints = self._c.integer_server()
        return self._ints

    __enter__ = IntegerServer.__enter__
    __exit__ = IntegerServer.__exit__
    attach = IntegerServer.attach
    load = IntegerServer.load

    def __repr__(self):
        return f"<basalt.tfhe.Server {self.name} key {self.key_id}>"


def presets():
    """Names of the TFHE parameter sets shipped with the package."""
    return _basalt.tfhe_presets()
