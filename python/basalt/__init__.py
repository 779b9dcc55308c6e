"""Basalt: fast encrypted computing (CKKS and TFHE) with software models of FHE accelerators.

The compiled core lives in ``basalt._basalt`` (Rust, via PyO3); the modules here are the
numpy-facing API on top of it: :mod:`basalt.ckks`, :mod:`basalt.bootstrap` and
:mod:`basalt.tfhe`, and :mod:`basalt.sim` (trace a program, time it on an accelerator model), and
:mod:`basalt.workloads` (the papers' workloads run for real on real data), :mod:`basalt.helr`
(HELR training step by step) and, with Ray installed, :mod:`basalt.distributed` (server
workers on a cluster).
"""

from . import bootstrap, ckks, helr, sim, tfhe, workloads
from ._basalt import BasaltError, __version__

__all__ = ["BasaltError", "bootstrap", "ckks", "helr", "sim", "tfhe", "workloads", "__version__"]
