"""The accelerator models for Python: record a program's kernel stream, time it on a machine.

One program, two executions. The code below is an ordinary ``basalt.ckks`` program; on a real
context it computes on ciphertexts, on a symbolic one it only emits the kernels (NTT, BConv,
element-wise products, automorphisms, key loads…) that :func:`run` times on an accelerator
model built into the package (:func:`machines`: ``osiris``, ``fab``, ``craterlake``, ``f1plus``, ``strix``…).

>>> import basalt
>>> ctx = basalt.ckks.Context.preset("CRATERLAKE_80_1DIGIT", rotations=[1], symbolic=True,
...                                allow_insecure=True)
>>> x = ctx.encrypt_symbolic(slots=ctx.slots)
>>> with basalt.sim.record() as rec:
...     y = (x * x).rescale().rotate(1)
>>> rec.trace.counts()["Ntt"] > 0
True
>>> fast = basalt.sim.run(rec.trace, "craterlake")
>>> slow = basalt.sim.run(rec.trace, "craterlake", {"memory.hbm_gbps": 100})
>>> slow["seconds"] > fast["seconds"] > 0
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import _basalt

BasaltError = _basalt.BasaltError
Trace = _basalt.Trace


def data_dir():
    """A folder holding ``machines/`` and ``papers/`` that replaces the built-in ones:
    ``$BASALT_DATA`` if set, else ``None`` (the machine files and paper data built into the
    package)."""
    env = os.environ.get("BASALT_DATA")
    return Path(env) if env else None


def machines() -> list:
    """Names of the machines :func:`run` accepts by name (the built-in ones, and those of
    ``$BASALT_DATA/machines`` when it is set).

    >>> "craterlake" in machines()
    True
    """
    named = set(_basalt.sim_builtin_machines())
    d = data_dir()
    if d is not None:
        named.update(p.stem for p in (d / "machines").glob("*.toml"))
    return sorted(named)


def _machine_path(machine) -> str:
    p = Path(machine)
    if p.suffix == ".toml" or p.exists():
        return str(p)
    d = data_dir()
    if d is not None and (d / "machines" / f"{machine}.toml").exists():
        return str(d / "machines" / f"{machine}.toml")
    if machine not in _basalt.sim_builtin_machines():
        raise BasaltError(f"unknown machine {machine!r}: a path, or one of {machines()}")
    return str(machine)


class record:
    """Context manager recording the kernels of the operations inside it into ``.trace``.

    Recordings nest: an inner one does not leak into the outer one. Works on real and symbolic
    contexts alike, so a test can check that both execute the same kernels.
    """

    def __init__(self):
        self.trace = None

    def __enter__(self) -> "record":
        _basalt.trace_begin()
        return self

    def __exit__(self, *exc):
        self.trace = _basalt.trace_end()
        return False


def run(trace: Trace, machine="craterlake", overrides=None, *, plot_dir=None,
        bootstrap=None) -> dict:
    """Time ``trace`` on ``machine`` (a name from :func:`machines` or a path to a TOML file),
    with ``overrides`` of its fields (``{"memory.hbm_gbps": 2000}``). Returns the report:
    ``seconds``, ``cycles``, ``stall_cycles``, per-unit utilisation, HBM traffic by kind,
    energy. With ``plot_dir``, also writes utilisation, traffic and roofline SVGs there (their
    paths are under ``"figures"``). A program recorded with its bootstraps as markers (ResNet-20,
    sort) needs the ``bootstrap`` trace, timed once per marker; without it such a trace raises
    ``BasaltError`` rather than being timed without its bootstraps. Bad machine files, fields
    or values raise ``BasaltError``.
    """
    sets = [f"{k}={_toml(v)}" for k, v in (overrides or {}).items()]
    text, figures = _basalt.sim_run(trace, _machine_path(machine), sets,
                                    None if plot_dir is None else str(plot_dir), bootstrap)
    report = json.loads(text)
    if figures:
        report["figures"] = figures
    return report


def _toml(v) -> str:
    """An override value as the machine file's TOML spells it (Python's ``False`` is
    ``false``)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def reproduce(paper=None) -> dict:
    """The papers' rows beside the models' figures, as ``basalt sim reproduce`` prints them:
    ``{"rows": [...], "readings": [...]}``, each row with ``paper``, ``table``, ``row``,
    ``metric``, ``theirs``, ``ours`` (``None`` when not yet modelled), ``ratio``, ``tolerance``,
    ``within``, ``kind`` and ``how``. Only ``target`` and ``validation`` rows are independent
    predictions; ``calibration`` (a machine constant was fitted to it), ``bookkeeping`` (a sum
    or restatement of transcribed inputs), ``derived`` (a function of the rows in ``from``,
    judged at the tolerance it inherits) and ``baseline`` (another system's figure) are not. ``paper`` is one of osiris, fab,
    mxv, craterlake, strix (all when omitted: the papers run in parallel, about 45 s on two
    cores)."""
    d = data_dir()
    return json.loads(_basalt.sim_reproduce(None if d is None else str(d), paper))


