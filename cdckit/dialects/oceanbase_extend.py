"""OceanBase OMS "DefaultExtendColumnType" JSON: Default plus a ``__light_type`` type map.

The records are OMS Default records (see :mod:`cdckit.dialects.oceanbase_default`)
whose images carry one extra entry, ``__light_type``, giving each column's
type::

    "postStruct": {"id": "42", "balance": "10.50",
                   "__light_type": {"id": {"schemaType": "BIGINT"}, "balance": {"schemaType": "DECIMAL"}}}

- The map types the image values: integer types (``TINYINT`` ... ``BIGINT``,
  ``YEAR``) become integers, ``FLOAT``/``DOUBLE`` floats, ``DECIMAL``/
  ``NUMERIC``/``NUMBER`` exact numbers (text when a double would lose
  digits), ``BOOL`` booleans. Binary types (``BLOB``, ``BINARY``, ``BIT``...)
  stay Base64 text; dates, times and strings stay text. A length or
  ``UNSIGNED`` in the type (``DECIMAL(10,2) UNSIGNED``) is ignored.
- ``__light_type`` is never left in an image. It may sit in ``prevStruct``,
  ``postStruct`` or both; the types found are applied to both images (a
  DELETE carries them in ``prevStruct``, some writers only in
  ``postStruct``).
- Streams also carry HEARTBEAT and DDL records without ``__light_type``;
  detection leans to Default on such a record by a small margin only, so one
  typed record among the messages sampled decides for Extend.

>>> import cdckit
>>> msg = ('{"prevStruct": null, "postStruct": {"id": "7", "rate": "0.5", "name": "Ada", "__light_type": '
...        '{"id": {"schemaType": "BIGINT"}, "rate": {"schemaType": "DOUBLE"}, "name": {"schemaType": "VARCHAR"}}}, '
...        '"recordType": "INSERT", "allMetaData": {"record_primary_key": "id", "record_primary_value": "7", '
...        '"dbType": "OCEANBASE", "table_name": "customer", "db": "t1.shop", "timestamp": "1714554000"}}')
>>> cdckit.detect(msg).dialect
'oceanbase_extend'
>>> ev = cdckit.read(msg)
>>> ev.loc[0, ["op", "key", "after"]].tolist()
['insert', '[7]', '{"id":7,"rate":0.5,"name":"Ada"}']
"""

from __future__ import annotations

import re
from typing import Any

from .. import values
from ..frame import Event
from .base import BadMessage, Match
from .oceanbase_default import OceanBaseDefault, light_type_where, record_shape, value_text
from .registry import register

LIGHT_TYPE = "__light_type"

#: schemaType (upper case, without length or UNSIGNED) -> the kind ``values.coerce`` takes.
KINDS = {
    "TINYINT": "int",
    "SMALLINT": "int",
    "MEDIUMINT": "int",
    "INT": "int",
    "INTEGER": "int",
    "BIGINT": "int",
    "YEAR": "int",
    "FLOAT": "float",
    "DOUBLE": "float",
    "DOUBLE PRECISION": "float",
    "REAL": "float",
    "BINARY_FLOAT": "float",
    "BINARY_DOUBLE": "float",
    "DECIMAL": "decimal",
    "NUMERIC": "decimal",
    "NUMBER": "decimal",
    "DEC": "decimal",
    "FIXED": "decimal",
    "BOOL": "bool",
    "BOOLEAN": "bool",
}

#: Other schemaTypes (the first word, upper case) -> the kind declared; :data:`KINDS` names the numbers.
DECLARED_KINDS = {
    "CHAR": "string",
    "VARCHAR": "string",
    "VARCHAR2": "string",
    "NCHAR": "string",
    "NVARCHAR2": "string",
    "TINYTEXT": "string",
    "TEXT": "string",
    "MEDIUMTEXT": "string",
    "LONGTEXT": "string",
    "CLOB": "string",
    "SET": "string",
    "ENUM": "enum",
    "JSON": "json",
    "BINARY": "binary",
    "VARBINARY": "binary",
    "TINYBLOB": "binary",
    "BLOB": "binary",
    "MEDIUMBLOB": "binary",
    "LONGBLOB": "binary",
    "RAW": "binary",
    "BIT": "int",
    "DATE": "date",
    "TIME": "time",
    "DATETIME": "timestamp",
    "TIMESTAMP": "timestamp",
}
_PARAMETERS = re.compile(r"\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)")
_DECIMAL_TEXT = re.compile(r"-?\d+(\.\d+)?\Z")

