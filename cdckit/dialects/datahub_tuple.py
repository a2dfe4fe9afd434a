"""DataHub Tuple: table rows that DataWorks Data Integration writes to a Tuple topic.

A Tuple topic has the fixed schema of one source table plus metadata columns:

- ``_sequence_id_``: a unique 19-digit id per row (String; in files it may be
  a number); the two rows of an update share it.
- ``_operation_type_``: ``I`` insert, ``U`` update, ``D`` delete.
- ``_excute_time_`` (spelled so): when the change happened, epoch milliseconds.
- ``_source_table_``: the source table, ``"db.table"`` or ``"table"``
  (``"db.schema.table"`` is split in three).
- ``_before_image_`` / ``_after_image_``: ``Y`` when the row is the state
  before / after the change, else ``N``.

An insert is one row (the after image), a delete one row (the before image),
an update two ``U`` rows with the same ``_sequence_id_``: the before row
(``_before_image_=Y``) and the after row (``_after_image_=Y``). Each ``U`` row
is decoded as one half (``Event.half``) and the reader pairs the halves into
ONE update row wherever they are, whichever comes first; a half with no
partner is quarantined. The metadata columns never appear in an image.

Rows come as JSON Lines (typed JSON), CSV (all text: an empty field is null,
numbers stay text because a CSV carries no types) or Parquet (typed: its
decimals become numbers, or exact text when a double would lose digits, its
binary values Base64 text and its timestamps ISO text); the container turns
each into a dict. Tuple rows name no primary key, so
``key_columns`` and ``key`` are None; there are no emit times and no
transaction ids. DataHub carries DML only: no DDL, heartbeats or
transaction markers.

>>> import cdckit
>>> rows = [
...     {"id": 1, "name": "joe", "_sequence_id_": "1649991610688000001", "_operation_type_": "U",
...      "_excute_time_": 1649991756000, "_source_table_": "yunshi_db.t_shiyu_pk",
...      "_before_image_": "Y", "_after_image_": "N"},
...     {"id": 1, "name": "ann", "_sequence_id_": "1649991610688000001", "_operation_type_": "U",
...      "_excute_time_": 1649991756000, "_source_table_": "yunshi_db.t_shiyu_pk",
...      "_before_image_": "N", "_after_image_": "Y"}]
>>> ev = cdckit.read(rows, dialect="datahub_tuple")
>>> ev.loc[0, ["op", "database", "table", "seq", "before", "after"]].tolist()
['update', 'yunshi_db', 't_shiyu_pk', '01649991610688000001', '{"id":1,"name":"joe"}', '{"id":1,"name":"ann"}']
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import msgspec
import orjson
import pandas as pd

from .. import values
from ..frame import Event, FastRow
from ..io import Message
from .base import BadMessage, Dialect, Match, Record, require, rows_of
from .registry import register

SEQUENCE = "_sequence_id_"
OPERATION = "_operation_type_"
TIME = "_excute_time_"
SOURCE_TABLE = "_source_table_"
BEFORE_IMAGE = "_before_image_"
AFTER_IMAGE = "_after_image_"
#: The metadata columns, in the order the encoder writes them after the table's columns.
META_COLUMNS = (SEQUENCE, OPERATION, TIME, SOURCE_TABLE, BEFORE_IMAGE, AFTER_IMAGE)
_META = frozenset(META_COLUMNS)
#: _operation_type_ -> canonical op.
OPS = {"I": "insert", "U": "update", "D": "delete"}
#: sequence ids synthesized when events carry none and no times (the spec's first one).
_FIRST_SEQUENCE = 1649991610688000000


@register
class DataHubTuple(Dialect):
    """DataHub Tuple records: table columns plus the ``_..._`` metadata columns."""

    name = "datahub_tuple"
    title = "DataHub Tuple records"
    spec = "datahub-tuple-and-blob.txt"
    splits_updates = True
    layout = "rows"
    contiguous_seq = True
    quirks = (
        "An update is two U rows with the same _sequence_id_ (_before_image_=Y, then _after_image_=Y); "
        "they become one update row wherever they are, and a row with no partner is quarantined.",
        "The change time column is spelled _excute_time_ (epoch milliseconds); there is no emit time.",
        "Rows name no primary key, so key_columns and key are None.",
        "_source_table_ is 'db.table' or just 'table': database is None in the second case.",
        "CSV rows carry no types, so every value read from a CSV stays text; JSON Lines and Parquet keep theirs.",
        "A Tuple topic has one fixed schema: in a file that mixes tables every row has every column, "
        "and the columns of the other tables read as null.",
        "Only inserts, updates and deletes exist: no DDL, heartbeats or transaction markers.",
    )

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        if not isinstance(value, dict):
            return None
        has_op = OPERATION in value
        has_seq = SEQUENCE in value
        if not (has_op or has_seq):
            return None
        evidence = [SEQUENCE] if has_seq else []
        op = value.get(OPERATION)
        if has_op:
            evidence.append(f"{OPERATION}={op}" if isinstance(op, str) and op in OPS else OPERATION)
        flags = [c for c in (BEFORE_IMAGE, AFTER_IMAGE, TIME) if c in value]
        evidence.extend(flags)
        if has_op and has_seq:
            return Match(0.95 if flags else 0.85, tuple(evidence))
        return Match(0.5 if flags else 0.2, tuple(evidence))

    # ------------------------------------------------------------ decoding

    def decode(self, message: Message) -> list[Event]:
        row = message.value
        if not isinstance(row, dict):
            kind = "text" if isinstance(row, str) else "null" if row is None else type(row).__name__
            raise BadMessage(f"expected a DataHub Tuple row (an object of columns), got {kind}")
        op_raw = require(row, OPERATION)
        op = OPS.get(op_raw) if isinstance(op_raw, str) else None
        if op is None:
            raise BadMessage(f"unknown {OPERATION} {op_raw!r}")
        sequence = require(row, SEQUENCE)
        if sequence is None:
            raise BadMessage(f"{SEQUENCE} is null")
        database, schema, table = split_table(row.get(SOURCE_TABLE))
        image = _image({name: v for name, v in row.items() if name not in _META})
        event = Event(
            op=op,
            op_raw=op_raw,
            database=database,
            schema=schema,
            table=table,
            event_time=_ms(require(row, TIME)),
            seq=values.sortable(sequence),
        )
        if op == "insert":
            event.after = image
        elif op == "delete":
            event.before = image
        else:
            event.half = update_half(row.get(BEFORE_IMAGE), row.get(AFTER_IMAGE))
            if event.half == "before":
                event.before = image
            else:
                event.after = image
        return [event]

    # ------------------------------------------------------------ batch decoding (the fast path)

    has_line_decoder = True

    def decode_lines(self, lines: list[bytes]) -> list[tuple | Event | None]:
        """The events of many raw JSON rows at once, the image kept as the row's own text.

        Takes raw JSON Lines rows; gives for each one its event as a tuple of
        :data:`cdckit.frame.EVENT_FIELDS`, an :class:`Event` with ``half`` set
        for one ``U`` row, or None to hand it back to :meth:`decode`. A row is
        taken when its metadata columns come after all its table columns (as
        DataWorks writes them): the text before them is the image (checked to be a
        JSON object holding no metadata column, written by
        :func:`cdckit.values.parsed_image`), and the text from them on is read by msgspec (:class:`_Meta`). Anything
        else (another column order, bad JSON, unexpected types, anything
        :meth:`decode` refuses) is handed back.
        """
        out: list[tuple | Event | None] = []
        append = out.append
        for line in lines:
            try:
                append(self._fast_row(line))
            except (msgspec.DecodeError, BadMessage, ValueError):
                append(None)
        return out

    def _fast_row(self, line: bytes) -> tuple | Event | None:
        """The event of one raw row whose metadata columns come last (None otherwise)."""
        start = min(line.rfind(b'"_sequence_id_"'), line.rfind(b'"_operation_type_"'), line.rfind(b'"_excute_time_"'))
        head = line[:start].rstrip()
        if start < 0 or head[-1:] != b",":
            return None
        row, image = values.parsed_image(head[:-1] + b"}")
        if row.__class__ is not dict or not _META.isdisjoint(row):
            return None
        meta = _META_COLUMNS.decode(b"{" + line[start:])
        op_raw = meta.operation
        op = OPS.get(op_raw)
        if op is None:
            return None
        database, schema, table = split_table(meta.source_table)
        event_time = _ms(meta.time)
        seq = values.sortable(meta.sequence)
        if op == "update":
            half = update_half(meta.before_image, meta.after_image)
            return Event(
                op=op,
                op_raw=op_raw,
                database=database,
                schema=schema,
                table=table,
                event_time=event_time,
                seq=seq,
                before=image if half == "before" else None,
                after=image if half == "after" else None,
                half=half,
            )
        return FastRow(
            op,
            op_raw,
            database,
            schema,
            table,
            event_time,
            None,
            seq,
            None,
            None,
            None,
            image if op == "delete" else None,
            image if op == "insert" else None,
            None,
        )

    def decode_rows(self, names: list[str], columns: list[list]) -> list[tuple | Event | None]:
        """The events of many table rows (CSV or Parquet) at once, given as columns of Python values.

        Gives for each row what :meth:`decode_lines` gives for a line, equal to
        what :meth:`decode` makes of the row's message: the metadata columns
        are found once for all rows, the image is the other columns' values in
        their order (one JSON text per row), and a row :meth:`decode` would
        refuse, or anything unforeseen, is None (handed back to :meth:`decode`).

        >>> names = ["id", "_sequence_id_", "_operation_type_", "_excute_time_", "_source_table_"]
        >>> rows = DataHubTuple().decode_rows(names, [[1, 2], ["7", "8"], ["I", "X"], [5, 6], ["d.t", "d.t"]])
        >>> rows[0].after, rows[0].seq, rows[1]
        ('{"id":1}', '00000000000000000007', None)
        """
        count = len(columns[0]) if columns else 0
        where = {name: index for index, name in enumerate(names)}
        if len(where) != len(names) or not {OPERATION, SEQUENCE, TIME} <= where.keys():
            return [None] * count  # a missing column is refused by decode, which says so
        empty = [None] * count

        def column(name: str) -> list:
            return columns[where[name]] if name in where else empty

        image_names = [name for name in names if name not in _META]
        texts = _images(image_names, [columns[where[name]] for name in image_names], count)
        times = _times(column(TIME))
        tables: dict[Any, tuple] = {}
        sortable = values.sortable
        out: list[tuple | Event | None] = []
        append = out.append
        for op_raw, sequence, time, event_time, source, before_image, after_image, text in zip(
            column(OPERATION),
            column(SEQUENCE),
            column(TIME),
            times,
            column(SOURCE_TABLE),
            column(BEFORE_IMAGE),
            column(AFTER_IMAGE),
            texts,
        ):
            try:
                op = OPS.get(op_raw) if op_raw.__class__ is str else None
                if op is None or sequence is None:
                    append(None)
                    continue
                place = tables.get(source) if source.__class__ is str else None
                if place is None:
                    place = tables[source] = split_table(source)
                database, schema, table = place
                if text is None:
                    append(None)
                    continue
                if event_time is None and time is not None:
                    event_time = _ms(time)
                seq = sortable(sequence)
                if op == "update":
                    half = update_half(before_image, after_image)
                    append(
                        Event(
                            op,
                            op_raw,
                            database,
                            schema,
                            table,
                            event_time,
                            None,
                            seq,
                            None,
                            None,
                            None,
                            text if half == "before" else None,
                            text if half == "after" else None,
                            None,
                            half,
                        )
                    )
                else:
                    append(
                        FastRow(
                            op,
                            op_raw,
                            database,
                            schema,
                            table,
                            event_time,
                            None,
                            seq,
                            None,
                            None,
                            None,
                            text if op == "delete" else None,
                            text if op == "insert" else None,
                            None,
                        )
                    )
            except Exception:  # decode says what is wrong with the row
                append(None)
        return out

    # ------------------------------------------------------------ encoding

    def encode(self, events: pd.DataFrame) -> Iterator[Record]:
        """Tuple rows: an insert or delete is one row, an update two (before row, then after row).

        Every row has the same columns, as a Tuple topic's schema is fixed:
        the columns of all images in first-seen order (absent ones null),
        then the metadata columns. A ``seq`` of digits becomes the
        ``_sequence_id_`` (as text); events without one get increasing ids in
        event order in the spec's style (first event time in ms followed by
        six counter digits). Snapshot rows are written as ``I``. Not written:
        updates without a before image, and every event that is not a row
        change (DDL, heartbeats, transaction markers, tombstones).
        """
        rows = list(rows_of(events))
        images = [(row, _loads(row["before"]), _loads(row["after"])) for row in rows]
        columns: dict[str, None] = {}
        for _, before, after in images:
            for image in (before, after):
                if image:
                    columns.update(dict.fromkeys(c for c in image if c not in _META))
        base = _sequence_base(rows)
        for number, (row, before, after) in enumerate(images):
            op = row["op"]
            seq = row["seq"]
            sequence = (str(int(seq)) if seq.isdigit() else seq) if seq else str(base + number)
            meta = {
                SEQUENCE: sequence,
                TIME: values.ns_to_ms(row["event_time"]),
                SOURCE_TABLE: ".".join(p for p in (row["database"], row["schema"], row["table"]) if p) or None,
            }
            if op in ("insert", "read") and after is not None:
                yield Record(_row(columns, after, meta, "I", "N", "Y"))
            elif op == "delete" and before is not None:
                yield Record(_row(columns, before, meta, "D", "Y", "N"))
            elif op == "update" and before is not None and after is not None:
                yield Record(_row(columns, before, meta, "U", "Y", "N"))
                yield Record(_row(columns, after, meta, "U", "N", "Y"))


# ---------------------------------------------------------------- helpers


def split_table(name: Any) -> tuple[str | None, str | None, str | None]:
    """``(database, schema, table)`` from ``_source_table_``.

    >>> split_table("yunshi_db.t_shiyu_pk"), split_table("t_shiyu_pk"), split_table("db.public.t")
    (('yunshi_db', None, 't_shiyu_pk'), (None, None, 't_shiyu_pk'), ('db', 'public', 't'))
    """
    if name is None:
        return None, None, None
    if not isinstance(name, str):
        raise BadMessage(f"{SOURCE_TABLE} is not text: {name!r}")
    parts = name.split(".", 2)
    if len(parts) == 1:
        return None, None, name
    if len(parts) == 2:
        return parts[0], None, parts[1]
    return parts[0], parts[1], parts[2]


def update_half(before_image: Any, after_image: Any) -> str:
    """The half a ``U`` row is from its ``_before_image_`` / ``_after_image_`` flags (exactly one is ``Y``).

    >>> update_half("Y", "N"), update_half("N", "Y")
    ('before', 'after')
    """
    before, after = before_image == "Y", after_image == "Y"
    if before == after:
        raise BadMessage(
            f"a U row needs exactly one of {BEFORE_IMAGE}, {AFTER_IMAGE} = 'Y', got {before_image!r}, {after_image!r}"
        )
    return "before" if before else "after"


def _image(data: dict[str, Any]) -> str:
    """The image as JSON text; Parquet's decimals become numbers (or exact text) and binary Base64 text."""
    try:
        return values.image(data)
    except TypeError:  # only Parquet rows hold values JSON has no type for
        return values.image({name: _json_value(v) for name, v in data.items()})


