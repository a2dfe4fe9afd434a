r"""A gzip file decompressed once to a plain file, so it can be cut into ranges like any other.

>>> import gzip, os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "x.jsonl.gz")
>>> _ = open(path, "wb").write(gzip.compress(b'{"a": 1}\n'))
>>> plain = gunzipped(path, folder)
>>> os.path.basename(plain), open(plain, "rb").read()
('x.jsonl', b'{"a": 1}\n')
>>> _ = open(path, "wb").write(gzip.compress(b'{"a": 1}\n')[:-4])  # the length trailer cut off
>>> gunzipped(path, folder) is None, os.listdir(folder)
(True, ['x.jsonl.gz'])
"""

from __future__ import annotations

import os
import shutil

from .streams import BLOCK, damage_of, open_file

__all__ = ["gunzipped"]


def gunzipped(path: str, folder: str) -> str | None:
    """Decompress the gzip file ``path`` into another ``folder`` (same name, ``.gz`` left out, so the name
    still says the container and CSV delimiter); the new file's path,
    or None when the gzip file is damaged (nothing is left behind: the whole read must say where the damage
    is). Raises ``OSError`` when it cannot be read or written."""
    name = os.path.basename(path)
    target = os.path.join(folder, name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name)
    try:
        with open_file(path) as stream, open(target, "wb") as out:
            shutil.copyfileobj(stream, out, 4 * BLOCK)
            damaged = damage_of(stream) is not None
    except BaseException:
        _remove(target)
        raise
    if damaged:
        _remove(target)
        return None
    return target


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
