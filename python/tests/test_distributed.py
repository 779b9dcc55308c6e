"""basalt.distributed on a local Ray cluster of 2 worker processes (toy rings): bit-identity with
the single-process runs, no secret sent to the cluster, a worker killed mid-task."""

import concurrent.futures
import pickle
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip(
    "ray", reason="basalt.distributed needs Ray: pip install 'basalt[ray]' (make test does)")

import basalt  # noqa: E402
import basalt.distributed as bd  # noqa: E402
import basalt.helr  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cluster_of_two():
    started = not ray.is_initialized()
    # Clusters of 2 single-threaded workers; 4 slots, so that the TFHE pair (kept for the
    # module) and a CKKS pair can be alive at once.
    # Ray gives its node 30 s to start; on a loaded machine that can pass: start it again.
    for attempt in range(3):
        try:
            bd.init(num_cpus=4, object_store_memory=400 * 2**20)
            break
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise
    # The workers cannot import this file: ship its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def tfhe():
    """A TFHE client (the networks' set, N = 1024) and 2 workers holding its server key (130 MB,
    loaded once for every TFHE test); what the driver handed to Ray to build them."""
    ctx = basalt.tfhe.Context("NN_N1024")
    with pytest.MonkeyPatch.context() as mp:
        rec = Recorder(mp)
        cluster = bd.TfheCluster(ctx, workers=2)
    yield ctx, cluster, rec.seen
    cluster.shutdown()


def square(server, ct):
    """A pure server-side function (it may run twice when a worker dies)."""
    return (ct * ct).rescale()


def slow_square(server, ct):
    """`square` after a pause, so that a test can kill its worker while it runs."""
    time.sleep(1.0)
    return (ct * ct).rescale()


class Recorder:
    """Every argument and object the driver hands to Ray: `ray.put`, actor creation, actor
    method calls and remote function calls."""

    def __init__(self, monkeypatch, seen=None):
        self.seen = [] if seen is None else seen
        self.mp = monkeypatch
        put = ray.put
        self.mp.setattr(ray, "put", lambda v, *a, **k: (self.seen.append(v), put(v, *a, **k))[1])
        self._wrap(ray.actor.ActorClass, "_remote")
        self._wrap(ray.actor.ActorMethod, "_remote")
        self._wrap(ray.remote_function.RemoteFunction, "_remote")

    def _wrap(self, cls, name):
        orig = getattr(cls, name)
        rec = self

        def spy(this, *args, **kwargs):
            rec.seen.append((args, kwargs))
            return orig(this, *args, **kwargs)

        self.mp.setattr(cls, name, spy)

    def leaves(self):
        out, stack = [], list(self.seen)
        while stack:
            x = stack.pop()
            if isinstance(x, (list, tuple, set)):
                stack.extend(x)
            elif isinstance(x, dict):
                stack.extend(x.values())
            else:
                out.append(x)
        return out


def test_the_client_never_sends_a_secret(monkeypatch, tfhe):
    tctx, tcluster, seen = tfhe
    rec = Recorder(monkeypatch, list(seen))
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3, rotations=[1])
    secret = ctx.export_secret_key()
    x = np.linspace(-1, 1, 8)
    cts = [ctx.encrypt(x * (i + 1) / 4) for i in range(3)]
    with bd.CkksCluster(ctx.parameters, ctx.evaluation_keys(), workers=2) as cluster:
        assert cluster.key_id == ctx.key_id
        for info in cluster.infos:
            assert info["role"] == "Server" and info["secret_api"] == [], info
        out = cluster.map(square, cts)
    for i, b in enumerate(out):
        have = ctx.decrypt(ctx.ciphertext_from_bytes(b)).real
        assert np.allclose(have, (x * (i + 1) / 4) ** 2, atol=1e-3)

    for info in tcluster.infos:
        assert info["secret_api"] == [], info
    tcluster.apply_batch([tctx.encrypt(1)], tctx.table(lambda m: m))

    leaves = rec.leaves()
    assert any(isinstance(v, bytes) and len(v) > 10_000 for v in leaves), \
        "the recorder must see the keys go out, or it sees nothing"
    payload = secret[-512:]  # the key's coefficients, past any header
    for v in leaves:
        assert not isinstance(v, (basalt.ckks.Context, basalt.tfhe.Context,
                                  basalt._basalt.CkksContext, basalt._basalt.TfheContext)), v
        if isinstance(v, (bytes, bytearray)):
            assert payload not in v, "secret-key bytes in a payload sent to the cluster"
    # A client context cannot even be serialized by accident.
    with pytest.raises(Exception):
        pickle.dumps(ctx._c)


