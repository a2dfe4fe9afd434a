"""One module per dialect; importing this package registers them all.

>>> from cdckit import dialects
>>> "canal" in dialects.names()
True
"""

from __future__ import annotations

from .base import BadMessage, Dialect, Match, Record, SkipMessage
from .registry import all_dialects, create, get, names, register

# Registration order is the order of the contract's table.
from . import oceanbase_default  # noqa: E402,F401
from . import oceanbase_extend  # noqa: E402,F401
from . import canal  # noqa: E402,F401
from . import dataworks  # noqa: E402,F401
from . import shareplex  # noqa: E402,F401
from . import datahub_blob  # noqa: E402,F401
from . import datahub_tuple  # noqa: E402,F401
from . import debezium  # noqa: E402,F401
from . import arcion  # noqa: E402,F401
from . import lindorm  # noqa: E402,F401
from . import universe  # noqa: E402,F401
from . import maxwell  # noqa: E402,F401
from . import ogg  # noqa: E402,F401
from . import aws_dms  # noqa: E402,F401
from . import debezium_mongodb  # noqa: E402,F401
from . import debezium_flat  # noqa: E402,F401
from . import wal2json  # noqa: E402,F401
from . import pg_test_decoding  # noqa: E402,F401

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
