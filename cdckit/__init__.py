"""cdckit: understand captured change-data-capture streams.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("debezium"))
>>> sorted(set(events["op"]))[:3]
['begin', 'commit', 'ddl']
"""

from __future__ import annotations

from . import dialects, notebook, samples
from .detect import Detection, detect
from .errors import AmbiguousDialectError, CdcError, DecodeError, UnknownDialectError
from .frame import COLUMN_NAMES, OPS
from .ordering import OrderReport, order_report, sort_events
from .read import read
from .replay import TableStates, history, materialize, scd2

__version__ = "0.1.0"

__all__ = [
    "read",
    "detect",
    "sort_events",
    "order_report",
    "OrderReport",
    "materialize",
    "history",
    "scd2",
    "TableStates",
    "Detection",
    "dialects",
    "samples",
    "notebook",
    "COLUMN_NAMES",
    "OPS",
    "CdcError",
    "DecodeError",
    "UnknownDialectError",
    "AmbiguousDialectError",
]
