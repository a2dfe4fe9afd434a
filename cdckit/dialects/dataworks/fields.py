"""The fields of a DataWorks message read: its op, its images typed by the column types its schema declares,
its primary key, its times and its DDL text.

>>> typed_data({"id": "7", "price": "9.90"}, column_kinds([{"name": "id", "type": "bigint"},
...                                                         {"name": "price", "type": "decimal(10,2)"}]))
{'id': 7, 'price': 9.9}
"""

from __future__ import annotations

import re
from typing import Any

from ... import values
from ..base import BadMessage, expect_object, require_object

OPS = {
    "INSERT": "insert",
    "UPDATE": "update",
    "DELETE": "delete",
    "HEARTBEAT": "heartbeat",
    "TRANSACTION_BEGIN": "begin",
    "TRANSACTION_END": "commit",
    "CREATE": "ddl",
    "ALTER": "ddl",
    "ERASE": "ddl",
    "QUERY": "ddl",
    "TRUNCATE": "ddl",
    "RENAME": "ddl",
    "CINDEX": "ddl",
    "DINDEX": "ddl",
    "GTID": "other",
    "XACOMMIT": "other",
    "XAROLLBACK": "other",
}

#: Column type names (lower case, without length or ``unsigned``) -> value kind.
TYPE_KINDS = {
    **dict.fromkeys(
        (
            "tinyint",
            "smallint",
            "mediumint",
            "int",
            "integer",
            "bigint",
            "int2",
            "int4",
            "int8",
            "serial",
            "bigserial",
            "smallserial",
        ),
        "int",
    ),
    **dict.fromkeys(
        ("float", "double", "double precision", "real", "float4", "float8", "binary_float", "binary_double"), "float"
    ),
    **dict.fromkeys(("decimal", "numeric", "number", "dec", "fixed"), "decimal"),
    **dict.fromkeys(("bool", "boolean"), "bool"),
}
#: Other column type names (as :func:`type_kind` reads them) -> the kind declared (:mod:`cdckit.column_types`);
#: a name not known here declares ``string`` (its values are kept as they arrive).
DECLARED_KINDS = {
    **dict.fromkeys(("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bytea", "raw"), "binary"),
    "date": "date",
    "time": "time",
    "datetime": "timestamp",
    "timestamp": "timestamp",
    "timestamptz": "timestamp",
    "year": "int",
    "bit": "int",
    "enum": "enum",
    "json": "json",
    "jsonb": "json",
}
_TYPE_MODIFIERS = (" unsigned", " signed", " zerofill")
_PARAMETERS = re.compile(r"\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)")


def canonical_op(op_raw: Any) -> str:
    """The canonical op of ``payload.op``: a known op's, else ``other`` for any upper-case text."""
    op = OPS.get(op_raw) if type(op_raw) is str else None
    if op is None:
        if not (isinstance(op_raw, str) and op_raw.isupper()):
            raise BadMessage(f"unknown op {op_raw!r}")
        op = "other"
    return op


def require_images(op: str, op_raw: str, before: Any, after: Any) -> None:
    """BadMessage when the op's image is missing: after for insert and update, before for delete."""
    if after is None and op in ("insert", "update"):
        raise BadMessage(f"missing required field payload.after (op {op_raw})")
    if before is None and op == "delete":
        raise BadMessage(f"missing required field payload.before (op {op_raw})")


def keyed_image(op: str, before: Any, after: Any) -> Any:
    """The image the key is read from: before for a delete or when there is no after, else after."""
    return before if op == "delete" or after is None else after


def type_kind(type_name: str) -> str | None:
    """The value kind of a column type name: ``int``, ``float``, ``decimal``, ``bool`` or None.

    >>> type_kind("bigint"), type_kind("decimal(10,2)"), type_kind("INT(11) UNSIGNED"), type_kind("binary")
    ('int', 'decimal', 'int', None)
    """
    base = type_name.lower().partition("(")[0].strip()
    for modifier in _TYPE_MODIFIERS:
        base = base.removesuffix(modifier)
    return TYPE_KINDS.get(base)


