"""CKKS parameters and keys as objects, in memory and on disk: what a server is built from.

`Parameters` (no key), each evaluation key on its own (`RelinearizationKey`, `RotationKey`,
`ConjugationKey`, the bootstrapping circuit's `BootstrappingKeys`) and the public key, the
`EvaluationKeys` set a `basalt.ckks.Server` takes, and a key set written one file per key
(`save_keys`, `KeyFiles`) so that a server loads only the files of its role.

Import them from their public modules: `basalt.ckks` (the keys and parameters) and
`basalt.distributed` (`save_keys`, `KeyFiles`); each class names that module as its own, so
pickles, reprs and the documentation refer to the public path.
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

from . import _basalt

BasaltError = _basalt.BasaltError


def _public_in(module: str):
    """Class decorator: the class and its methods report ``module``, the public module they
    are imported from, as theirs. Pickles refer to a class by its module (and must keep
    loading there), and doctest collects a class's examples from the module it names."""
    def mark(cls):
        cls.__module__ = module
        for v in vars(cls).values():
            f = getattr(v, "__func__", v)
            if inspect.isfunction(f):
                f.__module__ = module
        return cls
    return mark


@_public_in("basalt.ckks")
class Parameters:
    """A parameter set (and bootstrapping configuration), without keys: what a server is
    built from. Pickles as JSON."""

    __slots__ = ("_p",)

    def __init__(self, raw):
        self._p = raw

    name = property(lambda self: self._p.name, doc="Name of the parameter set.")
    can_bootstrap = property(lambda self: self._p.can_bootstrap,
                             doc="Whether they carry a bootstrapping circuit.")

    def to_json(self) -> str:
        return self._p.to_json()

    @classmethod
    def from_json(cls, s: str) -> "Parameters":
        return cls(_basalt.CkksParameters.from_json(str(s)))

    def __reduce__(self):
        return (Parameters.from_json, (self.to_json(),))

    def __repr__(self):
        return repr(self._p)


@_public_in("basalt.ckks")
class _Key:
    """One key of a key set: serializes to bytes and to a file, validates on load (checksum,
    shape, kind, parameter set) and carries the identity of its key set."""

    __slots__ = ("_k",)
    KIND = ""

    def __init__(self, raw):
        if raw.kind != self.KIND:
            raise BasaltError(f"a {raw.kind} key is not a {self.KIND} key")
        self._k = raw

    key_id = property(lambda self: self._k.key_id, doc="Identity of the key set (32 hex digits).")
    seeded = property(lambda self: self._k.seeded,
                      doc="Stored in seeded form (half the bytes; expanded on load).")

    def to_bytes(self) -> bytes:
        return self._k.to_bytes()

    @classmethod
    def from_bytes(cls, params: "Parameters", data: bytes):
        """The key in ``data``, validated for ``params``; bytes of another kind of key, of
        another parameter set, or corrupted raise `BasaltError` naming the problem."""
        if not isinstance(params, Parameters):
            raise BasaltError("from_bytes(params, data) takes a basalt.ckks.Parameters")
        return cls(_basalt.CkksKey.from_bytes(params._p, cls.KIND, bytes(data)))

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, params: "Parameters", path):
        with open(path, "rb") as f:
            return cls.from_bytes(params, f.read())

    def __repr__(self):
        return repr(self._k)


@_public_in("basalt.ckks")
class PublicKey(_Key):
    """The public key: encrypts, no secret (``Context.public_key()``)."""

    __slots__ = ()
    KIND = "public"


@_public_in("basalt.ckks")
class RelinearizationKey(_Key):
    """Switches ``s²`` back to ``s`` after a ciphertext product (``EvaluationKeys.relinearization``)."""

    __slots__ = ()
    KIND = "relinearization"


@_public_in("basalt.ckks")
class RotationKey(_Key):
    """The key of one rotation step (``EvaluationKeys.rotation(step)``)."""

    __slots__ = ()
    KIND = "rotation"
    step = property(lambda self: self._k.step, doc="Left rotation step it serves.")
    galois_element = property(lambda self: self._k.galois_element)


