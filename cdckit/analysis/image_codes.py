"""One table's row images as factorized columns: the columnar form key inference checks candidates on.

:class:`ImageCodes` takes a table's changes in replay order and gives, per
column, one integer code per image (before images, then after images; -1
where the column is null or missing), so that equal values have equal codes
and a candidate key is checked with array arithmetic. The images are read by
Arrow's JSON reader in one pass (:func:`cdckit.values.images_table`); where
Arrow cannot read them as :func:`cdckit.values.loads` does (a number a double
cannot carry, a column holding numbers in one image and text in another, a
text spread over lines), each image is parsed and the columns factorized as
Python values instead. Both give the same codes: values are equal when
Python finds them equal (``1`` and ``1.0`` too), nested values (lists,
objects) make a column unusable.

Arrow reads a text that is a whole-second ISO time as a time: two texts of
one instant written two ways (``2024-01-01T10:00:00`` and ``2024-01-01
10:00:00``) then share a code. A producer writes one column one way, so this
does not arise within a capture's column.

>>> import pandas as pd
>>> changes = pd.DataFrame({"op": ["insert", "update"], "seq": ["1", "2"], "txn_id": [None, None],
...                         "before": [None, '{"id":1,"n":"a"}'], "after": ['{"id":1,"n":"a"}', '{"id":1,"n":"b"}']})
>>> images = ImageCodes(changes)
>>> images.columns, images.codes("n").tolist()
(['id', 'n'], [-1, 0, 0, 1])
>>> images.image(1, after=True)
{'id': 1, 'n': 'b'}
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import values
from ..duckdb_scans import scan_batches
from ..row_images import parse_image

__all__ = ["ImageCodes"]

_REMOVES = np.array(["delete", "update"])
_ADDS = np.array(["insert", "read", "update"])
#: pandas' names for values of which some are floating-point numbers (a column Arrow reads as doubles).
_FLOATING = ("floating", "mixed-integer-float")


class ImageCodes:
    """One table's changes (rows of the canonical frame, in replay order, redeliveries dropped), their images
    factorized per column: ``columns`` (after images' first, in the order they appear), :meth:`codes` (per
    usable column: before images' codes, then after images'), ``kind`` (per usable column: 0 integer or
    text, 1 other, 2 floating), ``unusable`` (column -> why), ``row_columns`` (the columns some after image
    holds a value in)."""

    def __init__(self, table: pd.DataFrame) -> None:
        ops = table["op"].to_numpy(dtype=object)
        self.segment = np.cumsum(ops == "truncate")  # a truncate empties the table: counts start again
        keep = ops != "truncate"
        self.segment = self.segment[keep]
        self.ops = ops[keep].astype(str)
        self.n = len(self.ops)
        self._before, self._after = _texts(table["before"], keep), _texts(table["after"], keep)
        self.is_update = self.ops == "update"
        self.removes = np.isin(self.ops, _REMOVES)
        self.adds = np.isin(self.ops, _ADDS)
        self.has_before = self._before.is_valid().to_numpy(zero_copy_only=False)
        self.has_after = self._after.is_valid().to_numpy(zero_copy_only=False)
        # a delete right before a create of the table at the same seq (and transaction): a key change in two records
        seq = table["seq"].astype(object).reset_index(drop=True)[keep]
        txn = table["txn_id"].astype(object).fillna("").reset_index(drop=True)[keep]
        same = (seq.notna() & (seq == seq.shift(-1)) & (txn == txn.shift(-1))).to_numpy(dtype=bool)
        self.pairs = np.flatnonzero(same[:-1] & (self.ops[:-1] == "delete") & (self.ops[1:] == "insert"))
        self.columns: list[str] = []
        self._codes: dict[str, np.ndarray] = {}  # coded on first use (the Arrow path), or all at once
        self._arrays: dict[str, tuple[pa.Array, pa.Array]] = {}  # the Arrow path's before and after values
        self.kind: dict[str, int] = {}
        self.unusable: dict[str, str] = {}
        self.row_columns: set[str] = set()
        if not self._coded_by_arrow():
            self._coded_by_python()

    # ---------------------------------------------------------------- the images

    def image(self, position: int, after: bool) -> dict[str, Any] | None:
        """The before or after image of the change at ``position``, parsed (None where there is none)."""
        return parse_image((self._after if after else self._before)[int(position)].as_py())

    def images(self, positions: np.ndarray, after: bool) -> list[dict[str, Any] | None]:
        """The before or after images of the changes at ``positions``, parsed (None where there is none)."""
        texts = (self._after if after else self._before).take(pa.array(positions, pa.int64())).to_pylist()
        return [parse_image(text) for text in texts]

    def old_tuple_shapes(self, positions: np.ndarray) -> dict[tuple[str, ...], int] | None:
        """The column names of the before images of the changes at ``positions`` (each in its image's order), and
        how many name them so, read by DuckDB without parsing the images in Python; None where a before or after
        image there is no object (or has a space before its brace), or a before image names a column twice (those are
        parsed one by one).

        >>> import pandas as pd
        >>> changes = pd.DataFrame({"op": ["update"] * 3, "seq": ["1", "2", "3"], "txn_id": [None] * 3,
        ...                         "before": ['{"id":1}', '{"id":2}', '{"id":3,"n":null}'], "after": ['{"id":1}'] * 3})
        >>> ImageCodes(changes).old_tuple_shapes(np.arange(3))
        {('id',): 2, ('id', 'n'): 1}
        """
        rows = pa.array(positions, pa.int64())
        con = duckdb.connect()
        try:
            images = pa.table({"before": self._before.take(rows), "after": self._after.take(rows)})
            con.register("images", scan_batches(images))
            found = con.sql(  # the images are valid JSON (read when coded): an object starts with {
                "SELECT names, count(*), bool_and(starts_with(before, '{') AND starts_with(after, '{')) "
                "FROM (SELECT try(json_keys(before)) AS names, before, after FROM images) GROUP BY names ORDER BY names"
            ).fetchall()
        finally:
            con.close()
        if not all(objects and names is not None and len(set(names)) == len(names) for names, _, objects in found):
            return None
        return {tuple(names): count for names, count, _ in found}

    def value(self, columns: tuple[str, ...], position: int, after: bool) -> str:
        """The columns' values at one change (its after or before image), as text."""
        image = self.image(position, after) or {}
        return values.image([image.get(c) for c in columns])

    # ---------------------------------------------------------------- the codes

    def _coded_by_arrow(self) -> bool:
        """Code the columns from Arrow's reading of the images; False (nothing coded) where it cannot."""
        befores, afters = _arrow_images(self._before, self.has_before), _arrow_images(self._after, self.has_after)
        if befores is None or afters is None:
            return False
        columns = list(dict.fromkeys([*afters.column_names, *befores.column_names]))
        pairs: dict[str, tuple[pa.Array, pa.Array]] = {}
        for column in columns:
            pair = _alike(_column(befores, column, self.n), _column(afters, column, self.n))
            if pair is None:
                return False  # a column read as two kinds: Python's values decide
            pairs[column] = pair
        for column, (before, after) in pairs.items():
            self.columns.append(column)
            if after.null_count < len(after):
                self.row_columns.add(column)
            kind = before.type
            if pa.types.is_nested(kind):
                self.unusable[column] = "holds lists or objects"
                continue
            self._arrays[column] = (before, after)
            integer_or_text = pa.types.is_integer(kind) or pa.types.is_string(kind) or pa.types.is_timestamp(kind)
            self.kind[column] = 0 if integer_or_text else 2 if pa.types.is_floating(kind) else 1
        return True

    def _coded_by_python(self) -> None:
        """Code the columns from the images parsed one by one and factorized as Python values."""
        everyone = np.arange(self.n)
        before = [image or {} for image in self.images(everyone, after=False)]
        after = [image or {} for image in self.images(everyone, after=True)]
        befores, afters = pd.DataFrame(before, dtype=object), pd.DataFrame(after, dtype=object)
        self.columns = list(dict.fromkeys([*afters.columns, *befores.columns]))
        self.row_columns = {c for row in after for c, v in row.items() if v is not None}
        nothing = np.full(self.n, None, dtype=object)
        for column in self.columns:
            b = befores[column].to_numpy() if column in befores else nothing
            a = afters[column].to_numpy() if column in afters else nothing
            both = np.concatenate([b, a])
            missing = pd.isna(both)
            try:
                codes, _ = pd.factorize(both)
            except TypeError:
                self.unusable[column] = "holds lists or objects"
                continue
            self._codes[column] = np.where(missing, -1, codes).astype(np.int64)
            kinds = pd.api.types.infer_dtype(both[~missing], skipna=True)  # every value: 0 and 0.0 share a code
            self.kind[column] = 0 if kinds in ("integer", "string") else 2 if kinds in _FLOATING else 1

    def usable(self, column: str) -> bool:
        """Whether ``column`` is in the images and holds no lists or objects (it has codes)."""
        return column in self.kind

    def present(self, column: str) -> np.ndarray:
        """Whether the usable ``column`` holds a value, over [before images; after images]."""
        if column in self._codes:
            return self._codes[column] >= 0
        return np.concatenate([side.is_valid().to_numpy(zero_copy_only=False) for side in self._arrays[column]])

    def codes(self, column: str) -> np.ndarray:
        """The usable ``column``'s codes over [before images; after images] (-1 where null or missing)."""
        if column not in self._codes:
            both = pa.concat_arrays(list(self._arrays[column]))
            if pa.types.is_floating(both.type):
                both = pc.add(both, pa.scalar(0.0, both.type))  # -0.0 + 0.0 is 0.0: equal, as in Python
            encoded = pc.dictionary_encode(both)
            self._codes[column] = encoded.indices.fill_null(-1).to_numpy().astype(np.int64)
        return self._codes[column]

    def combined(self, columns: tuple[str, ...]) -> np.ndarray:
        """The codes of a column set over [before images; after images] (-1 where a column is null or missing)."""
        codes = self.codes(columns[0])
        for column in columns[1:]:
            other = self.codes(column)
            joined = codes * (int(other.max()) + 2) + other
            valid = (codes >= 0) & (other >= 0)
            fresh = np.full(len(codes), -1, dtype=np.int64)
            fresh[valid] = pd.factorize(joined[valid])[0]
            codes = fresh
        return codes


def _texts(column: pd.Series, keep: np.ndarray) -> pa.LargeStringArray:
    """An image column's texts at the kept changes, as one Arrow array (an Arrow-backed column is not copied)."""
    texts = pa.array(column, type=pa.large_string(), from_pandas=True).filter(pa.array(keep))
    return texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts


def _arrow_images(texts: pa.LargeStringArray, present: np.ndarray) -> pa.Table | None:
    """The present image texts read by Arrow, one row per change (an empty row where there is no image);
    None where Arrow cannot read them as :func:`cdckit.values.loads` does."""
    if not present.any():
        return pa.table({})
    table = values.images_table(texts if present.all() else texts.filter(pa.array(present)))
    if table is None:
        return None
    if present.all():
        return table
    places = np.full(len(texts), -1, dtype=np.int64)
    places[present] = np.arange(int(present.sum()))
    return table.take(pa.array(places, mask=~present))


def _column(table: pa.Table, name: str, rows: int) -> pa.Array:
    """A column of ``table`` as one array; nulls where the table lacks it."""
    if name not in table.column_names:
        return pa.nulls(rows)
    return table.column(name).combine_chunks()


def _alike(before: pa.Array, after: pa.Array) -> tuple[pa.Array, pa.Array] | None:
    """The two arrays as one type (a null or integer side takes the other's type), or None where they differ."""
    if before.type == after.type:
        return before, after
    if pa.types.is_null(before.type):
        return before.cast(after.type), after
    if pa.types.is_null(after.type):
        return before, after.cast(before.type)
    numbers = (pa.types.is_integer, pa.types.is_floating)
    if any(is_a(before.type) for is_a in numbers) and any(is_a(after.type) for is_a in numbers):
        return before.cast(pa.float64()), after.cast(pa.float64())
    return None
