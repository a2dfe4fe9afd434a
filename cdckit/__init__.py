"""cdckit: understand captured change-data-capture streams.

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("debezium"))
>>> sorted(set(events["op"]))[:3]
['begin', 'commit', 'ddl']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dialects, notebook, samples
from .analysis.compare import Comparison, compare
from .analysis.filters import select
from .analysis.keys_inferred import InferredKeys, infer_keys
from .analysis.ordering import OrderReport, order_report, sort_events
from .analysis.reconcile import Reconciliation, reconcile
from .analysis.replay import TableStates, history, materialize, scd2
from .analysis.schemas import schema_history, table_schema
from .analysis.tables import profile, table
from .analysis.transactions import transactions
from .capture import Capture, column_types_of, quarantine
from .errors import AmbiguousDialectError, CdcError, DecodeError, InvalidValue, KeylessTableError, UnknownDialectError
from .export import convert
from .frame import COLUMN_NAMES, OPS
from .keys import with_keys
from .optional import MissingExtraError
from .reading.detect import Detection, detect
from .reading.read import read
from .version import __version__

if TYPE_CHECKING:  # the explorer is imported on first use (see explore)
    from .viz.explorer import Explorer


def explore(events: Any, **options: Any) -> Explorer:
    """The explorer widget of a capture (see :func:`cdckit.viz.explorer.explore`).

    Imported on first use, so that ``import cdckit`` (also on Spark
    executors) does not load ipywidgets and plotly.

    >>> import cdckit
    >>> type(cdckit.explore(cdckit.samples.load("lindorm"))).__name__
    'Explorer'
    """
    from .viz.explorer import explore as _explore

    return _explore(events, **options)


__all__ = [
    "__version__",
    "read",
    "Capture",
    "quarantine",
    "column_types_of",
    "detect",
    "select",
    "with_keys",
    "infer_keys",
    "InferredKeys",
    "sort_events",
    "order_report",
    "OrderReport",
    "transactions",
    "materialize",
    "history",
    "scd2",
    "TableStates",
    "table",
    "schema_history",
    "table_schema",
    "profile",
    "convert",
    "compare",
    "Comparison",
    "reconcile",
    "Reconciliation",
    "explore",
    "Detection",
    "dialects",
    "samples",
    "notebook",
    "COLUMN_NAMES",
    "OPS",
    "CdcError",
    "DecodeError",
    "InvalidValue",
    "UnknownDialectError",
    "KeylessTableError",
    "AmbiguousDialectError",
    "MissingExtraError",
]
