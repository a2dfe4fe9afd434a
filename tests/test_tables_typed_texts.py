"""typed_texts (Arrow's reading of whole images) gives exactly what typed_records gives on the parsed images."""

from __future__ import annotations

import pandas as pd
import pytest

from cdckit import values
from cdckit.analysis.tables import typed_records, typed_texts

CASES = {
    "plain": (['{"id":1,"name":"a","qty":2.5,"ok":true,"note":null}', '{"id":2,"name":"b","qty":3,"ok":false}'],
              None),
    "number text and dates stay per value": (
        ['{"id":1,"code":"0042","day":"2024-05-01","at":"2024-05-01 09:00:00"}',
         '{"id":2,"code":"17","day":"2024-05-02","at":"2024-05-01T10:00:00Z"}'], None),
    "long numbers": (['{"id":12345678901234567890,"x":1}', '{"id":2,"x":0.1234567890123456789}'], None),
    "nested": (['{"id":1,"tags":["a"],"doc":{"k":1}}', '{"id":2,"tags":[],"doc":null}'], None),
    "declared kinds": (['{"id":"7","price":1.5,"day":18000,"flag":1,"name":"x"}',
                       '{"id":8,"price":"2.25","day":"2024-05-01","flag":"no","name":3}'],
                      {"id": "int", "price": "decimal(10,2)", "day": "date", "flag": "bool", "name": "string"}),
    "declared and read alike": (['{"id":1,"qty":2.5,"ok":true,"name":"a"}', '{"id":2,"qty":null,"ok":null}'],
                               {"id": "int", "qty": "float", "ok": "bool", "name": "string", "gone": "int"}),
    "misfits": (['{"id":1,"d":"2024-05-01"}', '{"id":"x","d":"soon"}'], {"id": "int", "d": "date"}),
    "a column absent or only null": (['{"id":1}', '{"id":2,"n":null}'], None),
    "a kind that changes": (['{"id":1,"v":1}', '{"id":2,"v":"one"}'], None),
    "pretty printed": (['{\n"id": 1}', '{"id": 2}'], None),
    "escapes and unicode": (['{"id":1,"s":"a\\"b\\\\c\\u00e9\\n"}', '{"id":2,"s":"Troms\u00f8"}'], None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_typed_texts_is_typed_records(name: str) -> None:
    texts, declared = CASES[name]
    columns = list(dict.fromkeys([*(declared or {}), *(c for t in texts for c in values.loads(t))]))
    keys = [f"[{i}]" for i in range(len(texts))]
    expected, expected_problems = typed_records([values.loads(t) for t in texts], columns, "t",
                                                declared=declared, keys=keys)
    frame, problems = typed_texts(texts, columns, "t", declared=declared, keys=keys)
    pd.testing.assert_frame_equal(frame, expected)
    assert [str(frame[c].dtype) for c in columns] == [str(expected[c].dtype) for c in columns]
    assert repr(frame.astype(object).values.tolist()) == repr(expected.astype(object).values.tolist())  # None, NA, NaN
    assert problems == expected_problems