@_public_in("basalt.ckks")
class ConjugationKey(_Key):
    """The key of complex conjugation of the slots (``EvaluationKeys.conjugation``)."""

    __slots__ = ()
    KIND = "conjugation"
    galois_element = property(lambda self: self._k.galois_element)


@_public_in("basalt.ckks")
class BootstrappingKeys(_Key):
    """The bootstrapping circuit's encapsulation keys (the switches to the sparse ephemeral
    secret and back; ``EvaluationKeys.bootstrapping``). The circuit's rotation keys are
    ordinary `RotationKey` s (``Context.bootstrap_rotations`` lists their steps)."""

    __slots__ = ()
    KIND = "bootstrapping"


@_public_in("basalt.ckks")
class EvaluationKeys:
    """Relinearisation, rotation, conjugation and bootstrapping keys of one key set: no
    secret. Made by ``Context.evaluation_keys``; sent to a `Server` as bytes or a file.

    >>> import basalt
    >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    >>> keys = ctx.evaluation_keys(rotations=[1, 2, 4])
    >>> keys.rotations, keys.key_id == ctx.key_id
    ([1, 2, 4], True)
    >>> back = basalt.ckks.EvaluationKeys.from_bytes(ctx.parameters, keys.to_bytes(), rotations=[2])
    >>> back.rotations
    [2]
    """

    __slots__ = ("_k",)

    def __init__(self, raw):
        self._k = raw

    key_id = property(lambda self: self._k.key_id, doc="Identity of their key set.")
    rotations = property(lambda self: self._k.rotations, doc="Rotation steps held.")
    has_conjugation = property(lambda self: self._k.has_conjugation)
    has_bootstrapping = property(lambda self: self._k.has_bootstrapping)
    size_bytes = property(lambda self: self._k.size_bytes,
                          doc="Bytes of key material (seeded keys: the stored half).")

    def to_bytes(self) -> bytes:
        return self._k.to_bytes()

    @classmethod
    def from_bytes(cls, params: Parameters, data: bytes, *, rotations=None,
                   conjugate=None) -> "EvaluationKeys":
        """Validated keys for ``params``; with ``rotations`` (a program's list, e.g.
        ``LinearTransform.rotations``) only those rotation keys are kept (plus the
        bootstrapping circuit's when the parameters bootstrap). The conjugation key, when the
        bytes hold one, is kept unless ``conjugate=False`` (bootstrapping needs it);
        ``conjugate=True`` requires it."""
        rot = None if rotations is None else [int(k) for k in rotations]
        conj = None if conjugate is None else bool(conjugate)
        return cls(_basalt.CkksEvaluationKeys.from_bytes(params._p, bytes(data), rot, conj))

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, params: Parameters, path, *, rotations=None,
             conjugate=None) -> "EvaluationKeys":
        """`from_bytes` on the file at ``path``, with the same defaults: what was saved is
        kept, the conjugation key included (bootstrapping needs it), unless
        ``conjugate=False`` drops it or ``rotations`` narrows the rotation keys."""
        with open(path, "rb") as f:
            return cls.from_bytes(params, f.read(), rotations=rotations, conjugate=conjugate)

    def select(self, steps, *, conjugate=False, bootstrapping=False) -> "EvaluationKeys":
        """Only the relinearisation key, the rotation keys for ``steps`` and, with
        ``conjugate``, the conjugation key: what a server that runs one program without
        bootstrapping holds. With ``bootstrapping=True``, also every key the bootstrapping
        circuit needs (its rotation keys, the conjugation key and the encapsulation keys).
        A key asked for and not held raises `BasaltError` naming it.

        >>> import basalt
        >>> ctx = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3, rotations=[1])
        >>> keys = ctx.evaluation_keys()
        >>> some = keys.select([1])
        >>> some.rotations, some.has_conjugation, some.has_bootstrapping
        ([1], False, False)
        >>> keys.select([1], bootstrapping=True).has_bootstrapping
        True
        """
        return EvaluationKeys(self._k.select([int(k) for k in steps], bool(conjugate),
                                             bool(bootstrapping)))

    @property
    def relinearization(self) -> RelinearizationKey:
        """The relinearisation key."""
        return RelinearizationKey(self._k.relinearization())

    def rotation(self, step: int) -> RotationKey:
        """The key of the left rotation by ``step`` (`BasaltError` if not held)."""
        return RotationKey(self._k.rotation(int(step)))

    @property
    def conjugation(self):
        """The `ConjugationKey`, or ``None`` if not held."""
        raw = self._k.conjugation()
        return None if raw is None else ConjugationKey(raw)

    @property
    def bootstrapping(self):
        """The `BootstrappingKeys` (encapsulation keys), or ``None`` if not held."""
        raw = self._k.bootstrapping()
        return None if raw is None else BootstrappingKeys(raw)

    def keys(self) -> list:
        """Every key held, one object each (relinearisation, rotations, conjugation,
        bootstrapping): what `assemble` takes back."""
        out = [self.relinearization] + [self.rotation(k) for k in self.rotations]
        out += [k for k in (self.conjugation, self.bootstrapping) if k is not None]
        return out

    @classmethod
    def assemble(cls, params: Parameters, keys) -> "EvaluationKeys":
        """A key set from single keys (e.g. one file each, loaded with ``RotationKey.load``):
        all of ``params`` and of one key set, else `BasaltError` naming both identities.

        >>> import basalt
        >>> ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
        >>> keys = ctx.evaluation_keys(rotations=[1, 3])
        >>> r3 = basalt.ckks.RotationKey.from_bytes(ctx.parameters, keys.rotation(3).to_bytes())
        >>> r3.step, r3.key_id == ctx.key_id
        (3, True)
        >>> some = basalt.ckks.EvaluationKeys.assemble(ctx.parameters, [keys.relinearization, r3])
        >>> some.rotations
        [3]
        """
        keys = list(keys)
        for k in keys:
            if not isinstance(k, _Key) or isinstance(k, PublicKey):
                raise BasaltError(f"assemble takes evaluation keys, not {type(k).__name__}")
        return cls(_basalt.CkksEvaluationKeys.assemble(params._p, [k._k for k in keys]))


