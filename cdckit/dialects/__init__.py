"""One module per dialect; importing this package registers them all.

>>> from cdckit import dialects
>>> "canal" in dialects.names()
True
"""

from __future__ import annotations

# Registration order is the order of the contract's table.
from . import (
    arcion,  # noqa: E402,F401
    aws_dms,  # noqa: E402,F401
    canal,  # noqa: E402,F401
    datahub_blob,  # noqa: E402,F401
    datahub_tuple,  # noqa: E402,F401
    dataworks,  # noqa: E402,F401
    debezium,  # noqa: E402,F401
    debezium_flat,  # noqa: E402,F401
    debezium_mongodb,  # noqa: E402,F401
    lindorm,  # noqa: E402,F401
    maxwell,  # noqa: E402,F401
    oceanbase_default,  # noqa: E402,F401
    oceanbase_extend,  # noqa: E402,F401
    ogg,  # noqa: E402,F401
    pg_test_decoding,  # noqa: E402,F401
    shareplex,  # noqa: E402,F401
    universe,  # noqa: E402,F401
    wal2json,  # noqa: E402,F401
)
from .base import BadMessage, Dialect, Match, Record, SkipMessage
from .registry import all_dialects, create, get, names, register

__all__ = [
    "Dialect",
    "Match",
    "Record",
    "BadMessage",
    "SkipMessage",
    "register",
    "get",
    "create",
    "names",
    "all_dialects",
]
