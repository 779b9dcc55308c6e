"""Encrypted integers: ``Uint8 … Uint64`` and ``Int8 … Int64`` with Python operators.

Each value is a radix ciphertext of 2-bit blocks (TFHE-rs's 2+2-bit set) whose carries the
server propagates. The client holds the secret key and encrypts/decrypts; the server holds only
the server key and computes::

    client = basalt.tfhe.IntegerClient()          # secret key (TFHERS_2_2_KS_PBS)
    server = client.server()                      # server key only
    x = basalt.tfhe.Uint8.encrypt(client, 200)
    y = client.encrypt_uint8(100)
    with server:                                  # operators use this server
        z = (x + y) * 3 ^ (x >> 2)
        big = basalt.tfhe.maximum(x, y)
        flag = (x > y) & (z != 7)                 # an EncryptedBool
        w = basalt.tfhe.select(flag, x, y)
    client.decrypt(z)                             # 132 (mod 256)

Results of an operation remember their server, so chains work outside ``with`` once one
operand came from a server. Arithmetic wraps like Rust's ``wrapping_*`` (mod 2^bits, two's
complement for signed types); shift amounts are taken mod the width; ``>>`` on a signed type is
arithmetic. Comparisons return an :class:`EncryptedBool` (``&``, ``|``, ``^``, ``~``,
``select``). Out-of-range values, mixed widths or keys raise :class:`basalt.BasaltError`.
"""

from __future__ import annotations

import numbers
import threading

from . import _basalt

BasaltError = _basalt.BasaltError

__all__ = [
    "IntegerClient", "IntegerServer", "EncryptedBool", "select", "minimum", "maximum",
    "Uint8", "Uint16", "Uint32", "Uint64", "Int8", "Int16", "Int32", "Int64",
]

_active = threading.local()


def _current_server(*operands):
    for o in operands:
        s = getattr(o, "_server", None)
        if s is not None:
            return s
    s = getattr(_active, "server", None)
    if s is None:
        raise BasaltError("no server key: run the operation inside `with server:` "
                          "(an IntegerServer) or on values a server produced")
    return s


class IntegerClient:
    """Secret-key side: encrypts and decrypts integers and booleans, makes the server key."""

    def __init__(self, name: str = "TFHERS_2_2_KS_PBS", *, allow_insecure: bool = False):
        self._c = _basalt.IntegerClient(name, allow_insecure)

    name = property(lambda self: self._c.name)
    key_id = property(lambda self: self._c.key_id, doc="Identity of the key (hex).")

    def server(self) -> "IntegerServer":
        """A server holding the server key only (generated from the secret key)."""
        return IntegerServer(self._c.server())

    def encrypt(self, cls, value: int):
        """Encrypt ``value`` as the integer type ``cls`` (``Uint8``, ``Int32`` …)."""
        return cls.encrypt(self, value)

    def encrypt_bool(self, b: bool) -> "EncryptedBool":
        return EncryptedBool(self._c.encrypt_bool(bool(b)), None)

    def decrypt(self, ct):
        """The clear value of an integer (an ``int``) or an encrypted boolean (a ``bool``)."""
        if isinstance(ct, EncryptedBool):
            return self._c.decrypt_bool(ct._raw)
        if isinstance(ct, _Integer):
            return self._c.decrypt(ct._raw)
        raise BasaltError(f"cannot decrypt a {type(ct).__name__}")


class IntegerServer:
    """Server-key side: every integer operation, no decryption. ``with server:`` makes it the
    server of Python operators on values that do not carry one yet."""

    def __init__(self, raw):
        self._s = raw

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "TFHERS_2_2_KS_PBS", *,
                   allow_insecure: bool = False) -> "IntegerServer":
        return cls(_basalt.IntegerServer.from_bytes(bytes(data), name, allow_insecure))

    def to_bytes(self) -> bytes:
        return self._s.to_bytes()

    key_id = property(lambda self: self._s.key_id)

    def __enter__(self):
        self._prev = getattr(_active, "server", None)
        _active.server = self
        return self

    def __exit__(self, *exc):
        _active.server = self._prev
        return False

    def attach(self, value):
        """The same ciphertext bound to this server (e.g. after receiving it)."""
        return type(value)(value._raw, self)

    def load(self, cls, data: bytes):
        """An integer of type ``cls`` (or ``EncryptedBool``) from ``to_bytes()``, checked against
        this server's key."""
        if cls is EncryptedBool:
            return EncryptedBool(self._s.bool_from_bytes(bytes(data)), self)
        raw = self._s.integer_from_bytes(bytes(data))
        if (raw.bits, raw.signed) != (cls.BITS, cls.SIGNED):
            raise BasaltError(f"the bytes hold a {_type_name(raw.bits, raw.signed)}, "
                              f"not a {cls.__name__}")
        return cls(raw, self)


