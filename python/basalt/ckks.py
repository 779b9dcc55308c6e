"""CKKS for numpy users: encrypt complex or real vectors, compute, decrypt.

>>> import numpy as np, basalt
>>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
>>> x = np.linspace(-1, 1, 8)
>>> ct = ctx.encrypt(x)
>>> y = ((ct * ct).rescale() + 0.5).rotate(1)
>>> bool(np.allclose(ctx.decrypt(y).real, np.roll(x * x + 0.5, -1), atol=1e-4))
True
"""

from __future__ import annotations

import numpy as np

from . import _basalt
# Parameters and keys are defined beside this module and are part of its API (they name
# basalt.ckks as their module).
from .ckks_keys import (BootstrappingKeys, ConjugationKey, EvaluationKeys,  # noqa: F401
                        Parameters, PublicKey, RelinearizationKey, RotationKey, _Key)

BasaltError = _basalt.BasaltError


_NUMBER = (int, float, complex, np.integer, np.floating, np.complexfloating)


def _scalar(x, what="operand"):
    """A Python or numpy number as complex; anything else (a string, None, a list) is refused
    rather than coerced."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, _NUMBER):
        raise BasaltError(f"unsupported {what} of type {type(x).__name__}: give a Ciphertext, "
                          f"a number or a 1-D numpy array")
    return complex(x)


def _vector(x, slots):
    v = np.asarray(x)
    if v.dtype.kind not in "biufc" or v.dtype.kind == "b":
        raise BasaltError(f"expected a numeric array, got dtype {v.dtype}")
    if v.ndim != 1 or len(v) != slots:
        raise BasaltError(f"expected a 1-D array of {slots} values (the ciphertext's slots), "
                          f"got shape {v.shape}")
    return np.ascontiguousarray(v, dtype=np.complex128)


class Ciphertext:
    """An encrypted vector bound to the context or server that computes on it; arithmetic
    operators run homomorphically. Pickles through its bytes (attach it again with
    ``ctx.attach(ct)`` or ``server.attach(ct)``).

    >>> import numpy as np, pickle, basalt
    >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1, 2, 4])
    >>> x = np.linspace(-1, 1, 8)
    >>> ct = ctx.encrypt(x)
    >>> bool(np.allclose(ctx.decrypt((ct * 1j).rescale()), 1j * x, atol=1e-4))
    True
    >>> bool(np.allclose(ctx.decrypt((ct * x).rescale() + x).real, x * x + x, atol=1e-4))
    True
    >>> bool(np.allclose(ctx.decrypt(ct - x), 0, atol=1e-4))
    True
    >>> bool(abs(ctx.decrypt(ct.sum())[0].real - x.sum()) < 1e-3)
    True
    >>> bool(abs(ctx.decrypt(ct.dot(x))[0].real - x @ x) < 1e-3)
    True
    >>> back = ctx.attach(pickle.loads(pickle.dumps(ct)))
    >>> bool(np.allclose(ctx.decrypt(back).real, x, atol=1e-4))
    True
    """

    __slots__ = ("_ctx", "_raw", "_bytes")

    def __init__(self, ctx, raw):
        self._ctx = ctx
        self._raw = raw
        self._bytes = None

    level = property(lambda self: self._live().level, doc="Index of the top prime of Q.")
    scale = property(lambda self: self._live().scale, doc="Scale Δ of the encoding.")
    slots = property(lambda self: self._live().slots, doc="Number of encrypted slots.")
    key_id = property(lambda self: self._live().key_id,
                      doc="Identity of the key set it is encrypted under (32 hex digits).")

    def _live(self):
        if self._raw is None:
            raise BasaltError("this ciphertext was unpickled: attach it with ctx.attach(ct) "
                              "or server.attach(ct) first")
        return self._raw

    def _wrap(self, raw) -> "Ciphertext":
        return Ciphertext(self._ctx, raw)

    def _engine(self, other=None):
        if isinstance(other, Ciphertext):
            if other._ctx is not self._ctx:
                raise BasaltError("the operands belong to different contexts or servers")
            if other.slots != self.slots:
                raise BasaltError(f"the operands pack {self.slots} and {other.slots} slots: "
                                  f"encrypt them with the same length")
            a, b = self._ctx._align(self, other)
            return self._ctx._e, a._live(), b._live()
        return self._ctx._e, self._live(), None

    def __add__(self, other):
        if isinstance(other, Ciphertext):
            c, a, b = self._engine(other)
            return self._wrap(c.add(a, b))
        if isinstance(other, (np.ndarray, list, tuple)):
            return self._wrap(self._ctx._e.plain_op(self._live(), _vector(other, self.slots),
                                                    "add"))
        return self._wrap(self._ctx._e.add_const(self._live(), _scalar(other)))

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Ciphertext):
            c, a, b = self._engine(other)
            return self._wrap(c.sub(a, b))
        if isinstance(other, (np.ndarray, list, tuple)):
            return self + (-_vector(other, self.slots))
        return self._wrap(self._ctx._e.add_const(self._live(), -_scalar(other)))

    def __rsub__(self, other):
        return (-self) + other

    def __neg__(self):
        return self._wrap(self._ctx._e.neg(self._live()))

    def __mul__(self, other):
        """× ciphertext (relinearised), × number (real or complex) or × numpy vector (slot by
        slot); call `rescale()` after, or turn on ``auto_rescale``."""
        if isinstance(other, Ciphertext):
            c, a, b = self._engine(other)
            out = self._wrap(c.mul(a, b))
        elif isinstance(other, (np.ndarray, list, tuple)):
            out = self._wrap(self._ctx._e.plain_op(self._live(), _vector(other, self.slots),
                                                   "mul"))
        else:
            z = _scalar(other)
            if z.imag == 0:
                out = self._wrap(self._ctx._e.mul_const(self._live(), z.real))
            else:
                out = self._wrap(self._ctx._e.mul_const_complex(self._live(), z))
        return out.rescale() if getattr(self._ctx, "auto_rescale", False) and out.level > 0 \
            else out

    __rmul__ = __mul__

    def rescale(self) -> "Ciphertext":
        return self._wrap(self._ctx._e.rescale(self._live()))

    def rotate(self, k: int) -> "Ciphertext":
        """Rotate slots left by k (needs a rotation key for k; 0 returns the input)."""
        return self._wrap(self._ctx._e.rotate(self._live(), int(k)))

    def conjugate(self) -> "Ciphertext":
        return self._wrap(self._ctx._e.conjugate(self._live()))

    def drop_to(self, level: int) -> "Ciphertext":
        """Drop to a lower level without rescaling (exact)."""
        if int(level) < 0:
            raise BasaltError(f"level={level} must be at least 0")
        return self._wrap(self._ctx._e.drop_to_level(self._live(), int(level)))

    def sum(self) -> "Ciphertext":
        """Every slot holds the sum over all slots (rotations by 1, 2, 4, …: the context needs
        those keys)."""
        acc, k = self, 1
        while k < self.slots:
            acc = acc + acc.rotate(k)
            k *= 2
        return acc

    def dot(self, v) -> "Ciphertext":
        """Inner product with a plaintext vector, in every slot (one product, one rescale, a
        sum)."""
        return (self * _vector(v, self.slots)).rescale().sum() \
            if not getattr(self._ctx, "auto_rescale", False) else (self * v).sum()

    def bootstrap(self, *, progress=None) -> "Ciphertext":
        """Refresh to the bootstrapping output level (the context must bootstrap).
        ``progress(stage, done, total)`` is called after each of its five stages; Ctrl-C, or an
        exception the callback raises, stops it there."""
        return self._wrap(self._ctx._e.bootstrap(self._live(), progress))

    def to_bytes(self) -> bytes:
        """Serialized, checksummed, with its key id (load it with ``ciphertext_from_bytes``)."""
        return self._live().to_bytes()

    def __reduce__(self):
        return (_unpickle_ciphertext, (self.to_bytes(),))

    def __repr__(self):
        return repr(self._raw) if self._raw is not None else "Ciphertext(unattached)"


def _unpickle_ciphertext(data):
    ct = Ciphertext(None, None)
    ct._bytes = bytes(data)
    return ct


class _Engine:
    """What a client context and a server share: operations on their ciphertexts.

    ``auto_rescale`` (opt-in, off by default): rescale after every product and align the
    levels of two operands by dropping the higher one (their scales are then equal by
    construction of the chain).

    >>> import numpy as np, basalt
    >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3)
    >>> ctx.auto_rescale = True
    >>> x = np.linspace(-1, 1, 8)
    >>> a = ctx.encrypt(x)
    >>> b = a * a                    # rescaled: one level down
    >>> a.level, b.level
    (3, 2)
    >>> c = a + b                    # a is dropped to b's level first
    >>> bool(np.allclose(ctx.decrypt(c).real, x + x * x, atol=1e-3))
    True
    """

    auto_rescale = False

    def attach(self, ct: Ciphertext) -> Ciphertext:
        """A ciphertext (e.g. unpickled) bound to this context or server, after validation."""
        data = ct._bytes if ct._raw is None else ct.to_bytes()
        return self.ciphertext_from_bytes(data)

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        """Load a ciphertext serialized under these parameters and this key set; corrupted
        bytes or a ciphertext of another key set raise `BasaltError` naming the problem."""
        return Ciphertext(self, self._c.ciphertext_from_bytes(bytes(data)))

    def _align(self, a: Ciphertext, b: Ciphertext):
        if not self.auto_rescale or a.level == b.level:
            return a, b
        hi, lo = (a, b) if a.level > b.level else (b, a)
        if abs(hi.scale / lo.scale - 1.0) <= 1e-9:
            hi2 = hi.drop_to(lo.level)
        else:
            # Scales differ (a rescale divides by a prime, not by the scale): bring the higher
            # operand to the lower one's level and scale exactly, one rescale on the way.
            hi2 = hi._wrap(self._e.match_level_and_scale(hi._live(), lo.level, lo.scale))
        return (hi2, lo) if a is hi else (lo, hi2)

    def bootstrap(self, ct: Ciphertext, *, progress=None) -> Ciphertext:
        """Refresh ``ct`` to ``bootstrap_output_level`` (same slots and scale): an ordinary
        ciphertext on which every operation works. ``progress(stage, done, total)`` is called
        after each of its five stages; Ctrl-C, or an exception the callback raises, stops it."""
        if not isinstance(ct, Ciphertext):
            raise BasaltError("expected a basalt.ckks.Ciphertext")
        return Ciphertext(self, self._e.bootstrap(ct._live(), progress))

    key_id = property(lambda self: self._c.key_id,
                      doc="Identity of the key set (32 hex digits).")
    parameters = property(lambda self: Parameters(self._e.parameters()),
                          doc="The parameters a `Server` is built from (no keys).")
    name = property(lambda self: self.parameters.name, doc="Name of the parameter set.")
    slots = property(lambda self: self._e.slots, doc="Maximum slot count, N/2.")
    max_level = property(lambda self: self._e.max_level)
    default_scale = property(lambda self: self._e.default_scale)
    can_bootstrap = property(lambda self: self._e.can_bootstrap,
                             doc="Whether it bootstraps: its parameters have a circuit and its "
                                 "keys serve it (``parameters.can_bootstrap``: the first only).")
    bootstrap_output_level = property(lambda self: self._e.bootstrap_output_level)

    bootstrap_input_scale = property(lambda self: self._e.bootstrap_input_scale,
                                     doc="Largest scale a ciphertext may have when it is "
                                         "bootstrapped.")
    bootstrap_rotations = property(lambda self: self._e.bootstrap_rotations,
                                   doc="Rotation steps the bootstrapping circuit needs keys for.")

    def _own(self, cts):
        cts = list(cts)
        for c in cts:
            if not isinstance(c, Ciphertext) or c._ctx is not self:
                raise BasaltError("this ciphertext belongs to another context")
        return [c._live() for c in cts]

    def mul_batch(self, pairs, *, progress=None) -> list:
        """Throughput mode: ``a * b`` (relinearised; rescale after) for every ``(a, b)`` in
        ``pairs``, one pair per core (``RAYON_NUM_THREADS``), without the GIL. Bit for bit the
        results of ``a * b`` one at a time. One context may also be used from many Python
        threads at once: every operation releases the GIL. ``progress(stage, done, total)`` is
        called as the batch advances; Ctrl-C, or an exception the callback raises, stops it.

        >>> import numpy as np, basalt
        >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
        >>> cts = [ctx.encrypt(np.full(4, float(i))) for i in range(3)]
        >>> seen = []
        >>> out = ctx.mul_batch([(c, c) for c in cts], progress=lambda *a: seen.append(a))
        >>> [int(round(float(ctx.decrypt(c.rescale())[0].real))) for c in out]
        [0, 1, 4]
        >>> seen[-1]
        ('mul_batch', 3, 3)
        """
        pairs = list(pairs)
        a = self._own(p[0] for p in pairs)
        b = self._own(p[1] for p in pairs)
        return [Ciphertext(self, r) for r in self._e.mul_batch(list(zip(a, b)), progress)]

    def rotate_batch(self, cts, k: int, *, progress=None) -> list:
        """Throughput mode: every ciphertext rotated left by ``k``, one per core, without the
        GIL (``progress`` as in `mul_batch`)."""
        return [Ciphertext(self, r)
                for r in self._e.rotate_batch(self._own(cts), int(k), progress)]

    def rescale_batch(self, cts, *, progress=None) -> list:
        """Throughput mode: every ciphertext rescaled, one per core, without the GIL
        (``progress`` as in `mul_batch`)."""
        return [Ciphertext(self, r) for r in self._e.rescale_batch(self._own(cts), progress)]

    def evaluate(self, ct: Ciphertext, f, interval=(-1.0, 1.0), degree=15) -> Ciphertext:
        """``f`` (a Python function) on every slot of ``ct``, for inputs in ``interval``:
        its Chebyshev interpolant of ``degree`` evaluated by the library's polynomial
        evaluator (baby-step giant-step, Paterson–Stockmeyer).

        >>> import numpy as np, basalt
        >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=6)
        >>> x = np.linspace(-1, 1, 8)
        >>> y = ctx.evaluate(ctx.encrypt(x), np.tanh, interval=(-1, 1), degree=7)
        >>> bool(np.abs(ctx.decrypt(y).real - np.tanh(x)).max() < 1e-3)
        True
        """
        raw = self._e.evaluate_chebyshev(ct._live(), f, float(interval[0]), float(interval[1]),
                                         int(degree))
        return Ciphertext(self, raw)


def _trim_heap() -> None:
    """Hand freed memory back to the system. The C allocator keeps freed blocks of a few MB
    (one limb set of a key at N = 2^16) in its heaps, so dropping gigabytes of keys would not
    lower the resident size without this (glibc; elsewhere nothing to do)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


