"""The readers of files, payloads and iterables (containers) moved to :mod:`cdckit.io`.

This path still works for a while and warns (:mod:`cdckit.moved`).
"""

from .moved import moved_to

__getattr__ = moved_to(__name__, "cdckit.io")
