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


# --- Client/server roles and key identity --------------------------------------------------

import os
import pickle
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _pair():
    a = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    b = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    return a, b


def _mismatch(fn, ia, ib):
    with pytest.raises(basalt.BasaltError, match="key identity mismatch") as e:
        fn()
    assert ia in str(e.value) and ib in str(e.value)


def test_a_ciphertext_of_another_key_set_is_refused_by_every_path():
    a, b = _pair()
    server = basalt.ckks.Server(a.parameters, a.evaluation_keys(rotations=[1]))
    assert server.key_id == a.key_id != b.key_id
    x = np.linspace(-1, 1, 8)
    theirs = b.encrypt(x).to_bytes()
    # Load (server and client), decryption.
    _mismatch(lambda: server.ciphertext_from_bytes(theirs), a.key_id, b.key_id)
    _mismatch(lambda: a.ciphertext_from_bytes(theirs), a.key_id, b.key_id)
    # Every operation on a server holding a's keys: bind b's ciphertext by hand.
    foreign = basalt.ckks.Ciphertext(server, b.encrypt(x)._raw)
    mine = server.ciphertext_from_bytes(a.encrypt(x).to_bytes())
    for op in (lambda: mine + foreign, lambda: mine * foreign, lambda: foreign.rotate(1),
               lambda: foreign.rescale(), lambda: foreign * 0.5, lambda: foreign + 1.0,
               lambda: foreign.conjugate(), lambda: -foreign):
        _mismatch(op, a.key_id, b.key_id)
    # Evaluation keys of another key set.
    _mismatch(lambda: a.check_evaluation_keys(b.evaluation_keys_to_bytes()), a.key_id, b.key_id)


def test_linear_transform_and_bootstrap_refuse_another_key_set():
    ctx = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3)
    other = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    # Same parameters as ctx, other secret: a second bootstrappable context.
    twin = basalt.ckks.Context.toy_bootstrappable(log_n=10, log_slots=3)
    x = np.linspace(-0.5, 0.5, 8)
    foreign = basalt.ckks.Ciphertext(ctx, twin.encrypt(x, level=0)._raw)
    _mismatch(lambda: ctx.bootstrap(foreign), ctx.key_id, twin.key_id)
    m = np.eye(8)
    lt = basalt.ckks.LinearTransform(other, m)
    other.add_rotations(lt.rotations)
    alien = basalt.ckks.Ciphertext(other, ctx.encrypt(x)._raw)
    with pytest.raises(basalt.BasaltError):
        lt(alien)  # another parameter set and key set: refused either way


def test_server_holds_no_secret():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    server = basalt.ckks.Server(ctx.parameters, ctx.evaluation_keys())
    assert not hasattr(server, "decrypt") and not hasattr(server._c, "decrypt")
    assert not hasattr(server._c, "export_secret_key")
    # The only secret-key export is the named client call.
    assert not hasattr(ctx, "secret_key") and len(ctx.export_secret_key()) > 0


def test_seeded_keys_are_half_the_bytes_and_load_selectively():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    full = ctx.evaluation_keys(rotations=[1, 2, 4])
    seeded = ctx.evaluation_keys(rotations=[1, 2, 4], seeded=True)
    assert len(seeded.to_bytes()) * 2 < len(full.to_bytes()) + 8192
    back = basalt.ckks.EvaluationKeys.from_bytes(ctx.parameters, seeded.to_bytes(), rotations=[4])
    assert back.rotations == [4]
    server = basalt.ckks.Server(ctx.parameters, back)
    ct = server.ciphertext_from_bytes(ctx.encrypt(np.arange(8.0)).to_bytes())
    out = ctx.ciphertext_from_bytes(ct.rotate(4).to_bytes())
    assert np.allclose(ctx.decrypt(out).real, np.roll(np.arange(8.0), -4), atol=1e-3)
    with pytest.raises(basalt.BasaltError, match="rotation"):
        ct.rotate(1)


def test_parameters_and_ciphertexts_pickle():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    p = pickle.loads(pickle.dumps(ctx.parameters))
    assert p.name == ctx.parameters.name
    ct = pickle.loads(pickle.dumps(ctx.encrypt(np.ones(4))))
    with pytest.raises(basalt.BasaltError, match="attach"):
        ct.level
    assert np.allclose(ctx.decrypt(ctx.attach(ct)).real, 1, atol=1e-4)


def test_client_server_example_runs_as_two_processes():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "client_server.py")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert '"max_error"' in r.stdout


# --- Behaviour that surprised a new user ---------------------------------------------------

def test_constant_product_at_level_zero_keeps_its_fraction():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    ct = ctx.encrypt(np.full(4, 0.5), level=0, scale=2.0 ** 30)
    assert np.allclose(ctx.decrypt(ct * 0.3).real, 0.15, atol=1e-4)


def test_scale_beyond_the_modulus_is_refused():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    with pytest.raises(basalt.BasaltError, match="scale"):
        ctx.encrypt(np.ones(4), level=0, scale=2.0 ** 80)


def test_operands_of_different_slot_counts_are_refused_both_ways():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=2)
    a16, b8 = ctx.encrypt(np.ones(16)), ctx.encrypt(np.ones(8))
    for op in (lambda: a16 + b8, lambda: b8 + a16, lambda: a16 * b8):
        with pytest.raises(basalt.BasaltError, match="slots"):
            op()


def test_precision_counts_nan_as_no_precision():
    d = basalt.ckks.Context.precision(np.ones(4), np.array([1, 1, np.nan, 1]))
    assert d["min"] == float("-inf") and d["mean"] == float("-inf")


def test_concurrent_add_rotations_keep_every_update():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=1)
    ts = [threading.Thread(target=ctx.add_rotations, args=([k],)) for k in (1, 2, 3, 5)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert set(ctx.rotations) >= {1, 2, 3, 5}


def test_rotate_by_zero_needs_no_key():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=1)
    ct = ctx.encrypt(np.arange(4.0))
    assert np.allclose(ctx.decrypt(ct.rotate(0)).real, np.arange(4.0), atol=1e-4)


def test_silent_coercions_are_refused():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=1)
    ct = ctx.encrypt(np.ones(4))
    with pytest.raises(basalt.BasaltError, match="str"):
        ct + "2"
    with pytest.raises(basalt.BasaltError, match="numeric"):
        ctx.encrypt(["3"])


def test_conversion_errors_name_the_argument():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=1)
    with pytest.raises(basalt.BasaltError, match="level=-1"):
        ctx.encrypt(np.ones(4), level=-1)


def test_complex_constant_product():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=1)
    ct = ctx.encrypt(np.ones(4))
    assert np.allclose(ctx.decrypt((ct * 1j).rescale()), 1j, atol=1e-4)


def test_a_python_function_through_the_chebyshev_evaluator():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=4)
    x = np.linspace(-1, 1, 8)
    y = ctx.evaluate(ctx.encrypt(x), np.sin, interval=(-1, 1), degree=7)
    assert np.allclose(ctx.decrypt(y).real, np.sin(x), atol=1e-3)