#: What the encoder writes for each inferred kind.
SCHEMA_TYPES = {"int": "BIGINT", "float": "DOUBLE", "decimal": "DECIMAL", "bool": "BOOL", "text": "VARCHAR"}


_KIND_CACHE: dict[str, str | None] = {}


def kind_of(schema_type: str) -> str | None:
    """The value kind of an OceanBase schemaType (None: keep values as they are).

    >>> kind_of("BIGINT"), kind_of("decimal(10,2) unsigned"), kind_of("BLOB"), kind_of("VARCHAR(64)")
    ('int', 'decimal', None, None)
    """
    base = schema_type.upper().split("(", 1)[0].replace(" UNSIGNED", "").replace(" ZEROFILL", "").strip()
    kind = KINDS.get(base)
    if len(_KIND_CACHE) < 4096:
        _KIND_CACHE[schema_type] = kind
    return kind


@register
class OceanBaseExtend(OceanBaseDefault):
    """OceanBase OMS DefaultExtendColumnType JSON records: Default with column types."""

    name = "oceanbase_extend"
    title = "OceanBase OMS DefaultExtendColumnType JSON"
    spec = "oceanbase-oms-formats.txt"
    # Default's quirks, its "no column types" one replaced by what __light_type changes.
    quirks = (
        OceanBaseDefault.quirks[:1]
        + (
            "__light_type ({column: {schemaType: type}}) inside the images types the values: integer, float, "
            "DECIMAL and BOOL columns become numbers and booleans, binary stays Base64, dates stay text.",
            "DECIMAL values stay exact: text when a double would lose digits.",
            "__light_type may sit in prevStruct, postStruct or both; its types apply to both images and it "
            "is never left in an image.",
            "HEARTBEAT and DDL records carry no __light_type: one typed record among those sampled is what "
            "tells Extend from Default.",
        )
        + OceanBaseDefault.quirks[2:]
    )

    def __init__(self, tz: str | None = None) -> None:
        super().__init__(tz)
        #: (prevStruct map text, postStruct map text) -> column kinds, for the batch decoder.
        self._kinds_by_text: dict[tuple[bytes, bytes], tuple[dict[str, str], dict[str, tuple]]] = {}

    # ------------------------------------------------------------ detection

    def detect(self, value: Any) -> Match | None:
        shape = record_shape(value)
        if shape is None:
            return None
        score, evidence = shape
        where = light_type_where(value)
        if where is None:  # a heartbeat or DDL of an Extend stream looks like Default: lose by a hair only
            return Match(score - 0.01, evidence)
        return Match(0.98, evidence + (where,))

    # ------------------------------------------------------------ decoding

    def images(
        self, prev: dict[str, Any] | None, post: dict[str, Any] | None, event: Event | None = None
    ) -> tuple[dict | None, dict | None]:
        """Both images typed by the ``__light_type`` maps they carry, the map removed; their column types
        declared for ``event``'s table."""
        types = merged_types(light_types(prev, "prevStruct"), light_types(post, "postStruct"))
        kinds = column_kinds(types)
        if event is not None:
            self.declare(event.database, event.schema, event.table, declared_columns(types))
        return typed(prev, kinds), typed(post, kinds)

    def line_images(
        self, prev: bytes | None, post: bytes | None, key_side: str | None, head: tuple = (), index: int | None = None
    ) -> tuple[str | None, str | None, dict[str, Any] | None]:
        """``(before, after, key image)`` from raw image JSON, typed as :meth:`images` types them.

        The ``__light_type`` maps are cut off the raw text (:func:`split_light`) and their kinds
        remembered by their text, so only the values are parsed; an image the cut does not fit goes
        whole through :meth:`images`.
        """
        prev_split, post_split = split_light(prev), split_light(post)
        found = None
        if prev_split is not None and post_split is not None:
            found = self._line_kinds(prev_split[1], post_split[1])
        if found is None or prev_split is None or post_split is None:  # (found only where both were cut)
            before, after = self.images(
                None if prev is None else values.loads(prev), None if post is None else values.loads(post)
            )
            if head:
                types = merged_types(
                    light_types(values.loads(prev) if prev else None, "prevStruct"),
                    light_types(values.loads(post) if post else None, "postStruct"),
                )
                self.declare(head[2], head[3], head[4], declared_columns(types), index)
        else:
            kinds, declared = found
            if head:
                self.declare(head[2], head[3], head[4], declared, index)
            prev_image, post_image = prev_split[0], post_split[0]  # None for no image
            before = None if prev_image is None else typed(values.loads(prev_image), kinds)
            after = None if post_image is None else typed(values.loads(post_image), kinds)
        key_row = before if key_side == "before" else after if key_side == "after" else None
        return values.image(before), values.image(after), key_row

    def _line_kinds(self, prev_map: bytes, post_map: bytes) -> tuple[dict[str, str], dict[str, tuple]] | None:
        """:func:`image_kinds` and the declared column types of the raw ``__light_type`` texts of both images
        (b"" for none), remembered by those texts; None when one is not JSON (the cut went wrong)."""
        cache = self._kinds_by_text
        found = cache.get((prev_map, post_map))
        if found is None:
            try:
                prev_types = type_map(values.loads(prev_map), "prevStruct") if prev_map else {}
                post_types = type_map(values.loads(post_map), "postStruct") if post_map else {}
            except ValueError:
                return None
            if len(cache) >= 1024:
                cache.clear()
            types = merged_types(prev_types, post_types)
            found = cache[(prev_map, post_map)] = (column_kinds(types), declared_columns(types))
        return found

    # ------------------------------------------------------------ encoding

    def table_types(self, rows: list[dict[str, Any]]) -> dict[tuple, dict[str, str]]:
        """Per table, the kind of each column (``values.infer_kinds``; exact decimal text is ``decimal``)."""
        images: dict[tuple, list[dict[str, Any]]] = {}
        for row in rows:
            for side in ("before", "after"):
                if row[side] is not None:
                    images.setdefault((row["database"], row["table"]), []).append(values.loads(row[side]))
        kinds = {}
        for table, found in images.items():
            table_kinds = values.infer_kinds(found)
            for column, kind in table_kinds.items():
                if kind == "text" and _all_exact_decimals(image.get(column) for image in found):
                    table_kinds[column] = "decimal"
            kinds[table] = table_kinds
        return kinds

    def encode_image(self, text: str | None, types: dict[str, str]) -> dict[str, Any] | None:
        """Values as text with a ``__light_type`` entry for the columns of the image.

        A value whose text would not read back the same under its column's
        type (a mixed column) is written as it is, with VARCHAR as its type
        when it is text.
        """
        if text is None:
            return None
        image: dict[str, Any] = {}
        light: dict[str, dict[str, str]] = {}
        for column, value in values.loads(text).items():
            kind = types.get(column, "text")
            written = value_text(value) if kind != "text" else value
            back = values.coerce(written, kind)
            if type(back) is not type(value) or back != value:
                written = value
                if isinstance(value, str):
                    kind = "text"
            image[column] = written
            light[column] = {"schemaType": SCHEMA_TYPES[kind]}
        image[LIGHT_TYPE] = light
        return image