def test_distributed_helr_is_bit_identical_to_the_single_process_training(tmp_path):
    task = basalt.helr.Task("quick", cts=3, iterations=2)
    client = basalt.helr.Client.toy(task)
    params = client.ctx.parameters
    keys = client.evaluation_keys()
    server = basalt.ckks.Server(params, keys)
    plan = basalt.helr.schedule(server, task)
    assert any(refresh for _, refresh in plan), "the toy schedule must bootstrap"
    inputs = basalt.helr.encrypt_inputs(client, plan)
    one = basalt.helr.train(server, task, inputs, shares=1, plan=plan)
    assert basalt.helr.train(server, task, inputs, shares=2, plan=plan) == one

    # Per-role keys through the object store: the second worker gets a smaller set.
    first = basalt.helr.train(server, task, inputs, plan=plan[:1])
    with bd.CkksCluster(params, bd.helr_keys(params, keys, task, 2), workers=2) as cluster:
        update, gradient = cluster.infos
        assert update["bootstraps"] and not gradient["bootstraps"]
        assert cluster.key_bytes[1] < cluster.key_bytes[0]
        w, _ = bd.train_helr(cluster, task, inputs, plan=plan[:1])
    assert w == first, "per-role workers (object store) differ from the single process"

    # Per-role keys from files, one per key; the client then frees its own keys.
    files = bd.save_keys(params, keys, tmp_path / "keys")
    del server, keys
    client.ctx.drop_evaluation_keys()
    roles = bd.helr_keys(params, files, task, 2)
    with bd.CkksCluster(params, roles, workers=2) as cluster:
        update, gradient = cluster.infos
        assert update["bootstraps"] and not gradient["bootstraps"]
        steps = set(basalt._basalt.ckks_rotation_galois(params._p, task.rotations)) - {1}
        assert gradient["rotations"] == len(steps) < update["rotations"]
        # What the key-size API predicts for each role, before any key exists.
        want = bd.helr_role_memory(task, params=params)
        assert want["gradient_keys"] == 1 + gradient["rotations"]
        assert want["update_keys"] == 2 + update["rotations"]
        assert abs(gradient["key_bytes"] / want["gradient_key_bytes"] - 1) < 0.02
        w, stats = bd.train_helr(cluster, task, inputs)
        mem = cluster.memory()
    assert w == one, "the distributed training differs from the single-process one"
    assert [s["workers"] for s in stats] == [2, 2]
    assert all(s["partial_bytes"] > 0 and s["broadcast_bytes"] > 0 for s in stats)
    assert all(m["peak_rss_bytes"] >= m["rss_bytes"] > 0 for m in mem)
    model = client.model(w)  # the client still decrypts
    twin = task.train_plain(client.batches[:2])
    assert np.abs(twin).max() > 1e-3, "a model that does not move would match anything"
    assert np.abs(model - twin).max() < 1e-2