def compare(trace: Trace, on=None, *, bootstrap=None, plot=None) -> list:
    """``trace`` on several machines or variants of one, as ``basalt sim compare``: ``on`` is a
    list of machine names and ``(name, overrides)`` pairs (every machine of :func:`machines`
    when omitted), e.g. ``["craterlake", ("osiris", {"memory.hbm_gbps": 2000})]``. Returns one
    dict per entry, ``{"machine": "osiris@memory.hbm_gbps=2000", "report": {...}}``, or
    ``{"machine": ..., "error": "..."}`` when that machine cannot run the trace (a ring above
    its maximum, no unit for a kernel). A bad machine file or override raises ``BasaltError``
    before anything is timed. With ``plot`` (a path), also writes the latencies as an SVG bar
    chart (log scale), as ``basalt sim compare --plot`` does."""
    entries = [(m, {}) if isinstance(m, str) else (m[0], dict(m[1]))
               for m in (machines() if on is None else on)]
    for name, overrides in entries:
        _basalt.sim_check_machine(_machine_path(name),
                                  [f"{k}={_toml(v)}" for k, v in overrides.items()])
    rows = []
    for name, overrides in entries:
        label = str(name) + "".join(f"@{k}={_toml(v)}" for k, v in overrides.items())
        try:
            rows.append({"machine": label,
                         "report": run(trace, name, overrides, bootstrap=bootstrap)})
        except BasaltError as e:
            rows.append({"machine": label, "error": str(e)})
    if plot is not None:
        timed = [(r["machine"], r["report"]["seconds"]) for r in rows if "report" in r]
        Path(plot).write_text(_basalt.sim_compare_svg("trace", timed))
    return rows


def grid(trace: Trace, machine, axes: dict, *, csv=None, plot=None):
    """A design-space grid, as ``basalt sim grid``: ``trace`` on ``machine`` at every
    combination of ``axes`` (``{"units.mdc.lanes": [256, 512, 1024], "memory.hbm_gbps":
    [1000, 2000]}``; the last axis varies fastest). One record per point: each axis field, then
    ``seconds``, ``stall_fraction``, ``area_mm2``, ``energy_j``, ``edp`` (J·s), ``power_w`` and
    ``pareto`` (no other point is as good on latency, energy and area and better on one).
    Returns a pandas ``DataFrame`` when pandas is installed, else a list of dicts. ``csv`` and
    ``plot`` (paths) also write the points as CSV and energy over latency as an SVG scatter with
    the Pareto front. An axis over a field the machine does not have raises ``BasaltError``
    naming it, before anything is timed."""
    if not axes:
        raise BasaltError("grid: give at least one axis, {field: [values]}")
    pairs = [(str(f), [_toml(v) for v in (vals if isinstance(vals, (list, tuple)) else [vals])])
             for f, vals in axes.items()]
    points, text_csv, svg = _basalt.sim_grid(trace, _machine_path(machine), pairs)
    rows = []
    for p in json.loads(points):
        row = {f: v for f, v in p.pop("settings")}
        row.update(p)
        rows.append(row)
    if csv is not None:
        Path(csv).write_text(text_csv)
    if plot is not None:
        Path(plot).write_text(svg)
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def sweep(trace: Trace, machine, field: str, values) -> list:
    """:func:`run` once per value of one machine field; a list of ``(value, report)``."""
    return [(v, run(trace, machine, {field: v})) for v in values]
