"""The Canal dialect: what it is called, how it is recognised, and the parts it is made of.

:class:`Canal` is the one-message decoder (:mod:`.decode`), the batch decoder
(:mod:`.fast_path`) and the encoder (:mod:`.encode`) under one registry name.

>>> Canal().detect({"type": "INSERT", "isDdl": False, "es": 1, "data": [{"id": "1"}]}).score
0.95
"""

from __future__ import annotations

from typing import Any

from ..base import Match
from ..registry import register
from .encode import CanalEncoder
from .fast_path import CanalFastPath
from .message import DML_OPS, FIELDS, LENIENT_SCORE, USUAL_FIELDS

__all__ = ["Canal"]


@register
class Canal(CanalFastPath, CanalEncoder):
    """Canal flat messages (Alibaba Canal, OceanBase OMS "Canal" format)."""

    name = "canal"
    title = "Canal flat JSON"
    spec = "oceanbase-oms-formats.txt"
    seq_row_in_message = True  # es:id tie across the messages of a batch: the capture's order decides
    quirks = (
        "One message carries all rows of a statement: each element of data is one event.",
        "old holds only the changed columns' previous values: the before image is data[i] overlaid with old[i].",
        "Every value arrives as a string; mysqlType (or sqlType when mysqlType lacks the column) types it: "
        "integers and floats become numbers, decimals exact numbers or text, dates and times stay text.",
        "A bigint unsigned value beyond the 64-bit signed range stays text so no digit is lost.",
        "Binary columns arrive as the ISO-8859-1 string of their bytes and become Base64 of those bytes.",
        "es is when the change happened and ts when Canal wrote the message, both epoch milliseconds.",
        "seq is es:id:row (event time, batch id, row index), not a true log position: messages of one batch "
        "in the same millisecond tie (the capture's order then decides; the row index orders only the rows "
        "of one message), and OceanBase's Canal writes no id.",
        "A DDL message (isDdl true) has no rows: its statement is in sql and its type (CREATE, ALTER, ERASE...) "
        "in op_raw.",
        "A primary-key change is an UPDATE whose old holds the key column: before has the old key, after and "
        "key the new one.",
        "A DML message with null or empty data produces no row; the report counts it under skipped.",
        "gtid, when present, is the transaction id; without it txn_id is empty.",
        "A message with only data and type decodes (table, key and times unknown, values as given); detection "
        "proposes canal for it with a low confidence.",
        "TiCDC writes id 0 and (by default) every column in an UPDATE's old; with enable-tidb-extension its "
        "_tidb.commitTs is seq and txn_id, and its TIDB_WATERMARK messages are heartbeats.",
    )
    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        kind = value.get("type")
        if not isinstance(kind, str) or not kind.isupper():
            return None
        data = value.get("data")
        if data is not None and not isinstance(data, list):
            return None
        evidence = ["data is a list"] if isinstance(data, list) else []
        markers = [f for f in ("isDdl", "es", "pkNames", "mysqlType", "sqlType") if f in value]
        evidence += markers
        if isinstance(value.get("_tidb"), dict):
            evidence.append("_tidb")
        evidence.append("type=" + kind)
        if len(markers) >= 2 and ("data" in value or "sql" in value):
            return Match(0.95, tuple(evidence))
        if isinstance(data, list) and "database" in value and "table" in value:
            return Match(0.6, tuple(evidence + ["database", "table"]))
        if (
            kind in DML_OPS
            and data
            and all(row.__class__ is dict for row in data)
            and all(field in FIELDS for field in value)
        ):
            missing = [field for field in USUAL_FIELDS if field not in value]
            return Match(LENIENT_SCORE, tuple(evidence + ["no " + ", ".join(missing)]))
        return None
