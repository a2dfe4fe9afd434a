"""Order of a capture: the canonical sort and the ordering report.

``sort_events`` puts events in the order they happened; ``order_report``
says what is wrong with the order they arrived in. Both work on the pandas
frame of :func:`cdckit.read`, and :mod:`cdckit.spark` gives the same answers
on a Spark frame. The package holds:

- :mod:`~cdckit.analysis.ordering.sort`: the canonical order (arrival order, seq order);
- :mod:`~cdckit.analysis.ordering.catalogue`: the findings, their severities and columns, as data;
- :mod:`~cdckit.analysis.ordering.narrow`: the narrow frame the finding kernels read;
- :mod:`~cdckit.analysis.ordering.kernels`: the finding rows, computed column by column
  (with the integer codes and stable orders of :mod:`~cdckit.analysis.ordering.codes`);
- :mod:`~cdckit.analysis.ordering.transaction_members`: which events make each transaction and what the
  capture holds of it (the one rule of :func:`cdckit.transactions` and of the transaction findings of
  :mod:`~cdckit.analysis.ordering.transaction_findings`);
- :mod:`~cdckit.analysis.ordering.report`: :class:`OrderReport` and :func:`order_report`;
- :mod:`~cdckit.analysis.ordering.identity`: which events are one stream, one row, one change delivered
  again, one transaction (the rules every engine's ordering and replay read).

A **table** is named ``database.table`` (``schema.table`` where the dialect
names no database, ``table`` where it names neither).

>>> import cdckit
>>> events = cdckit.read(cdckit.samples.path("canal/examples"))
>>> report = cdckit.order_report(events)
>>> int(report.summary().set_index("finding").loc["inversions", "rows"])
0
"""

from __future__ import annotations

from .report import OrderReport, order_report
from .sort import sort_events

__all__ = ["sort_events", "order_report", "OrderReport"]
