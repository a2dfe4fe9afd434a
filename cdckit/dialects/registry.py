"""The dialect registry: names to dialect classes.

Dialect modules register themselves with ``@register``; third-party packages
can add dialects through the ``cdckit.dialects`` entry-point group.

>>> from cdckit.dialects import registry
>>> registry.get("canal").name
'canal'
>>> registry.get("datahub-blob").name
'datahub_blob'
"""

from __future__ import annotations

import difflib
from importlib.metadata import entry_points

from ..errors import UnknownDialectError
from .base import Dialect
from .options import DialectOptions, resolved

__all__ = [
    "register",
    "get",
    "create",
    "names",
    "writable",
    "all_dialects",
    "flag",
    "FLAGS",
    "transaction_keys",
    "transaction_places",
    "transaction_ends",
]

#: The class flags of a dialect that :func:`flag` reads (see :class:`~cdckit.dialects.base.Dialect`).
FLAGS = ("partial_updates", "whole_files", "splits_updates", "contiguous_seq", "seq_row_in_message")

_REGISTRY: dict[str, type[Dialect]] = {}
_plugins_loaded = False


def register(cls: type[Dialect]) -> type[Dialect]:
    """Class decorator: add a dialect to the registry under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} has no name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"dialect {cls.name!r} is already registered by {_REGISTRY[cls.name].__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in entry_points(group="cdckit.dialects"):
        register(entry.load())


def names() -> list[str]:
    """Registered dialect names, in registration order."""
    _load_plugins()
    return list(_REGISTRY)


def get(name: str) -> type[Dialect]:
    """The dialect class registered as ``name`` (case, ``-`` and spaces forgiven).

    A misspelt name raises :class:`UnknownDialectError` with the nearest name.
    """
    _load_plugins()
    normal = name.strip().lower().replace("-", "_").replace(" ", "_")
    if normal in _REGISTRY:
        return _REGISTRY[normal]
    close = difflib.get_close_matches(normal, list(_REGISTRY), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else f"; known dialects: {', '.join(_REGISTRY)}"
    raise UnknownDialectError(f"unknown dialect {name!r}{hint}", tuple(_REGISTRY), close[0] if close else None)


def create(name: str, tz: str | None = None, *, options: DialectOptions | None = None) -> Dialect:
    """An instance of the dialect registered as ``name``, following ``options`` (``tz`` replaces its zone)."""
    return get(name).configured(resolved(options, tz))


def all_dialects(tz: str | None = None, *, options: DialectOptions | None = None) -> list[Dialect]:
    """One instance of every registered dialect, each following ``options`` (``tz`` replaces its zone)."""
    chosen = resolved(options, tz)
    return [cls.configured(chosen) for cls in (_REGISTRY[n] for n in names())]


def writable() -> list[str]:
    """The names of the dialects that can be written (they have an encoder), in registration order.

    >>> "maxwell" in writable()
    True
    """
    return [name for name in names() if get(name).can_encode()]


def transaction_keys() -> dict[str, str]:
    r"""Each registered dialect whose transaction ids need cutting, and its ``transaction_key`` expression.

    >>> print(transaction_keys()["debezium"])
    ^(\d+):\d+$
    """
    return _patterns("transaction_key")


def _patterns(attribute: str) -> dict[str, str]:
    """Each registered dialect whose class sets the regular expression ``attribute``, and that expression."""
    found: dict[str, str] = {}
    for name in names():
        pattern = getattr(get(name), attribute)
        if pattern:
            found[name] = pattern
    return found


def transaction_places() -> dict[str, str]:
    r"""Each registered dialect whose ``seq`` declares a change's place in its transaction, and its
    ``transaction_place`` expression (group 1: the place, from 0).

    >>> print(transaction_places()["maxwell"])
    :(\d+)$
    """
    return _patterns("transaction_place")


def transaction_ends() -> dict[str, str]:
    """Each registered dialect whose ``seq`` marks a transaction's last change, and its ``transaction_end``
    expression.

    >>> print(transaction_ends()["maxwell"])
    :~$
    """
    return _patterns("transaction_end")


def flag(name: str | None, which: str) -> bool:
    """The class flag ``which`` (one of :data:`FLAGS`) of the dialect registered as ``name``.

    None, an unknown name or anything but text is False (a frame's ``dialect``
    column may hold a missing value or a plug-in's name not installed here).
    A misspelt flag raises ``ValueError``.

    >>> flag("shareplex", "partial_updates"), flag("canal", "partial_updates")
    (True, False)
    >>> flag(None, "whole_files"), flag("no-such-dialect", "whole_files"), flag("wal2json", "whole_files")
    (False, False, True)
    """
    if which not in FLAGS:
        raise ValueError(f"unknown dialect flag {which!r}; the flags are {', '.join(FLAGS)}")
    if not isinstance(name, str):
        return False
    try:
        found = get(name)
    except UnknownDialectError:
        return False
    return bool(getattr(found, which))
