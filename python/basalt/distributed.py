"""Basalt on a Ray cluster: server workers that hold evaluation keys, never a secret.

The client (a `basalt.ckks.Context` or `basalt.tfhe.Context`, the only holder of the secret key)
stays in the driver process. What goes to the cluster is what a server may see: the parameters,
the evaluation or server keys (put once into the object store, or read from a shared path, and
loaded once by each worker), and ciphertexts as bytes. Each worker is a Ray actor holding one
`basalt.ckks.Server` (or a TFHE server key); it has no ``decrypt``.

Every task a worker runs is a pure function of its arguments (ciphertext bytes in, ciphertext
bytes out; the keys are read-only), so a task whose worker dies is safe to run again: Ray
restarts the worker (it reloads the keys) and retries the task, up to ``max_retries`` times.
When the retries are spent, or a worker is gone for good, the call raises `WorkerFailed`
naming the task; a result is never assembled from a partial run.

What runs on the cluster:

- :class:`CkksCluster`: ``map`` (any function of a `Server` and a ciphertext over a list of
  ciphertexts) and :func:`train_helr`, FAB-2's data-parallel HELR training (FAB §4.9): each
  worker computes the encrypted partial gradient of its share of the mini-batch, one worker
  sums the partials, updates the weights and bootstraps, and the new weights are broadcast.
  The result is bit-identical to :func:`basalt.helr.train` in one process. Each worker can
  hold only the keys of its role (:func:`helr_keys`): the bootstrapping keys and circuit on
  the worker that bootstraps, the relinearisation key and the gradient's rotations on the
  others; :func:`save_keys` writes keys one file per key (:class:`KeyFiles`), so that a
  worker loads its role's keys one at a time and the client can free its own.
- :class:`TfheCluster`: a batch of ciphertexts through one lookup table, or a layer of the
  deep networks NN-20/50/100 (Strix Fig. 7), split over the workers, each running Strix's
  two-level batched PBS on its threads.
- :func:`grid`: a `basalt.sim.grid` whose points are timed as Ray tasks; the result is the
  local grid's, Pareto front included.

Ray is an optional dependency (``pip install 'basalt[ray]'``); without it, this module imports
but its classes raise `ImportError` saying so. See ``docs/distributed.md``.
"""

from __future__ import annotations

import os
import resource
import time

from . import _basalt
from . import helr as _helr
from .ckks import BasaltError, EvaluationKeys, Parameters, Server, _trim_heap
from .ckks_keys import KeyFiles, save_keys

__all__ = ["WorkerFailed", "init", "CkksCluster", "TfheCluster", "train_helr", "grid",
           "nn_layers", "tfhe_server_key", "save_keys", "KeyFiles", "helr_keys",
           "helr_role_memory", "process_memory"]


class WorkerFailed(RuntimeError):
    """A worker died during a task and the task could not be completed by a retry."""


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError("basalt.distributed needs Ray: pip install 'basalt[ray]'") from e
    return ray