def test_a_worker_killed_mid_task_is_retried_or_a_clear_error():
    ctx = basalt.ckks.Context.toy_insecure(log_n=10, levels=3)
    server = basalt.ckks.Server(ctx.parameters, ctx.evaluation_keys())
    cts = [ctx.encrypt(np.full(4, 0.1 * (i + 1))) for i in range(4)]
    want = [square(server, server.ciphertext_from_bytes(c.to_bytes())).to_bytes() for c in cts]
    pool = concurrent.futures.ThreadPoolExecutor(1)
    # One restart allowed: the first kill is survived by a retry, the second is final.
    with bd.CkksCluster(ctx.parameters, ctx.evaluation_keys(), workers=2,
                        max_retries=1) as cluster:
        for final in (False, True):
            job = pool.submit(cluster.map, slow_square, cts)
            time.sleep(0.5)
            ray.kill(cluster.actors[0], no_restart=False)
            if not final:
                assert job.result(timeout=120) == want, "a retried task gave other bytes"
            else:
                with pytest.raises(bd.WorkerFailed, match="map: a worker died"):
                    job.result(timeout=120)


def test_pbs_batch_across_workers_matches_the_local_batch(tfhe):
    ctx, cluster, _ = tfhe
    p = ctx.plaintext_modulus
    msgs = [m % p for m in range(10)]
    cts = [ctx.encrypt(m) for m in msgs]
    table = ctx.table(lambda m: (3 * m + 1) % p)
    local = [c.to_bytes() for c in ctx.apply_batch(cts, lambda m: (3 * m + 1) % p)]
    out = cluster.apply_batch(cts, table)
    with pytest.raises(basalt.BasaltError, match="entries"):
        cluster.apply_batch(cts[:1], table[:-1])
    assert out == local
    assert [ctx.decrypt(ctx.ciphertext_from_bytes(b)) for b in out] == \
        [(3 * m + 1) % p for m in msgs]


def test_a_network_layer_split_over_workers_is_the_whole_layer(tfhe):
    net, layer, width = "nn-20", 0, 24  # 24 of the convolution's 840 ReLU neurons
    ctx, cluster, _ = tfhe
    image, _ = basalt._basalt.tfhe_nn_test_image(0)
    plain = basalt._basalt.tfhe_nn_plain(net, image)
    # The first 24 neurons whose activations take at least three values: a window of constant
    # activations would also match a broken layer.
    start = next(i for i in range(len(plain[0]) - width)
                 if len(set(plain[0][i:i + width])) > 2)
    rows = (start, start + width)
    assert bd.nn_layers(net)[layer] == (len(image), len(plain[0]))
    inputs = [ctx.encrypt(v).to_bytes() for v in image]
    whole = basalt._basalt.TfheWorkerServer("NN_N1024", bd.tfhe_server_key(ctx)).nn_layer(
        net, layer, *rows, inputs)
    out = cluster.nn_layer(net, layer, inputs, rows=rows)
    with pytest.raises(basalt.BasaltError, match="inputs"):
        cluster.nn_layer(net, layer, inputs[:-1], rows=rows)
    assert out == whole, "the split layer differs from the layer on one worker"
    have = [ctx.decrypt(ctx.ciphertext_from_bytes(b)) for b in out]
    want = [v % ctx.plaintext_modulus for v in plain[0][rows[0]:rows[1]]]
    assert have == want, "the encrypted layer disagrees with the network in the clear"
    assert len(set(have)) > 2, "constant activations would match a broken layer"


def test_grid_points_on_the_cluster_equal_the_local_grid(tmp_path):
    ctx = basalt.ckks.Context.preset("CRATERLAKE_80_1DIGIT", rotations=[1], symbolic=True,
                                     allow_insecure=True)
    x = ctx.encrypt_symbolic(slots=ctx.slots)
    with basalt.sim.record() as rec:
        (x * x).rescale().rotate(1)
    axes = {"memory.hbm_gbps": [500, 1000, 2000], "clock_ghz": [0.5, 1.0]}
    local = basalt.sim.grid(rec.trace, "craterlake", axes, csv=tmp_path / "a.csv")
    spread = bd.grid(rec.trace, "craterlake", axes, tasks=2, csv=tmp_path / "b.csv")
    as_rows = (lambda g: g.to_dict("records")) if hasattr(local, "to_dict") else list
    assert as_rows(spread) == as_rows(local)
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    assert sum(r["pareto"] for r in as_rows(local)) >= 1
