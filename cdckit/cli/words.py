"""Library messages as the command line says them: options (``--force``), not Python arguments
(``overwrite=True``).

>>> cli_words("pass dialect= to choose")
'pass --dialect NAME to choose'
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["cli_words"]

#: Library phrases that name Python arguments, and how the command line says them.
_CLI_WORDS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"pass overwrite=True to replace it(?: \(CLI: --force\))?", "pass --force to replace it"),
        (r"\boverwrite=True\b", "--force"),
        (r"pass format= \(one of ([^)]*)\)", r"pass --to (one of \1)"),
        (r"\bformat=", "--to "),
        (r"\blayout=?\s*['\"]?(\w+)['\"]?", r"--layout \1"),
        (r"pass dialect= to choose", "pass --dialect NAME to choose"),
        (r"\bkey= matches nothing", "--key matches nothing"),
        (r"\bdialect=['\"](\w+)['\"]", r"--dialect \1"),
        (r"\berrors=['\"](\w+)['\"]", r"--errors \1"),
        (r"\bpartition_by=['\"](\w+)['\"]", r"--partition-by \1"),
        (r"\(see states\.problems\)", "(counted on stderr)"),
        (r"; see cdckit\.samples\.list\(\)", "; cdckit samples lists them"),
        (r"cdckit\.infer_keys\(events\) (proposes \w+ key columns) \(CLI: ([^)]*)\)", r"\2 \1"),
        (r"keys=\{[^}]*\} on read, [^(]*\(CLI: ([^)]*)\)", r"\1"),
        (r"tables: \[([^\]]*)\]", lambda m: "tables: " + m.group(1).replace("'", "")),
        # any other argument the library names with its option beside it: the option alone
        (r"\b\w+=('[^']*'|\"[^\"]*\"|\S+) \(CLI: ([^)]*)\)", r"\2"),
    )
)


def cli_words(text: str) -> str:
    """A library message as the command line says it: options, not Python arguments.

    >>> cli_words("layout 'csv' does not fit debezium messages; choose one of jsonl, kcat")
    '--layout csv does not fit debezium messages; choose one of jsonl, kcat'
    >>> cli_words("out.parquet exists; pass overwrite=True to replace it (CLI: --force)")
    'out.parquet exists; pass --force to replace it'
    >>> from cdckit.errors import how_to_give_keys
    >>> cli_words(how_to_give_keys(["shop.notes"]))
    'cdckit keys FILE proposes its key columns; give them with --keys shop.notes=COL,...'
    >>> cli_words("read it with key_separator=' | ' (CLI: --key-separator ' | ')")
    "read it with --key-separator ' | '"
    """
    for pattern, replacement in _CLI_WORDS:
        text = pattern.sub(replacement, text)
    return text