def _type_name(bits, signed):
    return f"{'Int' if signed else 'Uint'}{bits}"


class EncryptedBool:
    """An encrypted ``True``/``False`` (what comparisons return)."""

    __slots__ = ("_raw", "_server")

    def __init__(self, raw, server):
        self._raw = raw
        self._server = server

    def _op(self, name, other):
        if not isinstance(other, EncryptedBool):
            return NotImplemented
        s = _current_server(self, other)
        return EncryptedBool(s._s.bool_op(name, self._raw, other._raw), s)

    def __and__(self, other):
        return self._op("and", other)

    def __or__(self, other):
        return self._op("or", other)

    def __xor__(self, other):
        return self._op("xor", other)

    def __invert__(self):
        s = _current_server(self)
        return EncryptedBool(s._s.bool_not(self._raw), s)

    def __bool__(self):
        raise BasaltError("an EncryptedBool has no clear truth value: decrypt it with the client")

    def select(self, if_true, if_false):
        """``if_true`` where this is true, else ``if_false``."""
        return select(self, if_true, if_false)

    def to_bytes(self) -> bytes:
        return self._raw.to_bytes()


class _Integer:
    BITS = 0
    SIGNED = False
    MIN = MAX = 0
    __slots__ = ("_raw", "_server")

    def __init__(self, raw, server=None):
        if not isinstance(raw, _basalt.RadixCiphertext):
            name = type(self).__name__
            if isinstance(raw, numbers.Integral) and not isinstance(raw, bool):
                self._clear(raw)  # an out-of-range value says so first
            raise BasaltError(f"{name}({raw!r}): an encrypted integer is made by the client, "
                              f"{name}.encrypt(client, value) or client.encrypt_{name.lower()}"
                              f"(value)")
        if (raw.bits, raw.signed) != (self.BITS, self.SIGNED):
            raise BasaltError(f"a {_type_name(raw.bits, raw.signed)} ciphertext is not a "
                              f"{type(self).__name__}")
        self._raw = raw
        self._server = server

    @classmethod
    def _clear(cls, value, what="value"):
        """``value`` as an ``int`` of this type's range; anything else (a float, a bool, a
        string, an integer out of range) is refused rather than coerced."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise BasaltError(f"the {what} of a {cls.__name__} must be an integer, not "
                              f"{type(value).__name__} {value!r}")
        value, lo, hi = int(value), cls.MIN, cls.MAX
        if not lo <= value <= hi:
            raise BasaltError(f"{what} {value} is out of range for {cls.__name__} ({lo}..={hi})")
        return value

    @classmethod
    def encrypt(cls, client: IntegerClient, value: int):
        """Encrypt ``value`` (an integer in the type's range) with the client's secret key."""
        return cls(_client_raw(client).encrypt(cls._clear(value), cls.BITS, cls.SIGNED), None)

    def decrypt(self, client: IntegerClient) -> int:
        return _client_raw(client).decrypt(self._raw)

    def to_bytes(self) -> bytes:
        return self._raw.to_bytes()

    key_id = property(lambda self: self._raw.key_id)

    def __repr__(self):
        return f"<encrypted {type(self).__name__}>"

    def __bool__(self):
        raise BasaltError(f"an encrypted {type(self).__name__} has no clear truth value")

    # --- plumbing
    def _same(self, other):
        if isinstance(other, _Integer) and type(other) is not type(self):
            raise BasaltError(f"operands have different integer types: {type(self).__name__} "
                              f"and {type(other).__name__}")
        return isinstance(other, _Integer)

    def _new(self, raw, server):
        return type(self)(raw, server)

    def _bin(self, op, other, scalar_ok=True):
        if self._same(other):
            s = _current_server(self, other)
            return self._new(s._s.binary(op, self._raw, other._raw), s)
        if isinstance(other, int) and not isinstance(other, bool) and scalar_ok:
            s = _current_server(self)
            if op in ("add", "sub", "mul"):
                # Wrapping arithmetic: the constant counts mod 2^bits, whatever its size.
                c = other % (1 << self.BITS)
            else:
                c = self._clear(other, f"constant of {op}")
            return self._new(s._s.scalar(op, self._raw, c), s)
        return NotImplemented

    def _cmp(self, op, other):
        if self._same(other):
            s = _current_server(self, other)
            return EncryptedBool(s._s.compare(op, self._raw, b=other._raw), s)
        if isinstance(other, int) and not isinstance(other, bool):
            s = _current_server(self)
            c = self._clear(other, "compared constant")
            return EncryptedBool(s._s.compare(op, self._raw, c=c), s)
        return NotImplemented

    def _shift(self, kind, amount):
        if isinstance(amount, _Integer):
            s = _current_server(self, amount)
            return self._new(s._s.shift(kind, self._raw, amount._raw), s)
        if isinstance(amount, int) and not isinstance(amount, bool):
            if amount < 0:
                raise BasaltError(f"negative shift amount {amount}")
            s = _current_server(self)
            # Amounts count mod the width, whatever their size.
            return self._new(s._s.shift_clear(kind, self._raw, amount % self.BITS), s)
        return NotImplemented

    # --- arithmetic (mod 2^bits)
    def __add__(self, o):
        return self._bin("add", o)

    def __radd__(self, o):
        return self._bin("add", o)

    def __sub__(self, o):
        return self._bin("sub", o)

    def __rsub__(self, o):
        if isinstance(o, int) and not isinstance(o, bool):
            return (-self)._bin("add", o)
        return NotImplemented

    def __mul__(self, o):
        return self._bin("mul", o)

    def __rmul__(self, o):
        return self._bin("mul", o)

    def __neg__(self):
        s = _current_server(self)
        return self._new(s._s.unary("neg", self._raw), s)

    # --- bitwise
    def __and__(self, o):
        return self._bin("and", o)

    def __rand__(self, o):
        return self._bin("and", o)

    def __or__(self, o):
        return self._bin("or", o)

    def __ror__(self, o):
        return self._bin("or", o)

    def __xor__(self, o):
        return self._bin("xor", o)

    def __rxor__(self, o):
        return self._bin("xor", o)

    def __invert__(self):
        s = _current_server(self)
        return self._new(s._s.unary("not", self._raw), s)

    def __lshift__(self, k):
        return self._shift("left", k)

    def __rshift__(self, k):
        return self._shift("right", k)

    def rotate_left(self, k):
        return self._shift("rotate_left", k)

    def rotate_right(self, k):
        return self._shift("rotate_right", k)

    # --- comparisons (encrypted booleans)
    def __eq__(self, o):
        return self._cmp("eq", o)

    def __ne__(self, o):
        return self._cmp("ne", o)

    def __lt__(self, o):
        return self._cmp("lt", o)

    def __le__(self, o):
        return self._cmp("le", o)

    def __gt__(self, o):
        return self._cmp("gt", o)

    def __ge__(self, o):
        return self._cmp("ge", o)

    __hash__ = None

    def min(self, o):
        out = self._bin("min", o)
        if out is NotImplemented:
            raise BasaltError(f"min of a {type(self).__name__} and a {type(o).__name__}")
        return out

    def max(self, o):
        out = self._bin("max", o)
        if out is NotImplemented:
            raise BasaltError(f"max of a {type(self).__name__} and a {type(o).__name__}")
        return out


def _client_raw(client):
    if isinstance(client, IntegerClient):
        return client._c
    raw = getattr(client, "_integer_client", None)  # a client that carries integer keys
    if raw is not None:
        return raw() if callable(raw) else raw
    raise BasaltError(f"{type(client).__name__} is not an integer client (basalt.tfhe.IntegerClient)")


def select(cond: EncryptedBool, if_true, if_false):
    """``if_true`` where ``cond`` is true, else ``if_false`` (same integer type)."""
    if not isinstance(cond, EncryptedBool):
        raise BasaltError("select needs an EncryptedBool condition")
    if not isinstance(if_true, _Integer) or not if_true._same(if_false):
        raise BasaltError("select needs two encrypted integers of the same type")
    s = _current_server(cond, if_true, if_false)
    return if_true._new(s._s.select(cond._raw, if_true._raw, if_false._raw), s)


def minimum(a, b):
    """The smaller of two encrypted integers (or an encrypted integer and an int)."""
    return a.min(b) if isinstance(a, _Integer) else b.min(a)


def maximum(a, b):
    """The larger of two encrypted integers (or an encrypted integer and an int)."""
    return a.max(b) if isinstance(a, _Integer) else b.max(a)


def _make(bits, signed):
    name = _type_name(bits, signed)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    doc = f"An encrypted {'signed' if signed else 'unsigned'} {bits}-bit integer ({lo}..={hi})."
    cls = type(name, (_Integer,), {"BITS": bits, "SIGNED": signed, "MIN": lo, "MAX": hi,
                                   "__slots__": (), "__doc__": doc, "__module__": __name__})
    return cls


Uint8, Uint16, Uint32, Uint64 = (_make(b, False) for b in (8, 16, 32, 64))
Int8, Int16, Int32, Int64 = (_make(b, True) for b in (8, 16, 32, 64))

for _cls in (Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64):
    setattr(IntegerClient, f"encrypt_{_cls.__name__.lower()}",
            (lambda c: lambda self, value: c.encrypt(self, value))(_cls))
del _cls
