"""CKKS from Python, checked against numpy."""

import numpy as np
import pytest

import basalt
from basalt.ckks import Context

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def ctx():
    return Context.toy_insecure(log_n=11, levels=3, rotations=[1, -3], conjugate=True)


def bits(want, have):
    return -np.log2(np.max(np.abs(want - have)))


def test_round_trip_and_arithmetic_match_numpy(ctx):
    x = RNG.uniform(-1, 1, 64) + 1j * RNG.uniform(-1, 1, 64)
    y = RNG.uniform(-1, 1, 64)
    cx, cy = ctx.encrypt(x), ctx.encrypt(y)
    assert bits(x, ctx.decrypt(cx)) > 25
    assert bits(x + y, ctx.decrypt(cx + cy)) > 25
    prod = (cx * cy).rescale()
    assert prod.level == cx.level - 1
    assert bits(x * y, ctx.decrypt(prod)) > 20
    assert bits(np.roll(x, -1), ctx.decrypt(cx.rotate(1))) > 20
    assert bits(np.roll(x, 3), ctx.decrypt(cx.rotate(-3))) > 20
    assert bits(np.conj(x), ctx.decrypt(cx.conjugate())) > 20
    p = Context.precision(x * y, ctx.decrypt(prod))
    assert p["min"] > 20 and p["mean"] >= p["min"]


def test_bad_input_raises_basalt_error_not_panic(ctx):
    cx = ctx.encrypt(np.ones(16))
    with pytest.raises(basalt.BasaltError):
        cx.rotate(5)  # no key for 5
    with pytest.raises(basalt.BasaltError):
        ctx.encrypt(np.ones(3))  # not a power of two
    with pytest.raises(basalt.BasaltError):
        ctx.encrypt(np.ones(ctx.slots * 2))  # too many slots
    with pytest.raises(basalt.BasaltError):
        cx.drop_to(cx.level + 1)
    low = cx.drop_to(0)
    with pytest.raises(basalt.BasaltError):
        low.rescale()  # no level left
    other = Context.toy_insecure(log_n=11, levels=3)
    with pytest.raises(basalt.BasaltError):
        other.decrypt(cx)
    with pytest.raises(basalt.BasaltError):
        basalt.ckks.Context.preset("NO_SUCH_PRESET")


def test_presets_are_listed():
    names = [n for n, _ in basalt.ckks.presets()]
    assert any("N16" in n for n in names)


def test_serialization_round_trips_and_rejects_corruption(ctx):
    x = RNG.uniform(-1, 1, 32)
    ct = ctx.encrypt(x)
    data = ct.to_bytes()
    back = ctx.ciphertext_from_bytes(data)
    assert back.level == ct.level and back.scale == ct.scale
    assert bits(x, ctx.decrypt(back)) > 25
    keys = ctx.evaluation_keys_to_bytes()
    assert ctx.check_evaluation_keys(keys) == 3  # rotations 1, -3 and conjugation
    for bad in (data[:-9], data[: len(data) // 2], b"", bytes(len(data))):
        with pytest.raises(basalt.BasaltError):
            ctx.ciphertext_from_bytes(bad)
    flipped = bytearray(data)
    for i in range(40, len(flipped), max(1, len(flipped) // 50)):
        flipped[i] ^= 0xFF
    with pytest.raises(basalt.BasaltError):
        ctx.ciphertext_from_bytes(bytes(flipped))
    with pytest.raises(basalt.BasaltError):
        ctx.check_evaluation_keys(keys[: len(keys) // 3])
    other = Context.toy_insecure(log_n=10, levels=2)
    with pytest.raises(basalt.BasaltError):
        other.ciphertext_from_bytes(data)


def test_batch_calls_match_single_calls_and_threads_share_a_context():
    import threading

    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    rng = np.random.default_rng(7)
    vals = [rng.uniform(-1, 1, ctx.slots) for _ in range(4)]
    cts = [ctx.encrypt(v) for v in vals]
    prods = ctx.mul_batch([(c, c) for c in cts])
    rots = ctx.rotate_batch(cts, 1)
    resc = ctx.rescale_batch(prods)
    for i, c in enumerate(cts):
        assert prods[i].to_bytes() == (c * c).to_bytes()
        assert rots[i].to_bytes() == c.rotate(1).to_bytes()
        np.testing.assert_allclose(ctx.decrypt(resc[i]).real, vals[i] ** 2, atol=1e-4)
        np.testing.assert_allclose(ctx.decrypt(rots[i]).real, np.roll(vals[i], -1), atol=1e-4)
    other = basalt.ckks.Context.toy_insecure(log_n=10, levels=3)
    with pytest.raises(basalt.ckks.BasaltError):
        other.rotate_batch(cts, 1)
    # Many Python threads on one context at once (the GIL is released inside).
    out = [None] * len(cts)

    def work(i):
        out[i] = (cts[i] * cts[i]).to_bytes()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(cts))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out == [p.to_bytes() for p in prods]