def light_types(struct: dict[str, Any] | None, where: str) -> dict[str, Any]:
    """The ``__light_type`` map of an image ({} when it has none)."""
    if not struct or LIGHT_TYPE not in struct:
        return {}
    return type_map(struct[LIGHT_TYPE], where)


def type_map(found: Any, where: str) -> dict[str, Any]:
    """The value of ``where.__light_type``, which must be a JSON object."""
    if not isinstance(found, dict):
        raise BadMessage(f"expected {where}.{LIGHT_TYPE} as a JSON object, got {type(found).__name__}")
    return found


def image_kinds(prev_types: dict[str, Any], post_types: dict[str, Any]) -> dict[str, str]:
    """The kinds both images are typed by: the maps of both, postStruct's winning a column in both."""
    return column_kinds(merged_types(prev_types, post_types))


def merged_types(prev_types: dict[str, Any], post_types: dict[str, Any]) -> dict[str, Any]:
    """The ``__light_type`` maps of both images as one, postStruct's winning a column in both."""
    if post_types:
        return {**prev_types, **post_types} if prev_types else post_types
    return prev_types


def declared_kind(schema_type: str) -> str:
    """The kind (:mod:`cdckit.column_types`) a schemaType declares (``string`` for one not known here).

    >>> declared_kind("DECIMAL(10,2)"), declared_kind("BIGINT UNSIGNED"), declared_kind("datetime(6)")
    ('decimal(10,2)', 'int', 'timestamp')
    """
    text = schema_type.upper().strip()
    base = text.split("(", 1)[0].replace(" UNSIGNED", "").replace(" ZEROFILL", "").strip()
    kind = KINDS.get(base) or DECLARED_KINDS.get(base.split(" ", 1)[0], "string")
    if kind == "decimal":
        found = _PARAMETERS.search(text)
        if found is not None:
            kind = f"decimal({found.group(1)},{found.group(2) or 0})"
    return kind