_MANIFEST = "keys.json"


def save_keys(params: Parameters, keys: EvaluationKeys, directory) -> "KeyFiles":
    """Write ``keys`` to ``directory`` one file per key (relinearisation, each rotation,
    conjugation, the bootstrapping keys; seeded keys stay seeded, half the bytes) and a
    manifest, ``keys.json``. One key is serialized at a time, so writing holds the set once
    plus one key, where ``keys.save`` holds it three times over (the set, its bytes, the
    file's buffer). Returns the :class:`KeyFiles` of everything written; a worker then loads
    only the files of its role (:meth:`KeyFiles.select`). No secret is written."""
    if not isinstance(params, Parameters) or not isinstance(keys, EvaluationKeys):
        raise BasaltError("save_keys(params, keys, directory) takes a basalt.ckks.Parameters "
                          "and a basalt.ckks.EvaluationKeys")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    entries = []

    def put(kind, key, name, **extra):
        key.save(d / name)
        entries.append({"kind": kind, "file": name, **extra})

    put("relinearization", keys.relinearization, "relinearization.key")
    for k in keys.rotations:
        r = keys.rotation(k)  # one key in memory at a time
        put("rotation", r, f"rotation_{r.galois_element}.key", step=r.step,
            galois_element=r.galois_element)
    conj = keys.conjugation
    if conj is not None:
        put("conjugation", conj, "conjugation.key", galois_element=conj.galois_element)
    boot = keys.bootstrapping
    if boot is not None:
        put("bootstrapping", boot, "bootstrapping.key")
    manifest = {"key_id": keys.key_id, "parameters": params.name, "keys": entries}
    (d / _MANIFEST).write_text(json.dumps(manifest, indent=1))
    return KeyFiles(d)