def _images(names: list[str], columns: list[list], count: int) -> list[str | None]:
    """The image text of each row of these columns as :func:`_image` writes it (None where it raises)."""
    dumps = orjson.dumps
    try:
        return [dumps(dict(zip(names, row))).decode() for row in zip(*columns)] if names else ["{}"] * count
    except Exception:  # a value orjson cannot write as it is: row by row, as decode does
        texts: list[str | None] = []
        for row in zip(*columns):
            try:
                texts.append(_image(dict(zip(names, row))))
            except Exception:
                texts.append(None)
        return texts


def _times(column: list) -> list[int | None]:
    """``_excute_time_`` values in nanoseconds where they are whole milliseconds a timestamp can hold (as
    :func:`_ms` gives them), else None (:func:`_ms` says what they are)."""
    low, high = -(-values.INT64_MIN // 1_000_000), values.INT64_MAX // 1_000_000
    return [value * 1_000_000 if value.__class__ is int and low <= value <= high else None for value in column]


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return values.exact_number(format(value, "f"))
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _ms(value: Any) -> int | None:
    try:
        return values.ms_to_ns(value)
    except (TypeError, ValueError):
        raise BadMessage(f"{TIME} is not epoch milliseconds: {value!r}") from None


def _row(
    columns: dict[str, None], image: dict[str, Any], meta: dict[str, Any], op: str, before: str, after: str
) -> dict[str, Any]:
    row = {c: image.get(c) for c in columns}
    row[SEQUENCE] = meta[SEQUENCE]
    row[OPERATION] = op
    row[TIME] = meta[TIME]
    row[SOURCE_TABLE] = meta[SOURCE_TABLE]
    row[BEFORE_IMAGE] = before
    row[AFTER_IMAGE] = after
    return row


def _loads(text: str | None) -> dict[str, Any] | None:
    return None if text is None else values.loads(text)


def _sequence_base(rows: list[dict[str, Any]]) -> int:
    for row in rows:
        ms = None if row["event_time"] is None else values.ns_to_ms(row["event_time"])
        if ms is not None:
            return ms * 1_000_000
    return _FIRST_SEQUENCE


# ---------------------------------------------------------------- the batch decoder's view of a row

_RENAME = {
    "sequence": SEQUENCE,
    "operation": OPERATION,
    "time": TIME,
    "source_table": SOURCE_TABLE,
    "before_image": BEFORE_IMAGE,
    "after_image": AFTER_IMAGE,
}


class _Meta(msgspec.Struct, forbid_unknown_fields=True, rename=_RENAME):
    """The metadata columns at the end of a row, and nothing else (numbers a double cannot carry
    exactly, as floats, go to decode)."""

    sequence: str | int
    operation: str
    time: int | str | None
    source_table: str | None = None
    before_image: Any = None
    after_image: Any = None


_META_COLUMNS = msgspec.json.Decoder(_Meta)
