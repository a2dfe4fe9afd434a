"""The exit codes of ``cdckit`` and how an error becomes one (with its one-line message).

>>> explain(UsageError("--op upsert: unknown op"))
(2, '--op upsert: unknown op (see cdckit --help)')
>>> explain(FileExistsError("out.parquet exists; pass --force to replace it"))[0] == EXIT_OUTPUT_EXISTS
True
"""

from __future__ import annotations

from ..dialects import registry
from ..errors import AmbiguousDialectError, CdcError, DecodeError, SparkSetupError, UnknownDialectError

__all__ = [
    "EXIT_OK",
    "EXIT_QUARANTINED",
    "EXIT_FOUND",
    "EXIT_USAGE",
    "EXIT_INPUT",
    "EXIT_OUTPUT_EXISTS",
    "EXIT_NO_JAVA",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_CODES",
    "UsageError",
    "explain",
]

EXIT_OK = 0
EXIT_QUARANTINED = 1
#: The same code: the command finished and found something to look at.
EXIT_FOUND = EXIT_QUARANTINED
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_OUTPUT_EXISTS = 4
EXIT_NO_JAVA = 5
EXIT_INTERNAL = 70
#: Ctrl-C (the shell's own code for SIGINT; not listed in ``--help``).
EXIT_INTERRUPTED = 130

#: Every exit code and what it means (printed by ``cdckit --help``).
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FOUND: "finished, but found something to look at: quarantined messages (every command that reads),\n"
    "     ordering findings of severity warning or error (order), differences (compare, reconcile)",
    EXIT_USAGE: "usage error (bad option or argument: format, suffix, --op, --key, --since/--until, --table)",
    EXIT_INPUT: "input problem: missing or unreadable file, unknown dialect name, no dialect detected\n"
    "     (detect), undecodable message with --errors raise, output that cannot be written, a table without\n"
    "     key columns where rows need an identity (scd2)",
    EXIT_OUTPUT_EXISTS: "the output exists (pass --force to replace it)",
    EXIT_NO_JAVA: "--engine spark, but Spark cannot start (no Java 17+); the message says what to install",
    EXIT_INTERNAL: "internal error (a bug: --debug shows the traceback)",
}


class UsageError(Exception):
    """A bad combination of options, found after argparse (exit code 2)."""


def explain(err: Exception) -> tuple[int, str]:
    """The exit code and one-line message of an error a command raised.

    >>> explain(RuntimeError("oops"))
    (70, 'internal error: RuntimeError: oops (--debug shows the traceback)')
    """
    if isinstance(err, UsageError):
        return EXIT_USAGE, f"{err} (see cdckit --help)"
    if isinstance(err, FileExistsError):
        return EXIT_OUTPUT_EXISTS, str(err)
    if isinstance(err, SparkSetupError):
        return EXIT_NO_JAVA, str(err)
    if isinstance(err, DecodeError):
        return EXIT_INPUT, f"cannot decode {err.source}, message {err.offset}: {err.reason}"
    if isinstance(err, UnknownDialectError):
        message = str(err)
        if "known dialects" not in message and "tried:" not in message:
            message += f" (known dialects: {', '.join(registry.names())})"
        return EXIT_INPUT, message
    if isinstance(err, AmbiguousDialectError):
        return EXIT_INPUT, str(err)
    if isinstance(err, (CdcError, OSError)):
        return EXIT_INPUT, str(err)
    return EXIT_INTERNAL, f"internal error: {type(err).__name__}: {err} (--debug shows the traceback)"