@_public_in("basalt.distributed")
class KeyFiles:
    """Evaluation keys saved one file per key (:func:`save_keys`) in a directory every worker
    reads, and which of them a worker loads: the relinearisation key, ``rotations`` (steps;
    ``None``: every rotation key there), the conjugation key (``conjugate``: ``None`` when
    there, ``True`` required, ``False`` not loaded) and, with ``bootstrapping``, every key the
    parameters' bootstrapping circuit needs (its rotation keys, the conjugation key and the
    encapsulation keys; parameters without a circuit need none). A worker loads the selected
    files one at a time, each validated and expanded on its own, and builds the bootstrapping
    circuit only with ``bootstrapping``. Small and picklable: what travels to a worker is the
    path and the selection."""

    def __init__(self, directory, *, rotations=None, conjugate=None, bootstrapping=True):
        self.directory = os.fspath(directory)
        path = Path(self.directory) / _MANIFEST
        try:
            manifest = json.loads(path.read_text())
            self.key_id = str(manifest["key_id"])
            self._entries = [dict(e) for e in manifest["keys"]]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise BasaltError(f"{path}: not a key directory written by save_keys ({e})") \
                from None
        self.rotations = None if rotations is None else [int(k) for k in rotations]
        self.conjugate = None if conjugate is None else bool(conjugate)
        self.bootstrapping = bool(bootstrapping)

    def select(self, rotations, *, conjugate=False, bootstrapping=False) -> "KeyFiles":
        """The relinearisation key and the keys of ``rotations`` only, and the conjugation key
        with ``conjugate``: what a worker that runs one program without bootstrapping loads.
        With ``bootstrapping=True``, also every key the bootstrapping circuit needs (its
        rotation keys, the conjugation key and the encapsulation keys), as
        `EvaluationKeys.select` selects them: a worker given the selection bootstraps. A
        selected key without a file raises `BasaltError` naming it when the files are listed
        (:meth:`files`, which a worker calls before it loads anything)."""
        return KeyFiles(self.directory, rotations=rotations, conjugate=conjugate,
                        bootstrapping=bootstrapping)

    def files(self, params: Parameters) -> list:
        """The selected ``(kind, path)`` pairs for ``params``; a selected key without a file
        raises `BasaltError` naming it (a key the bootstrapping circuit needs says so)."""
        by_kind = {}
        for e in self._entries:
            by_kind.setdefault(e["kind"], []).append(e)
        d = Path(self.directory)
        out = [("relinearization", d / e["file"]) for e in by_kind.get("relinearization", [])]
        if not out:
            raise BasaltError(f"{d}: no relinearization key")
        # The circuit's needs, from its shape: (rotation steps, whether it needs the
        # encapsulation keys); None when not selected or the parameters have no circuit.
        boot = _basalt.ckks_bootstrap_key_needs(params._p) if self.bootstrapping else None
        rot = by_kind.get("rotation", [])
        have = {int(e["galois_element"]): e for e in rot}

        def galois(steps, why=""):
            wanted = _basalt.ckks_rotation_galois(params._p, steps)
            for k, g in zip(steps, wanted):
                if g != 1 and g not in have:  # a rotation by a multiple of the slots needs none
                    raise BasaltError(f"{d}: no key for the rotation by {k}{why}")
            return {g for g in wanted if g != 1}

        circuit = set() if boot is None else \
            galois(boot[0], ", which the bootstrapping circuit needs")
        if self.rotations is None:
            out += [("rotation", d / e["file"]) for e in rot]
        else:
            for g in sorted(galois(self.rotations) | circuit):
                out.append(("rotation", d / have[g]["file"]))
        conj = by_kind.get("conjugation", [])
        if (self.conjugate or boot is not None) and not conj:
            raise BasaltError(f"{d}: no conjugation key" +
                              (", which the bootstrapping circuit needs" if boot is not None else ""))
        if self.conjugate is not False or boot is not None:
            out += [("conjugation", d / e["file"]) for e in conj]
        if boot is not None:
            encaps = by_kind.get("bootstrapping", [])
            if boot[1] and not encaps:
                raise BasaltError(f"{d}: no bootstrapping keys (the circuit's encapsulation "
                                  f"keys): save keys made with bootstrapping=True")
            out += [("bootstrapping", d / e["file"]) for e in encaps]
        return out

    def size_bytes(self, params: Parameters) -> int:
        """Bytes of the selected files."""
        return sum(os.path.getsize(p) for _, p in self.files(params))

    def __repr__(self):
        rot = "all" if self.rotations is None else len(self.rotations)
        return (f"KeyFiles({self.directory!r}, rotations={rot}, conjugate={self.conjugate}, "
                f"bootstrapping={self.bootstrapping})")