def init(address=None, *, num_cpus=None, object_store_memory=None, **kwargs):
    """Connect to the Ray cluster at ``address`` (``"auto"``: the one this machine belongs to),
    or start a local one (``num_cpus`` worker slots) if none is running. Returns ``ray``."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, num_cpus=num_cpus, object_store_memory=object_store_memory,
                 include_dashboard=False, log_to_driver=False, **kwargs)
    return ray


def _get(refs, what):
    """``ray.get`` with a dead worker turned into `WorkerFailed`; a `BasaltError` raised by the
    task (bad input) passes through as itself."""
    ray = _ray()
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        # Bad input, named by the worker. The compiled module's exception class does not
        # pickle by reference, so the worker's arrives as a copy: match it by name.
        cause = getattr(e, "cause", None)
        if isinstance(cause, BasaltError) or type(cause).__name__ == "BasaltError":
            raise BasaltError(str(cause)) from None
        raise
    except ray.exceptions.RayError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise WorkerFailed(f"{what}: a worker died and the task could not be retried "
                           f"({type(e).__name__}: {first})") from e


def _threads_env(threads):
    return {"env_vars": {"RAYON_NUM_THREADS": str(int(threads))}}


class _Cluster:
    """``workers`` actors of ``actor`` (each given ``cpus_per_worker`` CPUs and as many
    threads), restarted and their tasks retried up to ``max_retries`` times."""

    def __init__(self, actor, args, *, workers, cpus_per_worker, max_retries):
        if int(workers) < 1:
            raise BasaltError(f"workers={workers} must be at least 1")
        if int(cpus_per_worker) < 1:
            raise BasaltError(f"cpus_per_worker={cpus_per_worker} must be at least 1")
        ray = init()
        opts = dict(num_cpus=int(cpus_per_worker), max_restarts=int(max_retries),
                    max_task_retries=int(max_retries),
                    runtime_env=_threads_env(cpus_per_worker))
        self.max_retries = int(max_retries)
        self.actors = [ray.remote(actor).options(**opts).remote(*args)
                       for _ in range(int(workers))]
        self.infos = _get([a.info.remote() for a in self.actors], "loading the keys")

    workers = property(lambda self: len(self.actors))

    def shutdown(self):
        """Stop the workers (their keys go with them)."""
        ray = _ray()
        for a in self.actors:
            ray.kill(a, no_restart=True)
        self.actors = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()
        return False


def _secret_free(server) -> list:
    """Attributes of a server object (and of its compiled core) that would touch a secret:
    there must be none."""
    names = dir(server) + dir(getattr(server, "_c", None))
    return sorted({n for n in names
                   if any(s in n.lower() for s in ("decrypt", "secret"))})


def process_memory() -> dict:
    """This process's memory: ``rss_bytes`` now and ``peak_rss_bytes`` since it started (the
    kernel's high-water mark, Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        return {"pid": os.getpid(), "rss_bytes": None, "peak_rss_bytes": peak}
    # The kernel updates its high-water mark lazily: it can trail the current size.
    return {"pid": os.getpid(), "rss_bytes": rss, "peak_rss_bytes": max(peak, rss)}


def _bootstraps(params: Parameters, keys) -> bool:
    """Whether a worker given ``keys`` is built with the bootstrapping circuit: a key
    directory says so in its selection (which then holds every key the circuit needs); keys
    without the conjugation key (every bootstrap needs it) and without bootstrapping keys
    cannot bootstrap, and go without the circuit."""
    if not params.can_bootstrap:
        return False
    if isinstance(keys, KeyFiles):
        return keys.bootstrapping
    if isinstance(keys, EvaluationKeys):
        return keys.has_conjugation or keys.has_bootstrapping
    return True


def _server(raw) -> Server:
    s = Server.__new__(Server)
    s._c = raw
    s.auto_rescale = False
    return s


class _CkksWorker:
    """A CKKS server worker: one `basalt.ckks.Server`, loaded once from the keys' bytes, a
    shared path, or the selected files of a key directory; the bootstrapping circuit only if
    its keys bootstrap."""

    def __init__(self, params_json, keys, bootstrap):
        p = Parameters.from_json(params_json)
        if not bootstrap and p.can_bootstrap:
            p = Parameters(_basalt.ckks_params_without_bootstrapping(p._p))
        if isinstance(keys, KeyFiles):
            self.key_bytes = keys.size_bytes(p)
            self.server = _server(_basalt.ckks_server_from_key_files(
                p._p, [(k, os.fspath(f)) for k, f in keys.files(p)], bool(bootstrap)))
            _trim_heap()  # what loading freed (seeded keys, file buffers) goes back
            return
        if isinstance(keys, str):
            self.key_bytes = os.path.getsize(keys)
            keys = EvaluationKeys.load(p, keys, conjugate=None)
        else:
            self.key_bytes = len(keys)
            keys = EvaluationKeys.from_bytes(p, keys)
        self.server = Server(p, keys)

    def info(self):
        s = self.server
        return {"pid": os.getpid(), "key_id": s.key_id,
                "role": type(s).__name__, "secret_api": _secret_free(s),
                "bootstraps": s.can_bootstrap, "rotations": len(s.rotations),
                "key_bytes": self.key_bytes}

    def memory(self):
        return process_memory()

    def map(self, fn, cts):
        s = self.server
        return [fn(s, s.ciphertext_from_bytes(b)).to_bytes() for b in cts]

    def helr_schedule(self, task):
        return _helr.schedule(self.server, task)

    def helr_partial(self, task, share, v):
        s = self.server
        cts = [s.ciphertext_from_bytes(b)._live() for b in share]
        g = _basalt.helr_partial_gradient(s._c, task._t, cts, s.ciphertext_from_bytes(v)._live())
        return g.to_bytes()

    def helr_update(self, task, it, v, w, scales, *partials):
        s = self.server
        ps = [s.ciphertext_from_bytes(p)._live() for p in partials]
        v, w = (s.ciphertext_from_bytes(x)._live() for x in (v, w))
        rv, rw = _basalt.helr_update(s._c, task._t, tuple(it), ps, (v, w), tuple(scales))
        return rv.to_bytes(), rw.to_bytes(), [len(p) for p in partials]


