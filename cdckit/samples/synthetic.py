"""Large synthetic captures, written fast: for benchmarks and the Spark notebook.

Lines are produced directly in the dialect's format (no canonical events in
between; :mod:`cdckit.samples.lines` makes them), deterministic for a seed,
about 740 bytes per Debezium line and 400 per Canal line. ``disorder`` swaps
neighbouring messages and ``redeliver`` repeats some, so ordering checks
have something to find.

>>> import json
>>> first = json.loads(debezium_line(7))
>>> first["op"], first["source"]["pos"], len(debezium_line(7)) > 600
('c', 1404, True)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from .lines import canal_line, debezium_line

__all__ = ["debezium_line", "canal_line", "LINE_MAKERS", "write_capture"]


LINE_MAKERS: dict[str, Callable[[int], bytes]] = {"debezium": debezium_line, "canal": canal_line}


def write_capture(
    path: str | Path,
    count: int,
    dialect: str = "debezium",
    disorder: float = 0.0,
    redeliver: float = 0.0,
    seed: int = 0,
) -> Path:
    """Write ``count`` changes as JSON Lines; returns the path.

    ``disorder``: the share of messages swapped with the next one (an
    inversion each); ``redeliver``: the share written twice in a row.
    """
    make = LINE_MAKERS[dialect]
    rng = random.Random(seed)
    path = Path(path)
    with open(path, "wb") as out:
        held = None
        for i in range(count):
            line = make(i)
            if held is not None:
                out.write(line + b"\n" + held + b"\n")
                held = None
                continue
            if disorder and rng.random() < disorder and i + 1 < count:
                held = line
                continue
            out.write(line + b"\n")
            if redeliver and rng.random() < redeliver:
                out.write(line + b"\n")
        if held is not None:
            out.write(held + b"\n")
    return path
