"""Pausing Python's cyclic garbage collector while many small objects are made.

Decoding a capture, or turning a column into Python lists, makes millions of
small objects and no cycles; the collector would scan the growing batch over
and over, costing more than the work itself (ten times more for a million
lists).

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "gc_resumed"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (as it was afterwards)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_resumed() -> Iterator[None]:
    """Inside :func:`gc_paused`: the collector runs normally while the caller's code runs."""
    paused = not gc.isenabled()
    if paused:
        gc.enable()
    try:
        yield
    finally:
        if paused:
            gc.disable()
