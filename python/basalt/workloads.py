"""The papers' workloads, run for real on real data (the registry of ``basalt-workloads``).

Each run encrypts real inputs (scikit-learn's bundled digits, resized to the paper's shape),
runs the paper's program under encryption and in the clear with the same polynomial
activations, and returns one record: accuracy (plaintext, encrypted, agreement), precision in
bits against the plaintext twin, wall time, bootstraps and evaluation-key bytes.

>>> import basalt
>>> [w["name"] for w in basalt.workloads.list()][:3]
['helr', 'lola', 'mlp']
>>> r = basalt.workloads.run("mlp", quick=True)      # insecure toy ring, a few images
>>> r["accuracy"]["agreement"]
1.0

Without ``quick`` a workload runs at its paper's preset (``preset=`` overrides): the
bootstrapped ones need N = 2^16 and gigabytes of keys. The same runs from the shell:
``basalt workload run NAME [--preset P] [--quick] [--threads T] [--images N] [--force] [--json]``.
"""

from __future__ import annotations

import json

from . import _basalt

BasaltError = _basalt.BasaltError

__all__ = ["BasaltError", "list", "run"]


def list() -> "list[dict]":  # noqa: A001 (the registry's name for it)
    """Every workload: ``name``, ``paper``, ``description`` and the full-size ``preset``."""
    return json.loads(_basalt.workloads_list())


def run(
    name: str,
    *,
    preset: "str | None" = None,
    quick: bool = False,
    threads: "int | None" = None,
    progress: bool = False,
    allow_insecure: bool = False,
    force: bool = False,
    images: "int | None" = None,
) -> dict:
    """Run workload ``name`` and return its record (a dict).

    ``preset``: a CKKS preset name or alias (default: the paper's; the toy ring with
    ``quick``). ``quick``: insecure toy ring and a few inputs, seconds. ``threads``: worker
    threads (default: all cores). ``progress``: a progress bar on stderr. ``allow_insecure``:
    accept a preset estimated below 128-bit security (some papers' own sets are). ``force``:
    run even when the memory estimate exceeds the memory available (the run is refused
    otherwise). ``images``: encrypted inputs to run, the first of the test split (default: the
    workload's own count); the record's ``images`` says how many ran.

    Raises :class:`BasaltError` naming an unknown workload or preset, a preset without enough
    levels or slots for the workload, or a missing key.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise BasaltError(f"threads must be a positive int, not {threads!r}")
    if images is not None and (isinstance(images, bool) or not isinstance(images, int)
                               or images < 1):
        raise BasaltError(f"images must be a positive int, not {images!r}")
    return json.loads(_basalt.workloads_run(name, preset, bool(quick), threads, bool(progress),
                                            bool(allow_insecure), bool(force), images))
