"""Basalt: fast encrypted computing (CKKS and TFHE) with software models of FHE accelerators.

The compiled core lives in ``basalt._basalt`` (Rust, via PyO3); this package is the numpy-facing
API on top of it.
"""

from ._basalt import __version__

__all__ = ["__version__"]