class CkksCluster(_Cluster):
    """``workers`` CKKS server workers for the parameters ``params``. ``keys`` is what every
    worker loads: a `basalt.ckks.EvaluationKeys` (put once into the object store), the path
    of a file written by ``keys.save``, or a :class:`KeyFiles` selection of a key directory
    (:func:`save_keys`) every node reads; or a list of those, one per worker, for workers of
    different roles (:func:`helr_keys`). No secret is involved: build it from
    ``client.parameters`` and ``client.evaluation_keys(...)``. A worker whose keys cannot
    bootstrap (no conjugation key, or a selection without ``bootstrapping``) is built without
    the bootstrapping circuit.

    ``cpus_per_worker``: CPUs Ray reserves for each worker, and its threads. ``max_retries``:
    restarts of a dead worker and retries of its task (every task is idempotent)."""

    def __init__(self, params: Parameters, keys, *, workers=2, cpus_per_worker=1,
                 max_retries=1):
        if not isinstance(params, Parameters):
            raise BasaltError("CkksCluster(params, keys): params is a basalt.ckks.Parameters")
        if int(workers) < 1:
            raise BasaltError(f"workers={workers} must be at least 1")
        if int(cpus_per_worker) < 1:
            raise BasaltError(f"cpus_per_worker={cpus_per_worker} must be at least 1")
        per_worker = list(keys) if isinstance(keys, (list, tuple)) else [keys] * int(workers)
        if len(per_worker) != int(workers):
            raise BasaltError(f"{len(per_worker)} key sets for {workers} workers: give one, "
                              "or one per worker")
        loads, boots, self.key_bytes, shipped = [], [], [], {}
        for k in per_worker:
            boots.append(_bootstraps(params, k))
            if isinstance(k, EvaluationKeys):
                if id(k) not in shipped:  # one object in the store per distinct key set
                    payload = k.to_bytes()
                    shipped[id(k)] = (_ray_put(payload), len(payload))
                ref, size = shipped[id(k)]
                loads.append(ref)
                self.key_bytes.append(size)
            elif isinstance(k, KeyFiles):
                loads.append(k)
                self.key_bytes.append(k.size_bytes(params))
            elif isinstance(k, (str, os.PathLike)):
                loads.append(os.fspath(k))
                self.key_bytes.append(os.path.getsize(loads[-1]))
            else:
                raise BasaltError("keys: a basalt.ckks.EvaluationKeys, the path of saved keys, "
                                  "a KeyFiles, or a list of those, one per worker")
        self.params = params
        self._keys = loads  # held so that a restarted worker can load its keys again
        ray = init()
        opts = dict(num_cpus=int(cpus_per_worker), max_restarts=int(max_retries),
                    max_task_retries=int(max_retries),
                    runtime_env=_threads_env(cpus_per_worker))
        self.max_retries = int(max_retries)
        remote = ray.remote(_CkksWorker).options(**opts)
        self.actors = [remote.remote(params.to_json(), k, b) for k, b in zip(loads, boots)]
        self.infos = _get([a.info.remote() for a in self.actors], "loading the keys")
        ids = {i["key_id"] for i in self.infos}
        if len(ids) != 1:
            self.shutdown()
            raise BasaltError(f"the workers hold keys of different key sets: {sorted(ids)}")
        self.key_id = self.infos[0]["key_id"]

    def helr_schedule(self, task) -> list:
        """The iterations of ``task`` as ``(level, refresh)`` pairs, from worker 0 (the one that
        bootstraps): :func:`basalt.helr.schedule` on the cluster."""
        return _get(self.actors[0].helr_schedule.remote(task), "schedule")

    def memory(self) -> list:
        """Each worker's memory (:func:`process_memory`): ``rss_bytes`` now and
        ``peak_rss_bytes`` since it started."""
        return _get([a.memory.remote() for a in self.actors], "memory")

    def map(self, fn, cts) -> list:
        """``fn(server, ct)`` on every ciphertext (bytes, or `Ciphertext` objects), the list cut
        into one contiguous share per worker; the results as bytes, in order. ``fn`` must be a
        pure function (it may run twice when a worker dies)."""
        data = [c if isinstance(c, (bytes, bytearray)) else c.to_bytes() for c in cts]
        refs = [self.actors[j].map.remote(fn, data[s:e])
                for j, (s, e) in enumerate(_helr.shares(len(data), self.workers))] \
            if data else []
        return [b for part in _get(refs, "map") for b in part]


