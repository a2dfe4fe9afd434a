"""The Debezium batch decoder's block-wide shortcuts (one orjson parse and write per block, the producer's image
text kept, one placeholder / long-number / record-branch search per block, Arrow columns) give what the
one-message decoder gives, for every edge of those shortcuts, wherever the odd image lies in a block."""

from __future__ import annotations

import pytest

from cdckit.decoding import FrameSink, MessageDecoder
from cdckit.dialects import registry
from cdckit.io import LineBlock

ROW = b'{"op":"u","before":{"id":1,"a":"x"},"after":%s,"source":{"db":"d","table":"t","file":"f.1","pos":%d,"row":0,"ts_ms":1},"ts_ms":2}'
ODD = [
    b'{"id": 1, "a": "x"}',  # whitespace
    b'{"id":1,"a":"\\u00e9"}', b'{"id":1,"a":"a\\/b"}', b'{"id":1,"a":"q\\"\\\\\\n"}',  # escapes
    b'{"id":1,"a":1.50}', b'{"id":1,"a":1E5}', b'{"id":-0,"a":-0.0}', b'{"id":1,"a":1e-7}',  # numbers
    b'{"id":1,"id":2}',  # duplicate keys
    b'{"id":123456789012345678901234}', b'{"id":0.12345678901234567890}',  # long numbers
    b'{"id":1,"a":"__debezium_unavailable_value"}',  # the placeholder
    b'{"id":1,"a":"\xff"}', b'{"id":1,"a":"\\ud800"}',  # invalid UTF-8, a lone surrogate
    b'{"x.y":{"id":1}}', b'{"id":1,"n":{"k":[1,{"z":null}]}}',  # a record branch, nesting
    b'{"id":1,"a":1e400}',
]


def _read(lines: list[bytes], columnar: bool) -> tuple:
    dialect = registry.create("debezium")
    if not columnar:
        dialect.decode_columns = None  # the row interface: decode_lines
    sink = FrameSink()
    decoder = MessageDecoder(dialect, sink)
    decoder.block(LineBlock(0, 1, lines), "s")
    decoder.finish()
    return sink.builder.to_pandas(), sink.decoded, dict(sink.skipped_reasons)


def _alone(lines: list[bytes]) -> tuple:
    dialect = registry.create("debezium")
    dialect.has_line_decoder = False  # each message through decode()
    sink = FrameSink()
    decoder = MessageDecoder(dialect, sink)
    decoder.block(LineBlock(0, 1, lines), "s")
    decoder.finish()
    return sink.builder.to_pandas(), sink.decoded, dict(sink.skipped_reasons)


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("place", [0, 17, 39])
def test_an_odd_image_in_a_block_reads_as_alone(odd: bytes, place: int) -> None:
    lines = [ROW % (b'{"id":1,"a":"y"}', pos) for pos in range(40)]
    lines[place] = ROW % (odd, place)
    alone = _alone(lines)
    for columnar in (True, False):
        got = _read(lines, columnar)
        assert got[0].equals(alone[0]), (odd, columnar)
        assert got[1:] == alone[1:]


def test_the_producers_text_is_kept_only_where_orjson_writes_it_alike() -> None:
    lines = [ROW % (odd, pos) for pos, odd in enumerate(ODD * 3)]
    fast, alone = _read(lines, True)[0], _alone(lines)[0]
    assert fast.equals(alone)
    after = fast["after"].tolist()
    assert '{"id":1,"a":"a/b"}' in after and '{"id":1,"a":1.5}' in after and '{"id":2}' in after