class Server(_Engine):
    """The server role: parameters plus evaluation keys, no secret. Every homomorphic
    operation, bootstrapping included when the keys carry it; no ``decrypt``.

    >>> import numpy as np, basalt
    >>> client = basalt.ckks.Context.toy_insecure(log_n=10, levels=3)
    >>> server = basalt.ckks.Server(client.parameters, client.evaluation_keys(rotations=[1]))
    >>> ct = server.ciphertext_from_bytes(client.encrypt(np.arange(4.0)).to_bytes())
    >>> out = client.ciphertext_from_bytes(((ct * ct).rescale().rotate(1)).to_bytes())
    >>> bool(np.allclose(client.decrypt(out).real, np.roll(np.arange(4.0) ** 2, -1), atol=1e-3))
    True
    >>> hasattr(server, "decrypt")
    False
    """

    __slots__ = ("_c", "auto_rescale")

    def __init__(self, params: Parameters, keys: EvaluationKeys):
        if not isinstance(params, Parameters) or not isinstance(keys, EvaluationKeys):
            raise BasaltError("Server(params, keys) takes a basalt.ckks.Parameters and a "
                              "basalt.ckks.EvaluationKeys")
        self._c = _basalt.CkksServer(params._p, keys._k)
        self.auto_rescale = False

    _e = property(lambda self: self._c, doc="The engine: every homomorphic operation.")

    rotations = property(lambda self: self._c.rotations,
                         doc="Rotation steps the keys cover.")