def helr_keys(params: Parameters, keys, task, workers: int) -> list:
    """The keys of each of ``workers`` workers in FAB-2's data-parallel HELR training (FAB
    §4.9), for ``CkksCluster(params, helr_keys(params, keys, task, k), workers=k)``: worker 0,
    which computes a share's gradient, sums the partials, updates and bootstraps, gets ``keys``
    whole (every bootstrapping key, the task's rotations); every other worker computes a
    partial gradient only and gets the relinearisation key and the task's rotation keys,
    nothing for bootstrapping, and no bootstrapping circuit. ``keys`` is a :class:`KeyFiles`
    (the others get a selection of the same directory) or a `basalt.ckks.EvaluationKeys` (the
    others get a smaller set, put once into the object store)."""
    k = int(workers)
    if k < 1:
        raise BasaltError(f"workers={workers} must be at least 1")
    if k == 1:
        return [keys]
    steps = list(task.rotations)
    if isinstance(keys, KeyFiles):
        gradient = keys.select(steps)
    elif isinstance(keys, EvaluationKeys):
        gradient = keys.select(steps)
    else:
        raise BasaltError("helr_keys: keys is a KeyFiles or a basalt.ckks.EvaluationKeys")
    return [keys] + [gradient] * (k - 1)


def helr_role_memory(task, *, preset=None, params=None, log_slots=None) -> dict:
    """What each worker of :func:`train_helr` holds, before any key exists: the keys of a
    ``gradient`` worker (relinearisation and the task's rotations) and of the ``update``
    worker (those, the conjugation key, the bootstrapping circuit's rotation and
    bootstrapping keys), in full form as a server holds them, and the update worker's encoded
    circuit (``circuit_plaintext_bytes``); from the parameters and the circuit's shape alone
    (seconds at N = 2^16). Give ``preset`` (a name with a bootstrapping circuit, e.g.
    ``"FAB"``; ``log_slots`` default: the task's) or the ``params`` of a context."""
    steps = list(task.rotations)
    if preset is not None:
        ls = task.slots.bit_length() - 1 if log_slots is None else int(log_slots)
        return dict(_basalt.ckks_role_memory(str(preset), steps, ls))
    if not isinstance(params, Parameters):
        raise BasaltError("helr_role_memory: give preset=NAME or params=ctx.parameters")
    return dict(_basalt.ckks_role_memory_of(params._p, steps))


def _ray_put(x):
    return _ray().put(x)


def train_helr(cluster: CkksCluster, task, client, *, plan=None, on_iteration=None):
    """FAB-2's data-parallel HELR training (FAB §4.9) on ``cluster``'s workers.

    Each iteration: the weights ``v`` are broadcast (one object in the store), worker ``j``
    computes the encrypted partial gradient of share ``j`` of the mini-batch
    (:func:`basalt.helr.shares`), worker 0 sums the partials in share order, runs Nesterov's
    update and, when the schedule says so, the bootstrap. ``client`` is a
    `basalt.helr.Client` (it encrypts each mini-batch when its iteration comes) or a dict of
    inputs encrypted once (:func:`basalt.helr.encrypt_inputs`).

    Returns ``(w, stats)``: the encrypted model as bytes (bit-identical to
    :func:`basalt.helr.train`) and one record per iteration: ``seconds`` (server side, from
    the broadcast to the updated weights), ``partial_bytes`` (gradients sent to worker 0, FAB-2's
    first exchange), ``broadcast_bytes`` (the new ``v`` to the other workers, the second),
    ``batch_bytes`` (the client's encrypted mini-batch) and ``refresh``."""
    ray = _ray()
    plan = cluster.helr_schedule(task) if plan is None else plan
    v, w, working, batch, boot_scale = _helr._inputs(client, plan)
    stats = []
    scales = (float(boot_scale), float(working))
    for i, it in enumerate(plan):
        cts = batch(i)
        t0 = time.perf_counter()
        v_ref = ray.put(v)
        split = _helr.shares(len(cts), cluster.workers)
        partials = [cluster.actors[j].helr_partial.remote(task, cts[s:e], v_ref)
                    for j, (s, e) in enumerate(split)]
        v, w, sizes = _get(cluster.actors[0].helr_update.remote(task, tuple(it), v_ref, w,
                                                                scales, *partials),
                           f"HELR iteration {i}")
        seconds = time.perf_counter() - t0
        rec = {"iteration": i, "seconds": seconds, "refresh": bool(it[1]),
               "workers": len(split), "partial_bytes": sum(sizes[1:]),
               "broadcast_bytes": len(v) * (len(split) - 1),
               "batch_bytes": sum(len(c) for c in cts)}
        stats.append(rec)
        if on_iteration is not None:
            on_iteration(rec)
    return w, stats


