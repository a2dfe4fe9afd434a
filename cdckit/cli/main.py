"""``cdckit``'s entry point: parse the arguments, run the command, and turn any error into one line on
stderr and an exit code (:mod:`cdckit.cli.exit_codes`).

>>> main(["read"])  # a usage error: argparse says it on stderr
2
"""

from __future__ import annotations

import os
import sys
import traceback

from .exit_codes import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, explain
from .parser import build_parser
from .text import printable
from .words import cli_words

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (``sys.argv[1:]`` when None); returns the exit code.

    >>> main(["--version"])
    cdckit 0.1.0
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error already printed
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("cdckit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `cdckit read ... | head`: the reader has gone, and that is fine
        _silence_stdout()
        return EXIT_OK
    except Exception as err:  # every error ends as one line on stderr and an exit code
        code, message = explain(err)
        if code == EXIT_INTERNAL:
            inputs = [getattr(args, name, None) for name in ("first", "second", "capture", "snapshot")]
            named = ", ".join(str(i) for i in (getattr(args, "paths", None) or inputs) if i)
            message = f"{message}, while working on {named}" if named else message
        if args.debug:
            traceback.print_exc()
        print(f"cdckit: error: {printable(cli_words(message))}", file=sys.stderr)
        return code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
