"""CKKS bootstrapping from Python on a small insecure ring, checked against numpy."""

import numpy as np
import pytest

import basalt
from basalt.bootstrap import Context

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def ctx():
    return Context.toy_insecure(log_n=11, log_slots=9)


def bits(want, have):
    return -np.log2(np.max(np.abs(want - have)))


def test_bootstrap_refreshes_levels_and_keeps_the_values(ctx):
    x = RNG.uniform(-1, 1, ctx.slots) + 1j * RNG.uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(x)
    assert ct.level == 0
    fresh = ctx.bootstrap(ct)
    assert fresh.level == ctx.output_level > 0
    assert bits(x, ctx.decrypt(fresh)) > 18
    # The refreshed ciphertext computes again.
    sq = ctx.mul(fresh, fresh)
    assert sq.level == fresh.level - 1
    assert bits(x * x, ctx.decrypt(sq)) > 16
    levels = ctx.levels()
    assert levels["eval_mod"] == 8 and levels["output_level"] == ctx.output_level


def test_bad_inputs_raise_not_crash(ctx):
    with pytest.raises(basalt.BasaltError):
        ctx.encrypt(np.zeros(ctx.slots * 2))
    other = Context.toy_insecure(log_n=10, log_slots=4)
    foreign = other.encrypt(np.zeros(16))
    with pytest.raises(basalt.BasaltError):
        ctx.bootstrap(foreign)
    with pytest.raises(ValueError):
        Context.toy_insecure(log_n=20)
    with pytest.raises(ValueError):
        Context.preset("MXV_SET_A")