def declared_columns(types: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The column types a ``__light_type`` map declares, ``{column: (schemaType, kind)}``."""
    columns = {}
    for column, spec in types.items():
        schema_type = spec.get("schemaType") if spec.__class__ is dict else spec
        if schema_type.__class__ is str:
            columns[column] = (schema_type, declared_kind(schema_type))
    return columns


_LIGHT_KEY = b'"' + LIGHT_TYPE.encode() + b'"'


def split_light(data: bytes | None) -> tuple[bytes | None, bytes] | None:
    """A raw image object cut in two: its JSON without ``__light_type``, and the map's JSON text
    (b"" when the image has none); ``(None, b"")`` for no image.

    The cut is made only when the key is written once, plainly (no ``\\u00`` escape before it,
    which might spell it again), as the last member and not the first; None otherwise. A key
    found inside a nested value leaves a map text that is not JSON, which the caller checks when
    it first parses the map.

    >>> split_light(b'{"id":"7","__light_type":{"id":{"schemaType":"INT"}}}')
    (b'{"id":"7"}', b'{"id":{"schemaType":"INT"}}')
    """
    if data is None:
        return None, b""
    at = data.find(_LIGHT_KEY)
    if at < 0:
        return (data, b"") if b"\\u00" not in data else None
    end = at + len(_LIGHT_KEY)
    if data.find(_LIGHT_KEY, end) >= 0 or data.find(b"\\u00", 0, at) >= 0:
        return None
    head = data[:at].rstrip()
    tail = data[end:-1].lstrip()
    if not head.endswith(b",") or not tail.startswith(b":"):
        return None
    return head[:-1] + b"}", tail[1:]


def column_kinds(types: dict[str, Any]) -> dict[str, str]:
    """Column -> value kind, for the columns whose schemaType changes values."""
    kinds: dict[str, str] = {}
    for column, spec in types.items():
        schema_type = spec.get("schemaType") if spec.__class__ is dict else spec
        if not isinstance(schema_type, str):
            continue
        kind = _KIND_CACHE[schema_type] if schema_type in _KIND_CACHE else kind_of(schema_type)
        if kind is not None:
            kinds[column] = kind
    return kinds


def typed(struct: dict[str, Any] | None, kinds: dict[str, str]) -> dict[str, Any] | None:
    """The image without ``__light_type``, values typed by their column's kind."""
    if struct is None:
        return None
    row = dict(struct)
    row.pop(LIGHT_TYPE, None)
    coerce = values.coerce
    for column, kind in kinds.items():
        value = row.get(column)
        if value.__class__ is str:
            row[column] = coerce(value, kind)
    return row


def _all_exact_decimals(found: Any) -> bool:
    """True when every non-null value is number text that only exact text can hold."""
    seen = False
    for value in found:
        if value is None:
            continue
        if not isinstance(value, str) or not _DECIMAL_TEXT.match(value) or values.exact_number(value) is not value:
            return False
        seen = True
    return seen
