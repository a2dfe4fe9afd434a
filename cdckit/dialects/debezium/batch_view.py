"""The batch decoder's view of a Debezium message: the msgspec shapes it reads a message, its wrapper and
its Kafka key as, and the plan it works out once per distinct schema block (:class:`SchemaPlan`).

Used by :mod:`.fast_path`; a message of any other shape is handed back (:data:`HAND_BACK`) to the
one-message decoder.

>>> ENVELOPE.decode(b'{"op":"c","after":{"id":1},"source":{"table":"t"}}').op
'c'
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from .envelope import FLOAT_TYPES, INT_TYPES, RETYPED_NAMES, declared_columns

NULL = msgspec.Raw(b"null")
HAND_BACK = object()


class Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """The top level of a Debezium message as the batch decoder reads it.

    The images, the wrapped payload and the schema stay raw JSON; an unknown
    top-level field (a transaction marker's ``status``, a schema change's
    ``ddl``...) fails validation and the message goes to :meth:`DebeziumDecoder.decode`.
    """

    op: str | None = None
    before: msgspec.Raw = NULL
    after: msgspec.Raw = NULL
    source: _Source | None = None
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    transaction: dict[str, Any] | None = None
    payload: msgspec.Raw = NULL
    schema: msgspec.Raw = NULL


class _Source(msgspec.Struct):
    """The ``source`` fields the family's helpers read (others are skipped unparsed)."""

    connector: Any = None
    db: Any = None
    schema: Any = None
    namespace: Any = None
    table: Any = None
    collection: Any = None
    ts_ms: Any = None
    ts_us: Any = None
    ts_ns: Any = None
    file: Any = None
    pos: Any = None
    row: Any = None
    lsn: Any = None
    sequence: Any = None
    change_lsn: Any = None
    commit_lsn: Any = None
    event_serial_no: Any = None
    scn: Any = None
    commit_scn: Any = None
    ord: Any = None
    txId: Any = None
    gtid: Any = None
    xid: Any = None
    query: Any = None


EMPTY_SOURCE = _Source()

ENVELOPE = msgspec.json.Decoder(Envelope)


class _PlainSource(msgspec.Struct, gc=False):
    """``source`` of the usual message: a binlog position or none, no transaction or other clocks.

    This and the other structs of a block (thousands alive at once) hold no cycles: they are kept out of the
    garbage collector (``gc=False``), whose passes over them cost a fifth of a block's time.

    Any of the typed-``None`` fields holding a value makes the message take the general path.
    """

    connector: str | None = None
    db: str | None = None
    schema: str | None = None
    table: str | None = None
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    file: str | None = None
    pos: Annotated[int, msgspec.Meta(ge=0)] | None = None
    row: Annotated[int, msgspec.Meta(ge=0)] | None = None
    collection: None = None
    lsn: None = None
    change_lsn: None = None
    commit_lsn: None = None
    event_serial_no: None = None
    scn: None = None
    ord: None = None
    txId: None = None
    gtid: None = None
    xid: None = None


class Plain(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The usual Debezium message, unwrapped: only these fields, and these types."""

    op: Literal["c", "u", "d", "r"]
    source: _PlainSource
    before: msgspec.Raw = NULL
    after: msgspec.Raw = NULL
    ts_ms: int | None = None
    ts_us: int | None = None
    ts_ns: int | None = None
    transaction: None = None


PLAIN = msgspec.json.Decoder(Plain)


class Wrapped(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The usual message in Kafka Connect's schema/payload wrapper: the schema stays raw (read once per
    distinct text by :meth:`DebeziumFastPath._plan`), the payload is :class:`Plain`."""

    payload: Plain
    schema: msgspec.Raw = NULL


WRAPPED = msgspec.json.Decoder(Wrapped)


class _PayloadOnly(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """What follows a known schema block in a wrapped message (see :class:`KnownSchema`)."""

    payload: Plain


PAYLOAD = msgspec.json.Decoder(_PayloadOnly)
PLAINS = msgspec.json.Decoder(list[Plain])
PAYLOADS = msgspec.json.Decoder(list[_PayloadOnly])


class KnownSchema:
    """The schema block the last wrapped message began with, as bytes.

    A topic's messages repeat one schema byte for byte; a message that
    begins with the same ``{"schema":...,`` bytes is read from its payload
    on (:meth:`rest`), so the schema is neither scanned nor parsed again.
    """

    def __init__(self) -> None:
        self.head: bytes | None = None
        self.plan: Any = None

    def rest(self, data: bytes) -> bytes | None:
        """``data`` without the known schema block, as a JSON object text; None when it begins otherwise."""
        head = self.head
        if head is None or not data.startswith(head):
            return None
        return b"{" + data[len(head) :]

    def remember(self, data: bytes, schema: msgspec.Raw, plan: Any) -> None:
        head = b'{"schema":' + bytes(schema) + b","
        if data.startswith(head):
            self.head, self.plan = head, plan


#: The value a JSON column that the schema types as a number or boolean may hold and need no retyping.
_UNTYPED_NUMBER = int | float | bool | None


class SchemaPlan:
    """What an envelope schema asks of each image, worked out once per distinct schema.

    ``types`` is :func:`field_types` of the schema, ``declared`` the column
    types it declares (:func:`declared_columns`). An image can be taken as
    it stands (:meth:`untyped`) when no column is a decimal, ``Bits`` or a time of day (always retyped)
    and no column typed as a number or boolean holds text (the only values
    :func:`typed_value` changes): a msgspec check of just those columns.
    """

    def __init__(self, types: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.types = types
        self.declared = declared_columns(types)
        self._checks: dict[str, Any] = {}
        for which in ("before", "after"):
            columns = types.get(which) or {}
            if any(f.get("name") in RETYPED_NAMES for f in columns.values()):
                self._checks[which] = False
                continue
            numbers = [name for name, f in columns.items() if f.get("type") in _RETYPED_KINDS]
            if numbers:
                check = msgspec.defstruct(
                    "_Numbers",
                    [(f"c{i}", _UNTYPED_NUMBER, None) for i in range(len(numbers))],
                    rename={f"c{i}": name for i, name in enumerate(numbers)},
                )
                self._checks[which] = msgspec.json.Decoder(check)

    def untyped(self, raw: msgspec.Raw, which: str) -> bool:
        """True when typing would leave the raw image ``which`` as it is."""
        check = self._checks.get(which)
        if check is None or raw is NULL:
            return True
        if check is False:
            return raw == NULL
        try:
            check.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return raw == NULL
        return True


NO_SCHEMA = SchemaPlan({})
_RETYPED_KINDS = INT_TYPES | FLOAT_TYPES | {"boolean"}


class _WrappedKey(msgspec.Struct, forbid_unknown_fields=True):
    """A Kafka key in the schema/payload wrapper; only the payload's column names are wanted."""

    payload: dict[str, Any]
    schema: msgspec.Raw = NULL


WRAPPED_KEY = msgspec.json.Decoder(_WrappedKey)
PLAIN_KEY = msgspec.json.Decoder(dict[str, Any])


class _KeyPayload(msgspec.Struct, forbid_unknown_fields=True):
    payload: dict[str, Any]


KEY_PAYLOAD = msgspec.json.Decoder(_KeyPayload)
