"""Random and hostile input across the Python boundary: every call either works or raises a
Python exception; none may crash the interpreter (a Rust panic surfaces as
``pyo3_runtime.PanicException``, a ``BaseException``, and fails these tests).

Deterministic (seeded) so that CI replays the same few hundred inputs every time; the cargo-fuzz
targets (``scripts/fuzz.sh``) cover the deserializers at length."""

import numpy as np
import pytest

import basalt

RNG_SEED = 20261127


def _mutations(blob: bytes, rng, count: int):
    """Truncations, bit flips and random blobs derived from a valid serialization."""
    yield b""
    yield blob[:1]
    for _ in range(count):
        kind = rng.integers(0, 3)
        if kind == 0:
            yield blob[: int(rng.integers(0, len(blob)))]
        elif kind == 1:
            b = bytearray(blob)
            for _ in range(int(rng.integers(1, 8))):
                i = int(rng.integers(0, len(b)))
                b[i] ^= 1 << int(rng.integers(0, 8))
            yield bytes(b)
        else:
            yield rng.integers(0, 256, size=int(rng.integers(0, 4096)), dtype=np.uint8).tobytes()


def _survives(f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except Exception:  # a clear Python error is the expected outcome for bad input
        pass


@pytest.fixture(scope="module")
def ckks():
    return basalt.ckks.Context.toy_insecure(log_n=10, levels=2)


def test_ckks_ciphertext_bytes(ckks):
    rng = np.random.default_rng(RNG_SEED)
    blob = ckks.encrypt(np.linspace(-1, 1, 8)).to_bytes()
    for data in _mutations(blob, rng, 300):
        _survives(ckks.ciphertext_from_bytes, data)


def test_ckks_evaluation_key_bytes(ckks):
    rng = np.random.default_rng(RNG_SEED + 1)
    blob = ckks.evaluation_keys_to_bytes()
    for data in _mutations(blob[:8192], rng, 100):
        _survives(ckks.check_evaluation_keys, data)


def test_ckks_hostile_values(ckks):
    rng = np.random.default_rng(RNG_SEED + 2)
    hostile = [
        np.array([np.nan]),
        np.array([np.inf, -np.inf]),
        np.array([1e300]),
        np.zeros(ckks.slots + 1),
        np.zeros((2, 2)),
        np.array([], dtype=float),
        np.array(["a"]),
        np.array([1 + 1e308j]),
    ]
    hostile += [rng.normal(0, 10.0 ** rng.integers(0, 30), size=int(rng.integers(1, 64)))
                for _ in range(50)]
    for v in hostile:
        _survives(ckks.encrypt, v)
    for level in [-1, 3, 10**9]:
        _survives(ckks.encrypt, np.ones(4), level=level)
    for scale in [0.0, -1.0, float("nan"), float("inf"), 2.0**200]:
        _survives(ckks.encrypt, np.ones(4), scale=scale)


def test_tfhe_ciphertext_bytes():
    ctx = basalt.tfhe.Context("STRIX_I", allow_insecure=True)
    rng = np.random.default_rng(RNG_SEED + 3)
    blob = ctx.encrypt_bool(True).to_bytes()
    for data in _mutations(blob, rng, 300):
        _survives(ctx.ciphertext_from_bytes, data)
    for m in [-1, 2**64, 10**30]:
        _survives(ctx.encrypt, m)
