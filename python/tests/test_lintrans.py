"""Encrypted matrix–vector products from Python (basalt.ckks.LinearTransform), checked against
numpy, across plans (bit-identical), and in trace mode on the accelerator models."""

import numpy as np
import pytest

import basalt
from basalt.ckks import Context, LinearTransform
from basalt.sim import BasaltError, record

RNG = np.random.default_rng(11)
SLOTS = 32


def bits(want, have):
    return -np.log2(np.max(np.abs(want - have)))


PLANS = [
    dict(n1=SLOTS, hoisting="single"),  # the hoisted diagonal method
    dict(n1=8, hoisting="none"),
    dict(n1=8, hoisting="single"),
    dict(n1=8, hoisting="double"),
    dict(n1=8, hoisting="double", order="giant-step", max_partials=2),
    dict(n1=8, hoisting="double", order="giant-step", max_partials=2, of_limb=False),
    dict(),  # the library's plan (Osiris' rule)
]


def test_every_plan_computes_the_same_product_as_numpy():
    ctx = Context.toy_insecure(log_n=10, levels=2)
    m = RNG.uniform(-1, 1, (SLOTS, SLOTS)) + 1j * RNG.uniform(-1, 1, (SLOTS, SLOTS))
    x = RNG.uniform(-1, 1, SLOTS) + 1j * RNG.uniform(-1, 1, SLOTS)
    ct = ctx.encrypt(x)
    lts = [LinearTransform(ctx, m, **p) for p in PLANS]
    ctx.add_rotations(sorted({k for lt in lts for k in lt.rotations}))
    # The key pair stays: a ciphertext encrypted before the new keys still decrypts.
    assert bits(x, ctx.decrypt(ct)) > 20
    outs = [lt(ct) for lt in lts]
    for p, out in zip(PLANS, outs):
        assert out.level == ct.level - 1 and out.scale == pytest.approx(ct.scale)
        assert bits(m @ x, ctx.decrypt(out)) > 14, p
    # The loop order and the diagonal store change the cost, not the result: with the same
    # split and hoisting, the ciphertexts are equal bit for bit.
    double = [o.to_bytes() for p, o in zip(PLANS, outs)
              if p.get("n1") == 8 and p.get("hoisting") == "double"]
    assert len(double) == 3 and len(set(double)) == 1


def test_diagonals_and_a_matrix_describe_the_same_transform():
    ctx = Context.toy_insecure(log_n=10, levels=2)
    m = np.diag(RNG.uniform(-1, 1, SLOTS)) + np.roll(np.eye(SLOTS), 3, axis=1) * 0.5
    diags = {0: np.diag(m).copy(), 3: np.full(SLOTS, 0.5)}
    a = LinearTransform(ctx, m, n1=4)
    b = LinearTransform(ctx, diagonals=diags, n1=4)
    assert a.rotations == b.rotations and (a.n1, a.n2) == (4, 1)
    ctx.add_rotations(a.rotations)
    ct = ctx.encrypt(RNG.uniform(-1, 1, SLOTS))
    assert a(ct).to_bytes() == b(ct).to_bytes()
    cost = a.predicted_cost()
    assert cost["rotations"] == len(a.rotations) and cost["modmults"] > 0


def test_bad_inputs_are_named_errors():
    ctx = Context.toy_insecure(log_n=10, levels=2)
    m = RNG.uniform(-1, 1, (SLOTS, SLOTS))
    with pytest.raises(BasaltError, match="rotation"):
        LinearTransform(ctx, m, n1=8)(ctx.encrypt(np.ones(SLOTS)))  # no keys yet
    with pytest.raises(BasaltError, match="hoisting"):
        LinearTransform(ctx, m, n1=8, hoisting="triple")
    with pytest.raises(BasaltError, match="order"):
        LinearTransform(ctx, m, n1=8, order="sideways")
    with pytest.raises(BasaltError, match="power-of-two"):
        LinearTransform(ctx, m[:, :3])
    with pytest.raises(BasaltError, match="either"):
        LinearTransform(ctx)
    with pytest.raises(BasaltError, match="same length"):
        LinearTransform(ctx, diagonals={0: np.ones(SLOTS), 1: np.ones(SLOTS // 2)})
    with pytest.raises(BasaltError, match="n1"):
        LinearTransform(ctx, m, n1=-1)
    with pytest.raises(BasaltError, match="non-zero"):
        LinearTransform(ctx, np.zeros((SLOTS, SLOTS)))
    with pytest.raises(BasaltError):
        LinearTransform(ctx, m, n1=8, level=ctx.max_level + 1)
    lt = LinearTransform(ctx, m, n1=8)
    ctx.add_rotations(lt.rotations)
    with pytest.raises(BasaltError):
        lt(ctx.encrypt(np.ones(SLOTS)).rescale())  # wrong level


def test_a_symbolic_product_times_on_the_machines_with_and_without_of_limb():
    ctx = Context.preset("OSIRIS_SET_I", symbolic=True)
    n = ctx.slots
    diags = {k: np.ones(n) for k in range(64)}
    runs = {}
    for of_limb in (True, False):
        lt = LinearTransform(ctx, diagonals=diags, n1=16, hoisting="double", order="giant-step",
                             of_limb=of_limb)
        ctx.add_rotations(lt.rotations)
        with record() as rec:
            lt(ctx.encrypt_symbolic(n))
        runs[of_limb] = basalt.sim.run(rec.trace, "osiris")
    # OF-Limb streams one limb per diagonal instead of every limb.
    assert runs[True]["traffic"]["plaintexts"] < runs[False]["traffic"]["plaintexts"] / 2


def test_rectangular_matrices_against_numpy():
    ctx = Context.toy_insecure(log_n=10, levels=2)
    wide = RNG.uniform(-1, 1, (4, 8))
    lt = LinearTransform(ctx, wide)
    ctx.add_rotations(lt.rotations)
    x = RNG.uniform(-1, 1, 8)
    assert np.allclose(ctx.decrypt(lt(ctx.encrypt(x))).real[:4], wide @ x, atol=1e-4)
    tall = RNG.uniform(-1, 1, (8, 4))
    lt = LinearTransform(ctx, tall)
    ctx.add_rotations(lt.rotations)
    x = RNG.uniform(-1, 1, 4)
    out = ctx.decrypt(lt(ctx.encrypt(np.tile(x, 2)))).real
    assert np.allclose(out, tall @ x, atol=1e-4)
