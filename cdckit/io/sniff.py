r"""Which container a file is: forced, by its name (CSV, Parquet), or guessed from its first bytes.

>>> sniff_container(b'{"a": 1}\n{"a": 2}\n'), sniff_container(b'{\n  "a": 1\n}\n')
('jsonl', 'json')

``container_by_name``, ``csv_delimiter`` and ``binary_message`` are shared by
the modules of :mod:`cdckit.io` (not public).
"""

from __future__ import annotations

from .avro_files import MAGIC as AVRO_MAGIC
from .console import console_head
from .message import Message, error_message
from .streams import HEAD, open_file

__all__ = ["CONTAINERS", "sniff_container", "file_container", "is_binary", "is_comment_line", "messages_start"]

CONTAINERS = ("jsonl", "json", "text", "csv", "parquet", "avro")

#: Bytes that text rarely holds (controls other than tab, newline, form feed, carriage return, escape).
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 12, 13, 27)) + b"\x7f"
#: Characters of a binary file's bytes kept as the quarantine entry's raw text.
_RAW_KEPT = 1024


def file_container(path: str, container: str | None = None, key_separator: str | None = None) -> str:
    """The container of a file: forced, by its name (CSV, Parquet), or sniffed from its first bytes
    (``key_separator``: that of ``kafka-console-consumer`` lines, see :func:`sniff_container`).

    >>> file_container("rows.tsv.gz"), file_container("anything", "text")
    ('csv', 'text')
    """
    if container is not None:
        return container
    by_name = container_by_name(path)
    if by_name is not None:
        return by_name
    try:
        with open_file(path) as stream:
            return sniff_container(stream.read(HEAD), key_separator)
    except OSError:
        return "jsonl"  # unreadable: reading it says so, as one quarantined entry


def container_by_name(path: str) -> str | None:
    """``parquet``, ``csv`` or ``avro`` when the file's name says so (``.gz`` aside), else None."""
    plain = _plain_name(path)
    if plain.endswith(".parquet"):
        return "parquet"
    if plain.endswith(".avro"):
        return "avro"
    if plain.endswith((".csv", ".tsv")):
        return "csv"
    return None


def csv_delimiter(path: str) -> str:
    """The delimiter of a CSV file: a tab when its name ends in ``.tsv`` (``.gz`` aside), else a comma."""
    return "\t" if _plain_name(path).endswith(".tsv") else ","


def _plain_name(path: str) -> str:
    return path.lower().removesuffix(".gz")


def sniff_container(head: bytes, key_separator: str | None = None) -> str:
    """Guess the container from the first bytes of a file.

    Lines ``kafka-console-consumer`` printed (key, separator, value; see
    :mod:`cdckit.io.console`, ``key_separator`` a tab when None) are JSON Lines:
    each line holds one message.

    >>> sniff_container(b'{"a": 1}\\n{"a": 2}\\n'), sniff_container(b'{\\n  "a": 1\\n}\\n')
    ('jsonl', 'json')
    >>> sniff_container(b'[{"a": 1}]')
    'json'
    >>> sniff_container(b"src=css\\xfens=X"), sniff_container(bytes(range(256)))
    ('text', 'binary')
    >>> sniff_container(b'Offset:0\\tnull\\t{"a": 1}\\n'), sniff_container(b"Obj\\x01\\x04")
    ('jsonl', 'avro')

    Lines before the first message (a licence header, blank lines, the cut tail of a record) do not count
    (:func:`messages_start`): the reader quarantines each of them.

    >>> sniff_container(b'# Licensed to the ASF\\n\\n{"a": 1}\\n{"a": 2}\\n')
    'jsonl'
    >>> sniff_container(b'/*\\n * x\\n */\\n{\\n "a": 1\\n}\\n')
    'json'
    """
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(AVRO_MAGIC):
        return "avro"
    if is_binary(head):
        return "binary"
    head = messages_start(head, key_separator)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text:
        return "jsonl"
    first = text[:1]
    if first == b"[":
        return "json"
    if first not in (b"{", b'"'):
        return "jsonl" if console_head(text, key_separator) else "text"
    lines = [ln for ln in head.split(b"\n")[:-1] if ln.strip()][:10] or [text]
    complete = sum(1 for ln in lines if _one_line_value(ln.rstrip(b"\r")))
    if complete * 2 >= len(lines) or console_head(text, key_separator):
        return "jsonl"
    return "json"


