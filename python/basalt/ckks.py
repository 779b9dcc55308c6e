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

BasaltError = _basalt.BasaltError


class Ciphertext:
    """An encrypted vector bound to its context; arithmetic operators run homomorphically."""

    __slots__ = ("_ctx", "_raw")

    def __init__(self, ctx: "Context", raw):
        self._ctx = ctx
        self._raw = raw

    level = property(lambda self: self._raw.level, doc="Index of the top prime of Q.")
    scale = property(lambda self: self._raw.scale, doc="Scale Δ of the encoding.")
    slots = property(lambda self: self._raw.slots, doc="Number of encrypted slots.")

    def _wrap(self, raw) -> "Ciphertext":
        return Ciphertext(self._ctx, raw)

    def __add__(self, other):
        if isinstance(other, Ciphertext):
            return self._wrap(self._ctx._c.add(self._raw, other._raw))
        return self._wrap(self._ctx._c.add_const(self._raw, complex(other)))

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Ciphertext):
            return self._wrap(self._ctx._c.sub(self._raw, other._raw))
        return self._wrap(self._ctx._c.add_const(self._raw, -complex(other)))

    def __neg__(self):
        return self._wrap(self._ctx._c.neg(self._raw))

    def __mul__(self, other):
        """Ciphertext × ciphertext (relinearised) or × real constant; call `rescale()` after."""
        if isinstance(other, Ciphertext):
            return self._wrap(self._ctx._c.mul(self._raw, other._raw))
        return self._wrap(self._ctx._c.mul_const(self._raw, float(other)))

    __rmul__ = __mul__

    def rescale(self) -> "Ciphertext":
        return self._wrap(self._ctx._c.rescale(self._raw))

    def rotate(self, k: int) -> "Ciphertext":
        """Rotate slots left by k (the context needs a rotation key for k)."""
        return self._wrap(self._ctx._c.rotate(self._raw, int(k)))

    def conjugate(self) -> "Ciphertext":
        return self._wrap(self._ctx._c.conjugate(self._raw))

    def drop_to(self, level: int) -> "Ciphertext":
        """Drop to a lower level without rescaling (exact)."""
        return self._wrap(self._ctx._c.drop_to_level(self._raw, int(level)))

    def to_bytes(self) -> bytes:
        """Serialize (load it back with `Context.ciphertext_from_bytes`)."""
        return self._ctx._c.ciphertext_to_bytes(self._raw)

    def __repr__(self):
        return repr(self._raw)


