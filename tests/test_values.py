"""An image's JSON text is the same whether a fast path keeps it as it stands or it is parsed and written.

Fast paths that keep an image unparsed write its text with
:func:`cdckit.values.image_text`; these tests write the same values in every
way producers do (spaces, indentation, ``\\u`` escapes, exponents, trailing
zeros, Java's and Python's float forms, long numbers) and check that text
against the parsed-and-written one.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_styles import STYLES, written

from cdckit import values
from cdckit.errors import InvalidValue

ASCII = st.characters(min_codepoint=32, max_codepoint=126)

WRITTEN_THE_SAME = [
    b'{"id":1,"name":"joe","price":12.5}',
    b'{"a":0.00001,"b":1234.0,"d":-0.0,"e":[1,{"f":null}],"g":true,"h":-12,"i":1e-6,"j":1e+16}',
    b'{"text":"a\\"b\\\\c\\nd\\t\\u001f","unicode":"\xc3\xa9\xe2\x80\xa8","date":"2022-04-05"}',
    b'{"big":9223372036854775807,"small":-9223372036854775808}',
]
WRITTEN_OTHERWISE = [
    b'{"id": 1}', b'{"id":1 }', b'{ "id":1}', b'{"id"\n:1}', b'{"id":[1 ,2]}',
    b'{"x":1.5E7}', b'{"x":1.0e-5}', b'{"x":1.50}', b'{"x":[1.00]}', b'{"x":-0}', b'{"x":0.000001}',
    b'{"x":"\\u00e9"}', b'{"x":"a\\/b"}', b'{"x":12345678901234567890}', b'{"x":0.30000000000000004441}',
    b'{"x":1e400}',
]


@pytest.mark.parametrize("data", WRITTEN_THE_SAME)
def test_text_already_as_image_writes_it_is_kept(data):
    assert values.image_text(data) == values.image(values.loads(data)) == data.decode()


@pytest.mark.parametrize("data", WRITTEN_OTHERWISE)
def test_text_written_otherwise_is_written_as_image_writes_it(data):
    assert values.image_text(data) == values.image(values.loads(data)) != data.decode()


floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=-1e-3, max_value=1e-3),
    st.floats(min_value=-1e9, max_value=1e9),
    st.sampled_from([1e-6, 2.5e-7, 1.5e-5, 1.5e7, 12345678.9, 0.1, -0.0, 1e16, 123.0, 1e-300, 1.7976931348623157e308]),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    floats, st.text(ASCII, max_size=12), st.text(max_size=4),
    st.sampled_from(["a, b", "x: y", "1.50", "-0", "1e5", "\u00e9", "\u2028", "a/b", "tab\there"]),
)
documents = st.dictionaries(
    st.text(ASCII, max_size=6),
    st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                      max_size=3), max_leaves=8),
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(st.data(), documents, st.sampled_from(STYLES[:1] * 4 + STYLES[1:]))
def test_kept_text_equals_parsed_and_written_text(data, document, style):
    text = written(document, lambda options: data.draw(st.sampled_from(options)), style).encode()
    assert values.image_text(text) == values.image(values.loads(text))
    assert values.parsed_image(text) == (values.loads(text), values.image(values.loads(text)))




@pytest.mark.parametrize("text, expected", [
    # long digit runs inside strings do not make a float inexact...
    (b'{"pos": "00000000000000000004", "price": 12.5}', {"pos": "00000000000000000004", "price": 12.5}),
    (b'{"a": "x\\"12345678901234567890", "b": 1.5}', {"a": 'x"12345678901234567890', "b": 1.5}),
    # ...but a long number after a string with escaped quotes and backslashes is still kept exact
    (b'{"a": "\\\\", "b": 0.1000000000000000055511151231257827}',
     {"a": "\\", "b": "0.1000000000000000055511151231257827"}),
    (b'{"a": "\\"", "n": 123456789012345678901, "x": 2.5}', {"a": '"', "n": "123456789012345678901", "x": 2.5}),
    (b'{"pos": "00000000000000000004", "n": 18446744073709551615}', {"pos": "00000000000000000004",
                                                                     "n": "18446744073709551615"}),
])
def test_long_digit_runs_in_strings_and_numbers(text, expected):
    assert values.loads(text) == expected


def test_the_missing_cell_rule_is_pandas_on_scalars_and_never_on_containers():
    import numpy as np
    import pandas as pd

    from cdckit.values import is_missing

    missing = (None, float("nan"), pd.NA, pd.NaT, np.float64("nan"), np.datetime64("NaT"))
    present = (0, 0.0, "", False, b"", [None], {}, (), np.int64(3), np.array([np.nan]), pd.Timestamp(0))
    assert all(is_missing(v) for v in missing) and not any(is_missing(v) for v in present)


# ---------------------------------------------------------------- PostgreSQL's time texts, exact decimals of any length


@pytest.mark.parametrize("text, iso", [
    ("1900-06-01 08:29:08-03:30:52", "1900-06-01T12:00:00"),  # local mean time: an offset with seconds
    ("2024-01-02 03:04:05+02", "2024-01-02T01:04:05"),
    ("2024-01-02 03:04:05.5+0530", "2024-01-01T21:34:05.5"),
    ("2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04:05.123456789"),
    ("1500-01-01 00:00:00", "1500-01-01T00:00:00"),
    ("2024-02-29", "2024-02-29T00:00:00"),
])
def test_instant_ns_reads_postgres_and_iso_forms(text, iso):
    import numpy as np

    whole, _, fraction = iso.partition(".")
    want = int(np.datetime64(whole, "s").astype("int64")) * 10**9 + int(fraction.ljust(9, "0") or 0)
    assert values.instant_ns(text) == want


def test_instant_ns_reads_any_year_and_refuses_what_is_no_instant():
    day = 86_400 * 10**9
    assert values.instant_ns("10000-01-01 00:00:00+00") == 2_932_897 * day
    assert values.instant_ns("0001-01-01 BC") == values.instant_ns("0001-01-01") - 366 * day  # 1 BC is leap year 0
    assert values.instant_ns("0044-03-15 12:00:00+00 BC") < values.instant_ns("0001-01-01")
    assert values.date_days("10000-01-01") == 2_932_897 and values.date_days("1969-12-31") == -1
    for text in ("infinity", "-infinity", "2024-02-30", "2024-13-01", "soon", "2024-01-01 25:00:00"):
        with pytest.raises(InvalidValue):
            values.instant_ns(text)
    with pytest.raises(InvalidValue):  # a time a nanosecond timestamp cannot hold, where the frame needs one
        values.text_time_to_ns("1500-01-01 00:00:00+00")


def test_time_of_day_ns_reads_time_and_timetz():
    assert values.time_of_day_ns("12:34:56.789") == (45_296_789) * 10**6
    assert values.time_of_day_ns("12:34:56.789+05:30") == values.time_of_day_ns("07:04:56.789")
    assert values.time_of_day_ns("01:00:00+05:30") == values.time_of_day_ns("19:30:00")  # wraps past midnight
    assert values.time_of_day_ns("07:04:56.789Z") == values.time_of_day_ns("07:04:56.789")
    assert values.time_of_day_ns("24:00:00") == 86_400 * 10**9


def test_decimal_text_and_loads_keep_every_digit():
    from decimal import Decimal

    unscaled = int("1234567890" * 100)
    assert values.decimal_text(unscaled, 10) == str(unscaled)[:-10] + "." + str(unscaled)[-10:]
    assert Decimal(values.decimal_text(-unscaled, 0)) == -unscaled
    assert values.decimal_text(-(10**40) - 5, 38) == "-100.00000000000000000000000000000000000005"
    long = "7" * 131_072  # PostgreSQL's unconstrained numeric: 131072 digits before the point
    assert values.loads((f'{{"n": {long}.5}}').encode()) == {"n": long + ".5"}
    assert values.loads((f'{{"n": -{long}}}').encode()) == {"n": "-" + long}
    assert values.coerce(long, "int") == long and values.exact_number(long + ".25") == long + ".25"


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(alphabet='0123456789."{}:, ab\\é', max_size=60), min_size=1, max_size=8))
def test_images_are_read_by_arrow_unless_the_texts_may_hold_a_long_number(texts):
    """Arrow's regular expression flags the texts has_long_number flags (each after another image's ``}``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flagged = pc.match_substring_regex(pa.array(texts), values._LONG_NUMBER_PATTERN).to_pylist()
    assert flagged == [values.has_long_number(b"}" + text.encode()) for text in texts]


def test_an_image_with_a_number_a_double_cannot_carry_is_not_read_by_arrow():
    assert values.images_table(['{"a":1.5}', '{"a":12345678901234567.5}']) is None
    read = values.images_table(['{"a":1.5,"b":"12345678901234567.5"}'])  # digits in a string are text
    assert read is not None and read.column("b").to_pylist() == ["12345678901234567.5"]
