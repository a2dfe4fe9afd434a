"""The read path: a capture's sources detected, decoded (in worker processes for big files), paired and
collected into one event frame.

The public functions are named at the top, in :mod:`cdckit` (``cdckit.read``, ``cdckit.detect``, ...);
this package holds the modules that make them.
"""