def declared_kind(type_name: str) -> str:
    """The kind (:mod:`cdckit.column_types`) a column type name declares.

    >>> declared_kind("decimal(10,2)"), declared_kind("bigint"), declared_kind("datetime"), declared_kind("varchar(20)")
    ('decimal(10,2)', 'int', 'timestamp', 'string')
    """
    kind = type_kind(type_name)
    if kind is None:
        base = type_name.lower().partition("(")[0].strip()
        return DECLARED_KINDS.get(base.split(" ", 1)[0], "string")
    if kind == "decimal":
        found = _PARAMETERS.search(type_name)
        if found is not None:
            kind = f"decimal({found.group(1)},{found.group(2) or 0})"
    return kind


def declared_columns(columns: Any) -> dict[str, tuple[str, str]]:
    """The column types a ``schema.column`` declares, ``{column: (type, kind)}`` (entries that are not
    ``{"name", "type"}`` objects with text in both ignored)."""
    declared = {}
    if columns.__class__ is list:
        for column in columns:
            if column.__class__ is dict and column.get("name").__class__ is str and column.get("type").__class__ is str:
                declared[column["name"]] = (column["type"], declared_kind(column["type"]))
    return declared


#: Kinds of the column type names met so far (type names in a stream are few).
_KIND_OF_TYPE: dict[str, str | None] = {}


def column_kinds(columns: Any) -> dict[str, str]:
    """``{column: kind}`` of the ``schema.column`` entries whose values are typed.

    Entries that are not ``{"name", "type"}`` objects with a text type are ignored.
    """
    if not columns:
        return {}
    if type(columns) is not list:
        raise BadMessage("expected schema.column as a JSON array")
    kinds = {}
    known = _KIND_OF_TYPE
    for column in columns:
        try:
            kind = known[column["type"]]
        except KeyError:  # a type not met yet, or an entry without one
            kind = _learn_type(column)
        except TypeError:  # an entry that is not an object, or a type that is not text
            continue
        if kind is not None:
            kinds[column.get("name")] = kind
    return kinds


def _learn_type(column: dict[str, Any]) -> str | None:
    type_name = column.get("type")
    if not isinstance(type_name, str):
        return None
    kind = type_kind(type_name)
    if len(_KIND_OF_TYPE) < 4096:
        _KIND_OF_TYPE[type_name] = kind
    return kind


def typed_image(side: Any, kinds: dict[str, str], where: str) -> dict[str, Any] | None:
    """The row of ``payload.before``/``payload.after`` (its ``data``), text values typed by ``kinds``."""
    if side is None:
        return None
    if type(side) is not dict:
        expect_object(side, where)
    data = require_object(side, "data", where + ".")
    return typed_data(data, kinds)


def typed_data(data: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """``data`` with the text values of typed columns typed: a copy when there are any, else ``data`` itself."""
    row = data
    for name, kind in kinds.items():
        value = data.get(name)
        if type(value) is str:
            if row is data:
                row = dict(data)
            row[name] = values.coerce(value, kind)
    return row


def text_value_pattern(kinds: dict[str, str]) -> re.Pattern[bytes] | None:
    """What finds a text value (``"name": "``) of a typed column in an image's JSON text, or None.

    Only in text without backslashes: an escaped name or quote could hide one.
    """
    names = [re.escape(name.encode()) for name in kinds if type(name) is str]
    if not names:
        return None
    return re.compile(rb'"(?:' + b"|".join(names) + rb')"\s*:\s*"')


def primary_key(pk: Any) -> list[str] | None:
    if not pk:
        return None
    if not isinstance(pk, list):
        raise BadMessage("expected schema.pk as a JSON array of column names")
    return [str(name) for name in pk]


def event_time(timestamp: Any) -> int | None:
    if type(timestamp) is not dict:
        return None
    return epoch_ms_to_ns(timestamp.get("eventTime"))


def epoch_ms_to_ns(ms: Any) -> int | None:
    """``payload.timestamp.eventTime`` (epoch milliseconds) in nanoseconds."""
    try:
        return values.ms_to_ns(ms)
    except (TypeError, ValueError):
        raise BadMessage(f"payload.timestamp.eventTime is not epoch milliseconds: {ms!r}") from None


def ddl_text(ddl: Any) -> str | None:
    if isinstance(ddl, dict):
        return ddl.get("text")
    return ddl if isinstance(ddl, str) else None
