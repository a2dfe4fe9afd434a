"""The Debezium batch decoder's block-wide shortcuts (one orjson parse and write per block, the producer's image
text kept, one placeholder / long-number / record-branch search per block, Arrow columns) give what the
one-message decoder gives, for every edge of those shortcuts, wherever the odd image lies in a block."""

from __future__ import annotations

import pytest

from cdckit.dialects import registry
from cdckit.io import LineBlock
from cdckit.reading.decoding import MessageDecoder
from cdckit.reading.sinks import FrameSink

ROW = (b'{"op":"u","before":{"id":1,"a":"x"},"after":%s,'
       b'"source":{"db":"d","table":"t","file":"f.1","pos":%d,"row":0,"ts_ms":1},"ts_ms":2}')
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


SOURCE = b'"source":{"db":"d","table":"t","file":"f.1","pos":%d,"row":0,"ts_ms":1}'
ODD_LINES = [  # each breaks one of the whole-block shortcuts (one msgspec call, columns by comprehension)
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","file":"f.1","pos":null,"row":0},"ts_ms":2}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","file":"12","pos":4},"ts_ms":2}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","file":"","pos":4},"ts_ms":2}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","file":"f.2","pos":4,"row":3},"ts_ms":2}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","pos":-4},"ts_ms":2}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","ts_us":5,"ts_ns":6},"ts_us":7}',
    b'{"op":"c","after":{"id":1},"source":{"db":"e","schema":"s","table":"u","connector":"postgresql"}}',
    b'{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","file":"f.1","pos":4,"row":null}}',
    b'{"op":"c","after":null,"source":{"table":"t"}}', b'{"op":"d","before":null,"source":{"table":"t"}}',
    b'{"op":"d","before":{"id":1},"after":null,"source":{"table":"t"}}',
    b'{"op":"c","after":"text","source":{"table":"t"}}', b'{"op":"u","before":[1],"after":{"id":1},"source":{}}',
    b'{"op":"c","after":{"id":1},"source":{"table":"t"},"extra":1}',  # an unknown field: msgspec refuses the block
    b'{"status":"BEGIN","id":"x","event_count":null}', b'null', b'{"op":"c","after":{"id":1}} {"op":"c"}',
    b'{"op":"c","after":{"id":1,"a":"__debezium_unavailable\\u005fvalue"},"source":{"table":"t"}}',
    b'{"op":"c","after":{"id":1,"a":"__debezium_unavailable_valu"},"source":{"table":"t"}}',
]


@pytest.mark.parametrize("wrap", [False, True], ids=["bare", "payload"])
@pytest.mark.parametrize("odd", ODD_LINES)
@pytest.mark.parametrize("place", [0, 21, 39])
def test_an_odd_line_in_a_block_reads_as_alone(odd: bytes, place: int, wrap: bool) -> None:
    lines = [b'{"op":"c","after":{"id":%d},%s,"ts_ms":2}' % (pos, SOURCE % pos) for pos in range(40)]
    lines[place] = odd
    if wrap:
        lines = [b'{"payload":' + line + b"}" for line in lines]
    alone = _alone(lines)
    for columnar in (True, False):
        got = _read(lines, columnar)
        assert got[0].equals(alone[0]), (odd, columnar)
        assert got[1:] == alone[1:]


def test_a_block_of_bare_and_wrapped_lines_reads_as_alone() -> None:
    lines = [b'{"op":"u","before":{"id":%d},"after":{"id":%d},%s}' % (pos, pos, SOURCE % pos) for pos in range(30)]
    lines[1::3] = [b'{"payload":' + line + b"}" for line in lines[1::3]]
    alone = _alone(lines)
    got = _read(lines, True)
    assert got[0].equals(alone[0]) and got[1:] == alone[1:]
    assert got[0]["seq"].tolist()[-1] == "f.1:00000000000000000029:00000000000000000000"
