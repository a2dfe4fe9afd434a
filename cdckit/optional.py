"""Optional parts of cdckit and the extra that installs each.

The core (reading, decoding, ordering, replay, export to files) needs only
pandas, pyarrow, orjson, msgspec, duckdb and tqdm. Spark, the views and reading a live Kafka topic are
extras: ``pip install 'cdckit[spark]'``, ``'cdckit[viz]'``, ``'cdckit[kafka]'``, or
``'cdckit[notebooks]'`` for both and Jupyter. A function that needs a missing
extra raises :class:`MissingExtraError` naming it.

>>> from cdckit.optional import require
>>> require("json", "viz").__name__
'json'
>>> try:
...     require("no_such_module_here", "viz", what="the timeline")
... except MissingExtraError as error:
...     print(error)
the timeline needs no_such_module_here, which is not installed: pip install 'cdckit[viz]'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import CdcError

__all__ = ["EXTRAS", "MissingExtraError", "require"]

#: Each extra and the modules it brings (the pins are in pyproject.toml; tests/test_project.py
#: checks the two agree). The other extras (notebooks, dev, bench) are sets of tools no module asks for.
EXTRAS: dict[str, tuple[str, ...]] = {
    "spark": ("pyspark",),
    "viz": ("plotly", "ipywidgets", "anywidget", "itables"),
    "kafka": ("confluent_kafka",),
    "avro": ("fastavro", "google.protobuf", "grpc_tools"),
}


class MissingExtraError(CdcError, ImportError):
    """A function needs a module from an extra that is not installed."""

    def __init__(self, message: str, module: str, extra: str) -> None:
        super().__init__(message)
        self.module = module
        self.extra = extra


def require(module: str, extra: str, what: str | None = None) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtraError` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.split(".")[0]
        if error.name is not None and error.name.split(".")[0] != top:
            raise  # the module is there but one of its own imports failed: show that
        who = what or f"this part of cdckit ({extra})"
        raise MissingExtraError(
            f"{who} needs {top}, which is not installed: pip install 'cdckit[{extra}]'", top, extra
        ) from error
