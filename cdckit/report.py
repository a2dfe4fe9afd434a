"""The standalone HTML report moved to :mod:`cdckit.viz.report`.

This path still works for a while and warns (:mod:`cdckit.moved`).
"""

from .moved import moved_to

__getattr__ = moved_to(__name__, "cdckit.viz.report")
