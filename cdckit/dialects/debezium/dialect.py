"""The Debezium dialect: what it is called, how it is recognised, and the parts it is made of.

:class:`Debezium` is the one-message decoder (:mod:`.decode`), the batch
decoder (:mod:`.fast_path`) and the encoder (:mod:`.encode`) under one
registry name. Its variants (Arcion, Lindorm, ...) subclass it and recognise
their own messages; detection prefers a variant that is sure of a message
over the dialect it extends (:func:`cdckit.reading.detect.score_message`).

>>> Debezium().detect({"op": "c", "after": {"id": 1}, "source": {"connector": "mysql"}}).score
0.9
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from ..base import Match
from ..registry import register
from .encode import DebeziumEncoder
from .envelope import KNOWN_CONNECTORS, envelope_shape, unwrap
from .fast_path import DebeziumFastPath
from .losses import producer_losses

__all__ = ["Debezium"]


@register
class Debezium(DebeziumFastPath, DebeziumEncoder):
    """Plain Debezium change events (any connector)."""

    name = "debezium"
    title = "Debezium JSON"
    spec = "public Debezium documentation"
    quirks: ClassVar[tuple[str, ...]] = (
        "Key columns come only from the Kafka key: a file of values alone has none.",
        "A delete is followed by a tombstone (a null value) that only carries the key.",
        "DECIMAL columns arrive as Base64 of the unscaled integer; the schema's scale makes them numbers again.",
        "seq is the connector's own log position (binlog file:pos:row, LSN, SCN), zero-padded to sort as text.",
        "ts_ms in source is when the change happened; ts_ms in the envelope is when Debezium processed it.",
        "An unchanged TOASTed value (PostgreSQL, REPLICA IDENTITY DEFAULT) arrives as the placeholder "
        "__debezium_unavailable_value, or the connector's own text (read with unavailable_value=...) (its "
        "bytes in Base64 or hex for bytea, a one-element array for arrays): "
        "cdckit leaves the column out of the image and replay keeps the value the row had, also across a "
        "primary-key update (a delete and a create at one position).",
        "A table is named as its connector names it (its topic's last parts): schema.table for PostgreSQL, Oracle, "
        "Db2 and Informix (source.db is not part of it; database holds the schema, as wal2json fills it), "
        "db.schema.table for SQL Server (database holds db.schema), db.table for MySQL. A record that does not "
        "say its namespace takes it from its Kafka topic (kcat -J, a client's record).",
        "MySQL's BIT(n) (io.debezium.data.Bits, n > 1) is the number its bits spell; a TIME outside 00:00-24:00 "
        "is MySQL's duration text (-838:59:59) and its column a duration in typed tables.",
    )

    #: An image may leave out the columns whose value Debezium could not read (the TOAST placeholder):
    #: replay merges it onto the row (the new key's row of a key update takes the old row's).
    partial_updates = True

    @classmethod
    def producer_losses(cls, types: pd.DataFrame) -> list[dict[str, Any]]:
        """What the connector's settings lost, from the source column types its schema propagates
        (:mod:`cdckit.dialects.debezium.losses`)."""
        return producer_losses(types)

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if value is None:
            return Match(0.3, ("null value (Kafka tombstone)",))
        payload, schema = unwrap(value)
        if payload is None:
            return None
        if (
            payload.get("status") in ("BEGIN", "END")
            and "id" in payload
            and ("event_count" in payload or "data_collections" in payload)
        ):
            return Match(0.9, ("status", "id", "data_collections"))
        if "ddl" in payload and ("tableChanges" in payload or "databaseName" in payload):
            return Match(0.9, ("ddl", "tableChanges" if "tableChanges" in payload else "databaseName"))
        if isinstance(payload.get("historyRecord"), str) and "op" not in payload:
            return Match(0.9, ("historyRecord (Flink CDC schema change)",))
        shape = envelope_shape(payload)
        if shape is None:
            return None
        source = payload.get("source")
        if isinstance(source, dict):
            connector = source.get("connector")
            if isinstance(connector, str) and connector in KNOWN_CONNECTORS:
                return Match(0.9, shape + ("source.connector=" + connector,))
            markers = [f"source.{f}" for f in ("file", "lsn", "change_lsn", "scn", "txId", "ord") if f in source]
            if markers:
                return Match(0.85, shape + tuple(markers))
        return Match(0.6, shape)