class Context(_Engine):
    """The client role: parameters, the secret and public keys, and evaluation keys for the
    requested rotations (it makes every evaluation key a server needs).

    Build it from a named preset (`basalt.ckks.presets()`), or `toy_insecure` for small rings;
    ``bootstrapping=True`` (or `toy_bootstrappable`) makes a context that also bootstraps.
    With ``symbolic=True`` the context is in trace mode: no key pair, shape-only ciphertexts
    from `encrypt_symbolic`, and every operation emits the kernels a real run executes without
    computing them (record them with `basalt.sim.record`, time them with `basalt.sim.run`).

    >>> import numpy as np, basalt
    >>> ctx = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3)
    >>> x = np.linspace(-0.5, 0.5, 8)
    >>> ct = ctx.encrypt(x, level=0)
    >>> y = (ctx.bootstrap(ct) * 0.5).rescale() + 0.25   # an ordinary ciphertext
    >>> bool(np.abs(ctx.decrypt(y).real - (x * 0.5 + 0.25)).max() < 1e-3)
    True
    """

    def __init__(self, raw):
        import threading
        self._c = raw
        self._lock = threading.Lock()
        self.auto_rescale = False

    @classmethod
    def preset(cls, name: str, *, rotations=(), conjugate=False, seeded_keys=False,
               symbolic=False, bootstrapping=False, log_slots=None,
               allow_insecure=False, progress=None) -> "Context":
        """A named preset (``bootstrapping=True``: with the keys of its bootstrapping circuit).
        One estimated below 128-bit security (``basalt security`` lists them) raises unless
        ``allow_insecure=True``. ``progress(stage, done, total)`` is called after every key
        generated; Ctrl-C, or an exception the callback raises, stops the generation there."""
        return cls(_basalt.CkksContext.preset(name, [int(k) for k in rotations], conjugate,
                                              seeded_keys, symbolic, bootstrapping, log_slots,
                                              allow_insecure=allow_insecure, progress=progress))

    @classmethod
    def toy_insecure(cls, *, log_n=12, levels=4, log_q0=55, log_q=40, log_p=56, k=1, dnum=None,
                     rotations=(), conjugate=False, symbolic=False, progress=None) -> "Context":
        """A small, INSECURE context (``progress`` as in `preset`).

        >>> import basalt
        >>> seen = []
        >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2, rotations=[1, 2],
        ...                                        progress=lambda *a: seen.append(a))
        >>> seen[-1][1:]
        (3, 3)
        """
        return cls(_basalt.CkksContext.toy_insecure(log_n, levels, log_q0, log_q, log_p, k, dnum,
                                                   [int(r) for r in rotations], conjugate,
                                                   symbolic, progress))

    @classmethod
    def toy_bootstrappable(cls, *, log_n=10, log_slots=None, residual_levels=2,
                           rotations=(), progress=None) -> "Context":
        """A small, INSECURE context that bootstraps (Lattigo's chain shape); ``progress`` as
        in `preset`."""
        return cls(_basalt.CkksContext.toy_bootstrappable(log_n, log_slots, residual_levels,
                                                         [int(r) for r in rotations], progress))

    symbolic = property(lambda self: self._c.symbolic, doc="True in trace mode (no key pair).")
    rotations = property(lambda self: self._c.rotations,
                         doc="Rotation steps the evaluation keys cover.")
    _e = property(lambda self: self._c.evaluator,
                  doc="The engine on this context's evaluation keys (the same a Server runs).")

    def evaluation_keys(self, rotations=None, *, conjugate=False, seeded=False,
                        bootstrapping=True, progress=None) -> EvaluationKeys:
        """Fresh evaluation keys for a server: relinearisation, ``rotations`` (default: this
        context's), conjugation if asked, and the bootstrapping keys (encapsulation keys
        included) if this context bootstraps. ``seeded``: half the bytes, expanded on load.
        ``progress`` as in `preset` (keys this context already holds are not made again)."""
        rot = None if rotations is None else [int(k) for k in rotations]
        return EvaluationKeys(self._c.evaluation_keys(rot, bool(conjugate), bool(seeded),
                                                      bool(bootstrapping), progress))

    def drop_evaluation_keys(self) -> None:
        """Free the evaluation keys this context holds, and its encoded bootstrapping circuit
        (gigabytes at N = 2^16), once the servers have theirs: the context still encrypts,
        decrypts and makes keys on request (`evaluation_keys`, generated anew), but its own
        operations that need a key, and bootstrapping, raise `BasaltError`. Safe from several
        threads.

        >>> import basalt
        >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2, rotations=[1])
        >>> ctx.drop_evaluation_keys()
        >>> ctx.evaluation_keys().rotations   # made again, same key set
        [1]
        """
        with self._lock:
            self._c = self._c.without_evaluation_keys()
        _trim_heap()

    def public_key(self) -> "PublicKey":
        """The public key (it encrypts; no secret inside)."""
        return PublicKey(self._c.public_key())

    def export_secret_key(self) -> bytes:
        """The secret key as bytes: the only way it leaves this process."""
        return self._c.export_secret_key()

    def add_rotations(self, rotations, *, progress=None) -> None:
        """Also hold evaluation keys for ``rotations`` (e.g. a `LinearTransform`'s). The key
        pair stays, so ciphertexts of this context stay valid; the evaluation keys are
        generated anew (seconds at N = 2^16; ``progress`` as in `preset`). Safe from several
        threads."""
        want = set(int(k) for k in rotations)
        with self._lock:
            missing = sorted(want - set(self._c.rotations))
            if missing:
                self._c = self._c.with_rotations(missing, progress)

    def encrypt_symbolic(self, slots: int, *, level=None, scale=None) -> Ciphertext:
        """A shape-only ciphertext of ``slots`` slots (symbolic contexts only)."""
        return Ciphertext(self, self._c.encrypt_symbolic(int(slots), level, scale))

    def encrypt(self, values, *, level=None, scale=None) -> Ciphertext:
        """Encrypt a 1-D numeric array (real or complex; length a power of two ≤ slots)."""
        v = np.asarray(values)
        if v.dtype.kind not in "iufc":
            raise BasaltError(f"values must be numeric, got dtype {v.dtype}")
        if v.ndim != 1:
            raise BasaltError(f"expected a 1-D array, got shape {v.shape}")
        if level is not None and (isinstance(level, bool) or not isinstance(level, (int, np.integer))):
            raise BasaltError(f"level must be an integer, got {level!r}")
        if scale is None and level is not None and self.can_bootstrap and int(level) == 0:
            scale = self.bootstrap_input_scale
        v = np.ascontiguousarray(v, dtype=np.complex128)
        return Ciphertext(self, self._c.encrypt(v, None if level is None else int(level),
                                                None if scale is None else float(scale)))

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        """Decrypt and decode to a complex128 array."""
        if not isinstance(ct, Ciphertext) or ct._ctx is not self:
            raise BasaltError("this ciphertext belongs to another context: load it with "
                              "ctx.ciphertext_from_bytes(ct.to_bytes())")
        return self._c.decrypt(ct._live())

    def evaluation_keys_to_bytes(self) -> bytes:
        return self._c.evaluation_keys_to_bytes()

    def check_evaluation_keys(self, data: bytes) -> int:
        """Validate serialized evaluation keys (well formed and of this key set); returns the
        number of Galois keys."""
        return self._c.check_evaluation_keys(bytes(data))

    @staticmethod
    def precision(want, have) -> dict:
        """Precision in bits (−log2 of each slot's error) as Lattigo v6 reports it.

        Keys: min/max/median slot, mean (mean of the per-slot precisions, Lattigo's
        AVGLog2Prec) and mean_error (−log2 of the mean error, never above mean); each for the
        complex value and, with a ``_real`` suffix, the real part. A slot that is not finite
        (NaN, infinity) counts as no precision at all: every figure is then −inf.
        """
        w = np.ascontiguousarray(want, dtype=np.complex128)
        h = np.ascontiguousarray(have, dtype=np.complex128)
        d = _basalt.CkksContext.precision(w, h)
        if not np.all(np.isfinite(h)):
            d = {k: float("-inf") for k in d}
        return d


