"""Old module paths kept for a while: each name still works and warns where it moved.

A module that moved keeps a two-line stand-in at its old path::

    from .moved import moved_to
    __getattr__ = moved_to(__name__, "cdckit.io")

>>> import warnings
>>> find = moved_to("cdckit.containers", "cdckit.io")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     find("iter_sources").__module__, str(caught[0].message)
('cdckit.io.sources', 'cdckit.containers.iter_sources has moved: import iter_sources from cdckit.io')
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any
from collections.abc import Callable, Mapping

__all__ = ["moved_to"]


def moved_to(old: str, new: str, elsewhere: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """The module ``__getattr__`` of the stand-in at ``old``: a name is looked up in ``new`` (or in the module
    ``elsewhere`` names for it), with a ``DeprecationWarning`` naming where to import it from."""
    def find(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        home = (elsewhere or {}).get(name, new)
        found = getattr(importlib.import_module(home), name)  # AttributeError: no such name there either
        warnings.warn(f"{old}.{name} has moved: import {name} from {home}", DeprecationWarning, stacklevel=2)
        return found

    return find