#: How a comment line starts: ``#``, ``--``, ``//`` and the lines of a ``/* ... */`` block.
_COMMENT_STARTS = (b"#", b"--", b"//", b"/*", b"*")
#: Lines of the head looked at for the first message.
_LINES_LOOKED_AT = 64


def is_comment_line(line: bytes) -> bool:
    r"""True for a line that is a comment (a licence header's): it starts with ``#``, ``--``, ``//``, ``/*``
    or ``*`` (inside a ``/* ... */`` block), spaces aside.

    >>> is_comment_line(b"# Licensed to the ASF"), is_comment_line(b" * under the License."), is_comment_line(b"{}")
    (True, True, False)
    """
    return line.lstrip(b"\xef\xbb\xbf \t").startswith(_COMMENT_STARTS)


def messages_start(head: bytes, key_separator: str | None = None) -> bytes:
    r"""``head`` from its first line that may be a message on, past what a peer's test capture puts before
    it: blank and comment lines (a licence header), and at most one other line (a title, or the cut tail
    of a record where the capture started mid-message) when a JSON or console line follows. ``head``
    itself when no such line is there (a text capture).

    >>> messages_start(b'# licence\n\n--\n{"a": 1}\n')
    b'{"a": 1}\n'
    >>> messages_start(b'e": 2}\n{"a": 1}\n'), messages_start(b"BEGIN 5\ntable t: INSERT: id[integer]:1\n")
    (b'{"a": 1}\n', b'BEGIN 5\ntable t: INSERT: id[integer]:1\n')
    """
    pos, other = 0, 0
    for line in head.split(b"\n")[:_LINES_LOOKED_AT]:
        text = line.lstrip(b"\xef\xbb\xbf \t\r")
        if text and not is_comment_line(text):
            rest = head[pos:]
            if text[:1] in (b"{", b"[") or (not other and text[:1] == b'"') or console_head(rest, key_separator):
                return rest
            other += 1
            if other > 1:
                return head
        pos += len(line) + 1
    return head


def _one_line_value(line: bytes) -> bool:
    line = line.lstrip(b"\xef\xbb\xbf").rstrip()
    return (line[:1] == b"{" and line[-1:] == b"}") or (line[:1] == b'"' and line[-1:] == b'"' and len(line) > 1)


def is_binary(head: bytes) -> bool:
    """True when bytes are not text: more than one byte in sixteen a control character (NUL included).

    Compressed, encrypted or random bytes hold about one in nine; text with a
    stray NUL or escape holds far fewer, and is read as text (a damaged line is
    quarantined on its own). A head of under 64 bytes needs one in four.

    >>> is_binary(b'{"a": 1}\\n{"b": "x\\x00y"}\\n'), is_binary(b"src=x\\xfeop=I"), is_binary(bytes(range(256)))
    (False, False, True)
    """
    if not head:
        return False
    return _control_bytes(head) * (16 if len(head) >= 64 else 4) > len(head)


def _control_bytes(head: bytes) -> int:
    return len(head) - len(head.translate(None, _CONTROL))


def binary_message(head: bytes, name: str) -> Message:
    """The one quarantine entry of a binary file (``head``: its first bytes)."""
    kept = head[:_RAW_KEPT].decode("latin-1").encode("unicode_escape").decode("ascii")
    return error_message(
        name,
        0,
        f"binary data, not a text or JSON capture ({len(head):,} bytes looked at, "
        f"{_control_bytes(head):,} of them control bytes)",
        "binary_data",
        raw=kept,
    )
