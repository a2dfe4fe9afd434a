"""One module per dialect; importing this package registers them all.

>>> from cdckit import dialects
>>> "canal" in dialects.names()
True
"""

from __future__ import annotations

# Registration order is the order of these imports: alphabetical by module name (ruff keeps them sorted). It
# breaks ties of detection: where dialects score a message alike, the one registered first is named first
# (cdckit.reading.detect.score_message sorts the scores stably), and so wins a read's detection when they tie
# over the whole input. A variant that claims a message wins over its parent whatever the order.
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
