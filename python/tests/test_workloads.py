"""basalt.workloads: the registry from Python (toy rings only; full sizes are the CLI's)."""

import pytest

import basalt


def test_list_names_the_workloads():
    names = [w["name"] for w in basalt.workloads.list()]
    assert {"helr", "lola", "mlp", "sort"} <= set(names)
    assert all(w["paper"] and w["preset"] for w in basalt.workloads.list())


def test_quick_mlp_agrees_with_its_twin():
    r = basalt.workloads.run("mlp", quick=True, threads=1)
    assert r["workload"] == "mlp" and r["quick"] is True
    assert r["images"] >= 8
    assert r["accuracy"]["agreement"] >= 0.99
    assert r["precision_bits"] > 8
    assert r["key_bytes"] > 0 and r["wall_s"] > 0
    assert not r["security"]["meets_128"], "the toy ring must say it is insecure"


def test_bad_input_is_a_clear_error():
    with pytest.raises(basalt.BasaltError, match="no workload named `nope`"):
        basalt.workloads.run("nope", quick=True)
    with pytest.raises(basalt.BasaltError, match="NO_SUCH_PRESET"):
        basalt.workloads.run("lola", preset="NO_SUCH_PRESET")
    with pytest.raises(basalt.BasaltError, match="threads"):
        basalt.workloads.run("lola", quick=True, threads=0)
    # A preset without a bootstrapping circuit for a workload that bootstraps, or without the
    # levels a network needs: named before any key is made.
    with pytest.raises(basalt.BasaltError, match="OSIRIS_SET_I.*no bootstrapping circuit"):
        basalt.workloads.run("helr", preset="OSIRIS_SET_I")
    with pytest.raises(basalt.BasaltError, match=r"MXV_SET_A.*needs 5 levels.*only 2"):
        basalt.workloads.run("mlp", preset="MXV_SET_A", allow_insecure=True)


def test_images_limits_the_run():
    r = basalt.workloads.run("mlp", quick=True, threads=1, images=2)
    assert r["images"] == 2
    with pytest.raises(basalt.BasaltError, match="images"):
        basalt.workloads.run("mlp", quick=True, images=0)
