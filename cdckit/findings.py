"""The finding kernels moved to :mod:`cdckit.analysis.ordering.kernels`.

This path still works for a while and warns (:mod:`cdckit.moved`).
"""

from .moved import moved_to

__getattr__ = moved_to(__name__, "cdckit.analysis.ordering.kernels")