class _TfheWorker:
    """A TFHE server worker: the server key of one parameter set, loaded once."""

    def __init__(self, name, key, allow_insecure):
        if isinstance(key, str):
            with open(key, "rb") as f:
                key = f.read()
        self.server = _basalt.TfheWorkerServer(name, key, allow_insecure)

    def info(self):
        return {"pid": os.getpid(), "role": type(self.server).__name__,
                "secret_api": _secret_free(self.server)}

    def apply(self, cts, table):
        return self.server.apply_table_batch(list(cts), list(table))

    def nn_layer(self, network, layer, start, end, inputs):
        return self.server.nn_layer(network, int(layer), int(start), int(end), list(inputs))


def tfhe_server_key(ctx) -> bytes:
    """The server key of a `basalt.tfhe.Context` as bytes (no secret inside)."""
    return ctx.server_key().to_bytes()


class TfheCluster(_Cluster):
    """``workers`` TFHE server workers holding the server key of ``ctx`` (a
    `basalt.tfhe.Context`: only its server key is sent) or of ``server_key`` bytes for the set
    ``name`` (bytes, a `basalt.tfhe.ServerKey`, or a path every node reads).
    :meth:`apply_batch` splits a batch over them; each runs two-level batched PBS
    on its ``cpus_per_worker`` threads."""

    def __init__(self, ctx=None, *, server_key=None, name=None, allow_insecure=False,
                 workers=2, cpus_per_worker=1, max_retries=1):
        if ctx is not None:
            server_key, name = tfhe_server_key(ctx), ctx.name
        if server_key is None or name is None:
            raise BasaltError("TfheCluster needs a basalt.tfhe.Context, or server_key bytes "
                              "(or a shared path) and the set's name")
        if hasattr(server_key, "to_bytes"):  # a basalt.tfhe.ServerKey
            server_key = server_key.to_bytes()
        if isinstance(server_key, (bytes, bytearray)):
            self.key_bytes = len(server_key)
            server_key = _ray_put(bytes(server_key))
        else:
            server_key = os.fspath(server_key)
            self.key_bytes = os.path.getsize(server_key)
        self.name = name
        self._keys = server_key  # held so that a restarted worker can load the key again
        super().__init__(_TfheWorker, (name, server_key, bool(allow_insecure)),
                         workers=workers, cpus_per_worker=cpus_per_worker,
                         max_retries=max_retries)

    def apply_batch(self, cts, table) -> list:
        """The lookup ``table`` (the output on every message, e.g. ``ctx.table(f)``) on every
        ciphertext (bytes, or `basalt.tfhe.Ciphertext`), one contiguous share per worker;
        the outputs as bytes, in order (load them with ``ctx.ciphertext_from_bytes``)."""
        data = [c if isinstance(c, (bytes, bytearray)) else c.to_bytes() for c in cts]
        table = [int(t) for t in table]
        if not data:
            return []
        refs = [self.actors[j].apply.remote(data[s:e], table)
                for j, (s, e) in enumerate(_helr.shares(len(data), self.workers))]
        return [b for part in _get(refs, "PBS batch") for b in part]

    def nn_layer(self, network: str, layer: int, inputs, *, rows=None) -> list:
        """Layer ``layer`` of ``network`` (see :func:`nn_layers`) on the encrypted activations
        ``inputs`` (bytes or ciphertexts): the inputs put once into the object store, the
        layer's neurons cut into one contiguous share per worker, each worker computing its
        neurons' pre-activations and their ReLU bootstraps (two-level batched). The outputs as
        bytes, in neuron order: those of the whole layer on one worker. The set must be the
        network's (``NN_N1024``, ``NN_N2048``, ``NN_N4096``). ``rows=(start, end)``: only
        those neurons."""
        shape = nn_layers(network)
        if not 0 <= int(layer) < len(shape):
            raise BasaltError(f"{network} has layers 0..{len(shape) - 1}, not {layer}")
        start, end = (0, shape[int(layer)][1]) if rows is None else map(int, rows)
        if not 0 <= start < end <= shape[int(layer)][1]:
            raise BasaltError(f"rows {rows} outside layer {layer}'s 0..{shape[int(layer)][1]}")
        data = [c if isinstance(c, (bytes, bytearray)) else c.to_bytes() for c in inputs]
        ref = _ray_put(data)
        refs = [self.actors[j].nn_layer.remote(network, layer, start + s, start + e, ref)
                for j, (s, e) in enumerate(_helr.shares(end - start, self.workers))]
        return [b for part in _get(refs, f"{network} layer {layer}") for b in part]

    def nn_forward(self, network: str, inputs) -> list:
        """Every layer of ``network`` in turn (:meth:`nn_layer`): the encrypted logits, as
        bytes (modulo 2p, read signed by the client)."""
        a = list(inputs)
        for layer in range(len(nn_layers(network))):
            a = self.nn_layer(network, layer, a)
        return a