class LinearTransform:
    """``M·x`` on encrypted vectors: the matrix's diagonals encoded once, applied as the
    library's diagonal method or baby-step giant-step product.

    ``matrix`` is a square ``slots × slots`` array (real or complex), or give ``diagonals`` as
    ``{k: d_k}`` with ``d_k[i] = M[i, (i + k) mod slots]``. The input must be at ``level``
    (default: the top) with ``slots`` slots; the output is rescaled, one level lower.

    Plan: ``n1`` baby steps (``slots`` gives the hoisted diagonal method); ``None`` takes the
    plan of fewest modular multiplications with at most ``max_partials`` giant steps (Osiris'
    rule). ``hoisting``: ``"none"``, ``"single"`` or ``"double"`` (Bossuat et al.: baby steps
    and sums kept over Q∪P). ``order``: ``"baby-step"`` (Lattigo's) or ``"giant-step"``
    (Osiris' GSC: one rotation alive at a time, at most ``max_partials`` partial sums), whose
    diagonals are regenerated from one stored limb (``of_limb=True``, OF-Limb) or stored whole.
    With the same split and hoisting, the loop order and the diagonal store give bit-identical
    results; the plans differ in cost (`predicted_cost`) and in what they keep alive, which
    `basalt.sim` shows on the accelerator models.

    The context needs keys for `rotations`: ``ctx.add_rotations(lt.rotations)`` (a server
    loads just those: ``EvaluationKeys.from_bytes(params, data, rotations=lt.rotations)``).
    A rectangular ``rows × cols`` matrix (both powers of two) is padded to a square one of the
    larger size; the input then holds ``cols`` values (repeated to fill the slots when rows >
    cols), the first ``rows`` output slots hold ``M·x``.

    >>> import numpy as np, basalt
    >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    >>> m = np.arange(64.0).reshape(8, 8) / 64
    >>> lt = basalt.ckks.LinearTransform(ctx, m, n1=4)
    >>> ctx.add_rotations(lt.rotations)
    >>> x = np.linspace(-1, 1, 8)
    >>> bool(np.allclose(ctx.decrypt(lt(ctx.encrypt(x))).real, m @ x, atol=1e-4))
    True

    A rectangular matrix (4 × 8 here: the first 4 output slots), applied on a server that
    loaded only the transform's rotation keys:

    >>> r = np.arange(32.0).reshape(4, 8) / 32
    >>> rect = basalt.ckks.LinearTransform(ctx, r)
    >>> server = basalt.ckks.Server(ctx.parameters, ctx.evaluation_keys(rotations=rect.rotations))
    >>> ct = server.ciphertext_from_bytes(ctx.encrypt(x).to_bytes())
    >>> out = ctx.ciphertext_from_bytes(rect(ct).to_bytes())
    >>> bool(np.allclose(ctx.decrypt(out).real[:4], r @ x, atol=1e-4))
    True
    """

    def __init__(self, ctx: Context, matrix=None, *, diagonals=None, level=None, n1=None,
                 hoisting="double", order="baby-step", max_partials=4, of_limb=True):
        if (matrix is None) == (diagonals is None):
            raise BasaltError("give either a matrix or its diagonals")
        if matrix is not None:
            m = np.asarray(matrix, dtype=np.complex128)
            if m.ndim != 2:
                raise BasaltError(f"expected a 2-D matrix, got shape {m.shape}")
            r, c = m.shape
            if r != c:
                if r & (r - 1) or c & (c - 1):
                    raise BasaltError(f"a rectangular matrix needs power-of-two sides, got {m.shape}")
                # Pad to square; with rows > cols the input is replicated, so tile the columns.
                n = max(r, c)
                sq = np.zeros((n, n), dtype=np.complex128)
                if r > c:
                    sq[:r, :c] = m / (n // c)
                    sq = np.tile(sq[:, :c], (1, n // c))
                else:
                    sq[:r, :c] = m
                m = sq
            slots = m.shape[0]
            rows = np.arange(slots)
            diagonals = {}
            for k in range(slots):
                d = m[rows, (rows + k) % slots]
                if np.any(d != 0):
                    diagonals[k] = d
        else:
            lens = {len(np.asarray(v)) for v in diagonals.values()}
            if len(lens) > 1:
                raise BasaltError(f"every diagonal needs the same length (the slot count), "
                                  f"got lengths {sorted(lens)}")
            slots = lens.pop() if lens else 0
        if n1 is not None and int(n1) < 1:
            raise BasaltError(f"n1 must be a positive number of baby steps, not {n1}")
        diags = {int(k): np.ascontiguousarray(v, dtype=np.complex128)
                 for k, v in diagonals.items()}
        self._ctx = ctx
        self._raw = _basalt.linear_transform(ctx._e, diags, int(slots), level,
                                             None if n1 is None else int(n1), hoisting, order,
                                             int(max_partials), bool(of_limb))
        self.slots = int(slots)

    rotations = property(lambda self: self._raw.rotations,
                         doc="Rotation steps whose keys the context needs.")
    level = property(lambda self: self._raw.level, doc="The level the input must be at.")
    n1 = property(lambda self: self._raw.n1, doc="Baby steps of the resolved plan.")
    n2 = property(lambda self: self._raw.n2, doc="Giant steps of the resolved plan.")

    def predicted_cost(self) -> dict:
        """Closed-form counts of one application (rotations, key switches, NTT limbs,
        modular multiplications, plaintext and key bytes)."""
        return dict(self._raw.predicted_cost())

    def __call__(self, ct: Ciphertext) -> Ciphertext:
        """``M·x``, rescaled, computed by the context or server ``ct`` is bound to (it must
        hold keys for `rotations`): a transform built on the client applies on a server of
        the same parameters."""
        if not isinstance(ct, Ciphertext):
            raise BasaltError("expected a basalt.ckks.Ciphertext")
        return Ciphertext(ct._ctx, _basalt.linear_transform_apply(ct._ctx._e, self._raw,
                                                                   ct._live()))

    def __repr__(self):
        return repr(self._raw)


def presets(security=False):
    """[(name, aliases)] of the CKKS presets built into the package; with ``security=True``,
    [(name, aliases, security)] with each preset's estimate (:func:`security`; this builds
    every preset, a minute or more)."""
    names = _basalt.ckks_presets()
    if not security:
        return names
    return [(n, a, _basalt.ckks_security(n)) for n, a in names]


def security(preset: str) -> dict:
    """A preset's estimated security (the lattice estimator of `basalt security`): ``bits``,
    ``meets`` (128, 192, 256 or ``None`` below 128), ``log_qp``, the cheapest ``attack`` and its
    BKZ block size ``beta``, the ``secret`` as estimated, ``core_svp_bits`` (the 0.292β model,
    for comparison), ``source`` and ``claimed`` (the source's own figure, if it states one).

    >>> s = security("OSIRIS_SET_I")
    >>> s["bits"] >= 128 and s["meets"] >= 128
    True
    >>> security("CRATERLAKE_80_BOOT")["meets"] is None
    True
    """
    return _basalt.ckks_security(preset)


def estimate(preset: str, rotations=0, *, conjugate=False, bootstrapping=False,
             seeded=False) -> dict:
    """Bytes the keys of ``preset`` will take, before generating them: ``per_key``, ``keys``,
    ``bootstrapping`` (the bootstrapping circuit's keys when ``bootstrapping=True``, whose
    relinearisation key is then the only one: ``keys`` counts the rotations and conjugation),
    ``total`` and ``available`` (the machine's free memory, ``None`` where unknown).
    ``rotations`` is a count or a list of steps. Key generation refuses a set whose total
    exceeds ``available``.

    >>> e = estimate("CRATERLAKE_80_BOOT_UNPACKED", rotations=[1, 2, 4], bootstrapping=True)
    >>> e["keys"], e["per_key"] > 100 * 2**20, e["total"] > e["bootstrapping"] > 0
    (3, True, True)
    """
    n = rotations if isinstance(rotations, int) else len(list(rotations))
    if isinstance(n, bool) or n < 0:
        raise BasaltError(f"rotations must be a count or a list of steps, not {rotations!r}")
    return _basalt.ckks_estimate(preset, n, conjugate, bootstrapping, seeded)
