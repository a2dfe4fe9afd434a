"""The ``cdckit`` command line: detect, read, convert, report, order, state, scd2, schema, compare,
reconcile, samples.

Every command is a small function over the library (``cdckit.detect``,
``cdckit.read``, :mod:`cdckit.analysis.filters`, :mod:`cdckit.export`,
:mod:`cdckit.viz.report`, ``cdckit.order_report``, ``cdckit.materialize``...);
this package only parses arguments, checks them all before any decoding
starts, shows progress and turns errors into one-line messages and exit
codes (see :data:`EXIT_CODES`). Commands that read take several PATH
arguments (one capture) and the filters ``--table``, ``--op``, ``--key``,
``--since`` and ``--until`` (the rule is :func:`cdckit.analysis.filters.select`).
``main`` takes the arguments as a list, so it can be called in-process:

>>> main(["samples", "--path", "canal/shop"])  # doctest: +ELLIPSIS
/.../samples/data/canal/shop.jsonl
0

Its modules, one job each:

- :mod:`~cdckit.cli.main`: ``main``, errors to exit codes;
  :mod:`~cdckit.cli.exit_codes`: the codes and which error gets which;
- :mod:`~cdckit.cli.parser` and :mod:`~cdckit.cli.help_texts`: the arguments and the help;
- :mod:`~cdckit.cli.options` and :mod:`~cdckit.cli.formats`: checks of options before decoding, the
  output format (``--to`` or the suffix);
- :mod:`~cdckit.cli.reading`: the chunked read, joined into one :class:`~cdckit.capture.Capture`;
- :mod:`~cdckit.cli.progress`, :mod:`~cdckit.cli.summary`, :mod:`~cdckit.cli.text`,
  :mod:`~cdckit.cli.words`: what is shown on the terminal, and in which words;
- the commands: :mod:`~cdckit.cli.read_commands` (detect, read, samples),
  :mod:`~cdckit.cli.write_commands` (convert, report), :mod:`~cdckit.cli.analysis_commands` (order,
  schema), :mod:`~cdckit.cli.state_commands` (state, scd2), :mod:`~cdckit.cli.compare_commands`
  (compare, reconcile).

Spark is imported only by ``convert --engine spark`` (:mod:`cdckit.spark.convert`).
"""

from __future__ import annotations

from ..reading.progress import ReadProgress
from .exit_codes import EXIT_CODES
from .main import main
from .parser import build_parser
from .words import cli_words

# each exit code is named in cdckit.cli.exit_codes; EXIT_CODES maps them to their meaning
__all__ = ["main", "build_parser", "EXIT_CODES", "ReadProgress", "cli_words"]
