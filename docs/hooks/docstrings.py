r"""A Griffe extension (mkdocstrings, ``extensions:`` in mkdocs.yml): cdckit's reST docstrings as Markdown.

cdckit's docstrings are short reST: ``code``, :func:`roles` and doctest examples (``>>>`` lines and their
output). Markdown would read ``>>>`` as nested quotes and ``x["a"]["b"]`` as links; this turns every run of
doctest lines into a fenced ``pycon`` block, every role into code and every ``::`` literal block into a
fenced block, so the API reference shows the docstrings as written.

>>> markdown_of("Read.\n\n>>> 1 + 1\n2\n\nMore ``x`` and :func:`~cdckit.read`.").split("\n")
['Read.', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'More `x` and `cdckit.read`.']
"""

from __future__ import annotations

import re
from typing import Any

import griffe


def markdown_of(text: str) -> str:
    """The Markdown of one reST docstring (see the module's docstring)."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            out += [indent + "```pycon", *(indent + b for b in block), indent + "```"]
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            out.append(line[:-1] if stripped != "::" else "")
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(indent + " ")):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            inner = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
            out += ["", indent + "```text", *(indent + b[inner:] for b in block), indent + "```", ""]
            continue
        out.append(re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", line).replace("``", "`"))
        i += 1
    return "\n".join(out)


class ReSTDocstrings(griffe.Extension):
    """Rewrites each docstring once the object tree is built."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