def nn_layers(network: str) -> list:
    """The weight layers of ``network`` (``"nn-20"``, ``"nn-50"``, ``"nn-100"``: the deep
    networks of Strix Fig. 7) as ``(inputs, outputs)``; all but the last end in a ReLU
    bootstrap."""
    return _basalt.tfhe_nn_layers(str(network))


def _grid_points(trace_json, machine, points):
    """Time ``trace`` at each point (a list of (field, value) settings) as a one-point grid."""
    from .sim import Trace
    trace = Trace.from_json(trace_json)
    rows = []
    for settings in points:
        text, _, _ = _basalt.sim_grid(trace, machine, [(f, [v]) for f, v in settings])
        (p,) = __import__("json").loads(text)
        rows.append((list(map(tuple, p["settings"])), p["seconds"], p["stall_fraction"],
                     p["area_mm2"], p["energy_j"], p["edp"], p["power_w"]))
    return rows


def grid(trace, machine, axes: dict, *, tasks=None, csv=None, plot=None, max_retries=2):
    """`basalt.sim.grid` with its points timed as Ray tasks: the points in the local grid's
    order (the last axis varies fastest) cut into ``tasks`` contiguous chunks (default: the
    cluster's CPUs), the trace put once into the object store, the Pareto front marked over
    all points. Same result, CSV and plot as the local grid. ``machine`` is a built-in name or
    a machine file every node can read."""
    import itertools
    import json

    from . import sim
    if not axes:
        raise BasaltError("grid: give at least one axis, {field: [values]}")
    pairs = [(str(f), [sim._toml(v) for v in (vals if isinstance(vals, (list, tuple))
                                               else [vals])])
             for f, vals in axes.items()]
    path = sim._machine_path(machine)
    for f, vals in pairs:
        for v in vals:
            _basalt.sim_check_machine(path, [f"{f}={v}"])
    points = [list(zip([f for f, _ in pairs], combo))
              for combo in itertools.product(*[vals for _, vals in pairs])]
    ray = init()
    n = int(tasks) if tasks else max(1, int(ray.available_resources().get("CPU", 1)))
    trace_ref = ray.put(trace.to_json())
    remote = ray.remote(_grid_points).options(max_retries=int(max_retries))
    refs = [remote.remote(trace_ref, path, points[s:e])
            for s, e in _helr.shares(len(points), n)]
    rows = [r for part in _get(refs, "grid") for r in part]
    name = os.path.splitext(os.path.basename(path))[0]
    text, text_csv, svg = _basalt.sim_grid_merge(name, rows)
    out = []
    for p in json.loads(text):
        row = {f: v for f, v in p.pop("settings")}
        row.update(p)
        out.append(row)
    if csv is not None:
        with open(csv, "w") as fh:
            fh.write(text_csv)
    if plot is not None:
        with open(plot, "w") as fh:
            fh.write(svg)
    try:
        import pandas
    except ImportError:
        return out
    return pandas.DataFrame(out)
