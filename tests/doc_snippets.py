"""Running the Python examples of the README and the documentation pages as a reader would.

The examples begin with the reader's own file, ``captures/orders.jsonl``: each runs in a fresh folder that
holds one (a bundled capture copied there), so "your own file" is a real file the code reads.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import cdckit

#: The reader's own files the examples name, and the bundled capture each is a copy of.
OWN_FILES = {"captures/orders.jsonl": "debezium/shop"}


def python_snippets(markdown: str) -> list[str]:
    """The ```python blocks of a Markdown text."""
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.S)


def run_snippet(code: str, folder: Path, name: str) -> None:
    """Run ``code`` with ``folder`` as the working directory, the reader's own files in it."""
    for own, sample in OWN_FILES.items():
        (folder / own).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cdckit.samples.path(sample), folder / own)
    before = Path.cwd()
    os.chdir(folder)
    try:
        exec(compile(code, name, "exec"), {})
    finally:
        os.chdir(before)
