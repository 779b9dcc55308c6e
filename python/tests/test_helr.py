"""basalt.helr: HELR's task, shares and steps from Python (the training itself: its doctest and
test_distributed.py)."""

import pickle

import pytest

import basalt


def test_shares_cover_the_batch_in_order():
    assert basalt.helr.shares(8, 3) == [(0, 3), (3, 6), (6, 8)]
    assert basalt.helr.shares(2, 4) == [(0, 1), (1, 2)]
    with pytest.raises(basalt.BasaltError, match="0 workers"):
        basalt.helr.shares(3, 0)


def test_a_task_pickles_by_its_description_and_bad_ones_are_named():
    task = basalt.helr.Task("quick", cts=4, iterations=3)
    back = pickle.loads(pickle.dumps(task))
    assert (back.kind, back.cts, back.iterations, back.slots) == ("quick", 4, 3, 512)
    assert basalt.helr.Task("fab").slots == 2**15
    with pytest.raises(basalt.BasaltError, match="unknown HELR task"):
        basalt.helr.Task("nope")
    with pytest.raises(basalt.BasaltError, match="cts"):
        basalt.helr.Task("quick", cts=0)


def test_training_needs_a_server_that_bootstraps():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3)
    server = basalt.ckks.Server(ctx.parameters, ctx.evaluation_keys())
    with pytest.raises(basalt.BasaltError, match="bootstraps"):
        basalt.helr.schedule(server, basalt.helr.Task("quick"))
    with pytest.raises(basalt.BasaltError, match="bootstraps"):
        basalt.helr.Client(ctx, basalt.helr.Task("quick"))