class Context:
    """Parameters, keys and evaluator of one CKKS instance.

    Build it from a named preset (`basalt.ckks.presets()`), or `toy_insecure` for small rings.
    With ``symbolic=True`` the context is in trace mode: no key pair, shape-only ciphertexts
    from `encrypt_symbolic`, and every operation emits the kernels a real run executes without
    computing them (record them with `basalt.sim.record`, time them with `basalt.sim.run`).
    """

    def __init__(self, raw):
        self._c = raw

    @classmethod
    def preset(cls, name: str, *, rotations=(), conjugate=False, seeded_keys=False,
               symbolic=False, allow_insecure=False) -> "Context":
        """A named preset. One estimated below 128-bit security (``basalt security`` lists
        them) raises unless ``allow_insecure=True``."""
        return cls(_basalt.CkksContext.preset(name, list(rotations), conjugate, seeded_keys,
                                              symbolic, allow_insecure=allow_insecure))

    @classmethod
    def toy_insecure(cls, *, log_n=12, levels=4, log_q0=55, log_q=40, log_p=56, k=1, dnum=None,
                     rotations=(), conjugate=False, symbolic=False) -> "Context":
        return cls(_basalt.CkksContext.toy_insecure(log_n, levels, log_q0, log_q, log_p, k, dnum,
                                                   list(rotations), conjugate, symbolic))

    slots = property(lambda self: self._c.slots, doc="Maximum slot count, N/2.")
    max_level = property(lambda self: self._c.max_level)
    default_scale = property(lambda self: self._c.default_scale)
    name = property(lambda self: self._c.name)
    symbolic = property(lambda self: self._c.symbolic, doc="True in trace mode (no key pair).")
    rotations = property(lambda self: self._c.rotations,
                         doc="Rotation steps the evaluation keys cover.")

    def add_rotations(self, rotations) -> None:
        """Also hold evaluation keys for ``rotations`` (e.g. a `LinearTransform`'s). The key
        pair stays, so ciphertexts of this context stay valid; the evaluation keys are
        generated anew (seconds at N = 2^16)."""
        missing = sorted(set(int(k) for k in rotations) - set(self._c.rotations))
        if missing:
            self._c = self._c.with_rotations(missing)

    def encrypt_symbolic(self, slots: int, *, level=None, scale=None) -> Ciphertext:
        """A shape-only ciphertext of ``slots`` slots (symbolic contexts only)."""
        return Ciphertext(self, self._c.encrypt_symbolic(int(slots), level, scale))

    def encrypt(self, values, *, level=None, scale=None) -> Ciphertext:
        """Encrypt a 1-D array (real or complex; length a power of two ≤ slots)."""
        v = np.ascontiguousarray(np.asarray(values), dtype=np.complex128)
        if v.ndim != 1:
            raise BasaltError(f"expected a 1-D array, got shape {v.shape}")
        return Ciphertext(self, self._c.encrypt(v, level, scale))

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        """Decrypt and decode to a complex128 array."""
        if not isinstance(ct, Ciphertext) or ct._ctx is not self:
            raise BasaltError("this ciphertext belongs to another context")
        return self._c.decrypt(ct._raw)

    def _own(self, cts):
        for c in cts:
            if not isinstance(c, Ciphertext) or c._ctx is not self:
                raise BasaltError("this ciphertext belongs to another context")
        return [c._raw for c in cts]

    def mul_batch(self, pairs) -> list:
        """Throughput mode: ``a * b`` (relinearised; rescale after) for every ``(a, b)`` in
        ``pairs``, one pair per core (``RAYON_NUM_THREADS``), without the GIL. Bit for bit the
        results of ``a * b`` one at a time. One context may also be used from many Python
        threads at once: every operation releases the GIL."""
        pairs = list(pairs)
        a = self._own(p[0] for p in pairs)
        b = self._own(p[1] for p in pairs)
        return [Ciphertext(self, r) for r in self._c.mul_batch(list(zip(a, b)))]

    def rotate_batch(self, cts, k: int) -> list:
        """Throughput mode: every ciphertext rotated left by ``k``, one per core, without the GIL."""
        return [Ciphertext(self, r) for r in self._c.rotate_batch(self._own(cts), int(k))]

    def rescale_batch(self, cts) -> list:
        """Throughput mode: every ciphertext rescaled, one per core, without the GIL."""
        return [Ciphertext(self, r) for r in self._c.rescale_batch(self._own(cts))]

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        """Load a ciphertext serialized under this context's parameters; corrupted or foreign
        bytes raise `BasaltError`."""
        return Ciphertext(self, self._c.ciphertext_from_bytes(bytes(data)))

    def evaluation_keys_to_bytes(self) -> bytes:
        return self._c.evaluation_keys_to_bytes()

    def check_evaluation_keys(self, data: bytes) -> int:
        """Validate serialized evaluation keys; returns the number of Galois keys."""
        return self._c.check_evaluation_keys(bytes(data))

    @staticmethod
    def precision(want, have) -> dict:
        """Precision in bits (−log2 of each slot's error) as Lattigo v6 reports it.

        Keys: min/max/median slot, mean (mean of the per-slot precisions, Lattigo's
        AVGLog2Prec) and mean_error (−log2 of the mean error, never above mean); each for the
        complex value and, with a ``_real`` suffix, the real part.
        """
        w = np.ascontiguousarray(want, dtype=np.complex128)
        h = np.ascontiguousarray(have, dtype=np.complex128)
        return _basalt.CkksContext.precision(w, h)


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

    The context needs keys for `rotations`: ``ctx.add_rotations(lt.rotations)``.

    >>> import numpy as np, basalt
    >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    >>> m = np.arange(64.0).reshape(8, 8) / 64
    >>> lt = basalt.ckks.LinearTransform(ctx, m, n1=4)
    >>> ctx.add_rotations(lt.rotations)
    >>> x = np.linspace(-1, 1, 8)
    >>> bool(np.allclose(ctx.decrypt(lt(ctx.encrypt(x))).real, m @ x, atol=1e-4))
    True
    """

    def __init__(self, ctx: Context, matrix=None, *, diagonals=None, level=None, n1=None,
                 hoisting="double", order="baby-step", max_partials=4, of_limb=True):
        if (matrix is None) == (diagonals is None):
            raise BasaltError("give either a matrix or its diagonals")
        if matrix is not None:
            m = np.asarray(matrix, dtype=np.complex128)
            if m.ndim != 2 or m.shape[0] != m.shape[1]:
                raise BasaltError(f"expected a square matrix, got shape {m.shape}")
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
        self._raw = _basalt.linear_transform(ctx._c, diags, int(slots), level,
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
        """``M·x``, rescaled (the context must hold keys for `rotations`)."""
        if not isinstance(ct, Ciphertext):
            raise BasaltError("expected a basalt.ckks.Ciphertext")
        return Ciphertext(ct._ctx, _basalt.linear_transform_apply(self._ctx._c, self._raw,
                                                                   ct._raw))

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
    """The security estimate a preset's parameters carry: ``bits``, ``meets`` (128, 192, 256
    or ``None`` below 128), ``log_qp``, ``sparse_caveat`` (a sparse secret: the figure is an
    upper bound), ``extrapolated``, ``source`` (the table used) and ``claimed`` (the source's
    own figure, if it states one).

    >>> s = security("OSIRIS_SET_I")
    >>> sorted(s) == ["bits", "claimed", "extrapolated", "log_qp", "meets", "source",
    ...               "sparse_caveat"]
    True
    """
    return _basalt.ckks_security(preset)


def estimate(preset: str, rotations=0, *, conjugate=False, bootstrapping=False,
             seeded=False) -> dict:
    """Bytes the keys of ``preset`` will take, before generating them: ``per_key``, ``keys``,
    ``bootstrapping`` (the bootstrapping circuit's keys when ``bootstrapping=True``), ``total``
    and ``available`` (the machine's free memory, ``None`` where unknown). ``rotations`` is a
    count or a list of steps. Key generation refuses a set whose total exceeds ``available``.

    >>> e = estimate("CRATERLAKE_80_BOOT_UNPACKED", rotations=[1, 2, 4], bootstrapping=True)
    >>> e["keys"], e["per_key"] > 100 * 2**20, e["total"] > e["bootstrapping"] > 0
    (4, True, True)
    """
    n = rotations if isinstance(rotations, int) else len(list(rotations))
    if isinstance(n, bool) or n < 0:
        raise BasaltError(f"rotations must be a count or a list of steps, not {rotations!r}")
    return _basalt.ckks_estimate(preset, n, conjugate, bootstrapping, seeded)
