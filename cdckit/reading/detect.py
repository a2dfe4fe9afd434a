"""Detection: which dialect is this, message by message, and why.

Every registered dialect scores each message (``Dialect.detect``); a source's
dialect is the one with the highest total over the messages looked at.

>>> import cdckit
>>> d = cdckit.detect('{"database": "shop", "table": "t", "type": "insert", "ts": 1, "data": {"id": 1}}')
>>> d.dialect, d.evidence
('maxwell', ('data is an object', 'database', 'table', 'ts', 'type=insert'))
"""

from __future__ import annotations

import html
import itertools
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..dialects import registry
from ..dialects.base import Dialect, Match
from ..errors import AmbiguousDialectError, UnknownDialectError
from ..io import Message, iter_sources
from ..io.console import guessed_separator
from ..io.schema_book import book_for, unframed
from ..python_columns import object_columns

__all__ = [
    "Detection",
    "detect",
    "score_message",
    "choose",
    "choose_for_read",
    "FLOOR",
    "LOW",
    "CLAIM",
    "DEFERRED",
    "family_hint",
]

#: How many messages of each source ``detect`` and ``read`` look at.
DEFAULT_SAMPLE = 50
#: Below this mean score no dialect is taken: the input is "unknown" (its best guess is named).
FLOOR = 0.3
#: Below this mean score a verdict is flagged as low-confidence (the CLI and the report say so).
LOW = 0.6
#: A variant (a subclass of a dialect, e.g. Arcion of Debezium) this sure of a message claims it from the
#: dialect it extends: the most specific dialect wins (:func:`score_message`).
CLAIM = 0.9
#: The most a dialect keeps of its score on a message one of its variants claims (it stays a runner-up).
DEFERRED = 0.5


@dataclass(frozen=True)
class Detection:
    """The verdict on a source: dialect, confidence, evidence and runner-up.

    ``messages`` has one row per message looked at: ``source``, ``offset``,
    ``dialect``, ``confidence``, ``evidence``, ``runner_up``.
    ``scores`` maps every dialect that matched anything to its mean score.
    """

    dialect: str
    confidence: float
    evidence: tuple[str, ...]
    runner_up: str | None
    runner_up_confidence: float | None
    messages: pd.DataFrame = field(repr=False, compare=False)
    scores: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    @property
    def low_confidence(self) -> bool:
        """True when the confidence is below :data:`LOW`: the verdict is a guess worth checking."""
        return self.confidence < LOW

    def __str__(self) -> str:
        text = f"{self.dialect} (confidence {self.confidence:.2f}"
        text += ", low" if self.low_confidence else ""
        text += f"; evidence: {', '.join(self.evidence)})"
        if self.runner_up:
            text += f"; runner-up {self.runner_up} ({self.runner_up_confidence:.2f})"
        return text

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in (
                ("dialect", self.dialect),
                (
                    "confidence",
                    f"{self.confidence:.2f}" + (" (low: check the evidence)" if self.low_confidence else ""),
                ),
                ("evidence", ", ".join(self.evidence)),
                ("runner-up", f"{self.runner_up} ({self.runner_up_confidence:.2f})" if self.runner_up else "none"),
                ("messages looked at", str(len(self.messages))),
            )
        )
        return f"<table>{rows}</table>"


def score_message(value: Any, dialects: list[Dialect]) -> list[tuple[str, Match]]:
    """Every dialect's match on one message value, best first.

    The most specific dialect wins: a dialect knows nothing of its variants
    (its subclasses), so when a variant among ``dialects`` scores at least
    :data:`CLAIM` on the message, the dialect it extends keeps at most
    :data:`DEFERRED` of its own score there.

    >>> from cdckit.dialects import registry
    >>> value = {"op": "c", "after": {"id": "1"}, "source": {"connector": "MYSQL", "db": "d", "table": "t"}}
    >>> [(name, match.score) for name, match in score_message(value, registry.all_dialects())]
    [('arcion', 0.95), ('debezium', 0.5)]
    """
    found = []
    for dialect in dialects:
        try:
            match = dialect.detect(value)
        except Exception:  # a detector must never stop detection
            match = None
        if match is not None and match.score > 0:
            found.append((dialect, match))
    claimants = [type(dialect) for dialect, match in found if match.score >= CLAIM]
    ranked = []
    for dialect, match in found:
        if match.score > DEFERRED and any(
            issubclass(variant, type(dialect)) and variant is not type(dialect) for variant in claimants
        ):
            match = Match(DEFERRED, match.evidence)
        ranked.append((dialect.name, match))
    ranked.sort(key=lambda item: -item[1].score)
    return ranked


def choose(messages: Iterable[Message], dialects: list[Dialect] | None = None, *, ties: str = "raise") -> Detection:
    """The dialect that best explains ``messages`` (messages with read errors are ignored).

    Raises :class:`UnknownDialectError` when no dialect matches any message,
    when the messages are binary, or when the best mean score is below
    :data:`FLOOR` (the error names the best guess and the runner-up). Two
    dialects that tie raise :class:`AmbiguousDialectError`, or with
    ``ties="first"`` the one that matched the earliest message wins (``read``
    decodes each message with its own dialect anyway).
    """
    dialects = dialects if dialects is not None else registry.all_dialects()
    totals: dict[str, float] = defaultdict(float)
    evidence: dict[str, Counter] = defaultdict(Counter)
    first_seen: dict[str, int] = {}
    layouts: Counter[str] = Counter()
    rows = []
    looked = 0
    first_shape = None
    first_raw: Any = None
    first_error = None
    for msg in messages:
        if msg.error is not None:
            first_error = first_error or msg
            continue
        looked += 1
        matches = score_message(msg.value, dialects)
        if msg.layout is not None:  # the layout the message was unwrapped from (a console-consumer line)
            layouts[msg.layout] += 1
        if first_shape is None:
            first_shape, first_raw = _shape(msg.value), msg.raw
        for name, match in matches:
            totals[name] += match.score
            evidence[name].update(match.evidence)
            first_seen.setdefault(name, looked)
        best = matches[0] if matches else None
        second = matches[1] if len(matches) > 1 else None
        rows.append(
            {
                "source": msg.source,
                "offset": msg.offset,
                "dialect": best[0] if best else None,
                "confidence": best[1].score if best else 0.0,
                "evidence": ", ".join(best[1].evidence) if best else "",
                "runner_up": second[0] if second else None,
            }
        )
    tried = tuple(d.name for d in dialects)
    if first_error is not None and first_error.code == "binary_data" and not looked:
        raise UnknownDialectError(f"binary input, not a capture: {first_error.error}", tried)
    if not totals:
        what = f"{looked} message(s)" if looked else "no readable message"
        if not looked and first_error is not None:
            what += f"; the first: {first_error.error}"
        shape = f"; the first looks like {first_shape}" if first_shape else ""
        brief = f"no dialect recognises this input ({what}{shape}){_separator_hint(first_raw)}"
        raise UnknownDialectError(
            f"{brief}; tried: {', '.join(tried)}",
            tried,
            brief=f"{brief}; the dialects tried are in the report's detection",
        )
    ranked = sorted(totals.items(), key=lambda item: (-item[1], first_seen[item[0]]))
    winner, total = ranked[0]
    runner, runner_total = ranked[1] if len(ranked) > 1 else (None, None)
    if ties == "raise" and runner is not None and runner_total is not None and abs(total - runner_total) < 1e-9:
        raise AmbiguousDialectError(
            f"the input fits {winner} and {runner} equally well; pass dialect= to choose", (winner, runner)
        )
    confidence = round(total / looked, 4)
    runner_confidence = round(runner_total / looked, 4) if runner_total is not None else None
    if confidence < FLOOR:
        runner_text = f"; runner-up {runner} ({runner_confidence:.2f})" if runner else ""
        raise UnknownDialectError(
            f"unknown: no dialect is sure of this input; the best guess, {winner}, scores {confidence:.2f} over "
            f"{looked} message(s), below the floor of {FLOOR:.2f}{runner_text}",
            tried,
            best=(winner, confidence),
            runner_up=(runner, runner_confidence) if runner and runner_confidence is not None else None,
        )
    return Detection(
        dialect=winner,
        confidence=confidence,
        evidence=tuple(sorted(name for name, _ in evidence[winner].most_common(8)))
        + tuple(layout for layout, _ in layouts.most_common(1)),
        runner_up=runner,
        runner_up_confidence=runner_confidence,
        messages=object_columns(
            pd.DataFrame(rows, columns=["source", "offset", "dialect", "confidence", "evidence", "runner_up"])
        ),
        scores={name: round(t / looked, 4) for name, t in ranked},
    )


def choose_for_read(messages: Iterable[Message], dialects: list[Dialect]) -> Detection | UnknownDialectError:
    """How a read picks a source's dialect: :func:`choose` with ties to the first dialect met, never raising.

    Returns the :class:`Detection`, or the :class:`UnknownDialectError` that
    says why there is none (a failure of detection itself included), for the
    read to detect each message on its own.
    """
    try:
        return choose(messages, dialects, ties="first")
    except UnknownDialectError as err:
        return err
    except Exception as err:  # a detection bug must not stop a read
        return UnknownDialectError(f"detection failed: {type(err).__name__}: {err}")


def detect(
    source: Any,
    sample: int = DEFAULT_SAMPLE,
    container: str | None = None,
    key_separator: str | None = None,
    *,
    schema_registry: str | None = None,
    schema_registry_config: dict[str, Any] | None = None,
    schemas: str | os.PathLike[str] | None = None,
) -> Detection:
    """Detect the dialect of a source from up to ``sample`` messages of each file.

    ``source`` is anything :func:`cdckit.read` accepts; ``key_separator`` is that of
    ``kafka-console-consumer`` lines (:func:`cdckit.read`), whose layout the evidence names; framed records
    (Avro, Protobuf, JSON Schema) are decoded with the schemas given as :func:`cdckit.read` takes them, and
    the evidence names their format, schema id, subject and record.

    >>> import cdckit
    >>> cdckit.detect(cdckit.samples.path("canal")).dialect
    'canal'
    """
    book = book_for(source, schema_registry, schema_registry_config, schemas)
    picked: list[Message] = []
    for _, messages in iter_sources(source, container=container, key_separator=key_separator):
        picked.extend(unframed(m, book) for m in itertools.islice(messages, sample))
    return choose(picked)


def _separator_hint(raw: Any) -> str:
    """What to pass when ``raw`` (a message's text) reads as a console-consumer line printed with a key
    separator other than the tab; empty otherwise.

    >>> _separator_hint('7^{"op": "c"}')
    "; it reads as a key, '^' and a JSON value: pass key_separator='^' (CLI: --key-separator '^')"
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    found = guessed_separator(bytes(raw)) if isinstance(raw, (bytes, bytearray)) else None
    if found is None:
        return ""
    option = f"key_separator={found!r} (CLI: --key-separator {found!r})"
    return f"; it reads as a key, {found!r} and a JSON value: pass {option}"


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        keys = list(value)[:6]
        more = ", ..." if len(value) > 6 else ""
        return "an object with keys " + ", ".join(map(str, keys)) + more  # a parsed dict's keys may be anything
    if isinstance(value, str):
        return f"text {value[:40]!r}"
    return f"a JSON {type(value).__name__}"


def family_hint(value: Any, dialect: Dialect, dialects: list[Dialect]) -> str:
    """Which other dialect ``value`` looks like, unless it is ``dialect``'s own family (a subclass)."""
    matches = score_message(value, dialects)
    if not matches or matches[0][0] == dialect.name:
        return ""
    best = registry.get(matches[0][0])
    if issubclass(best, type(dialect)) or isinstance(dialect, best):
        return ""
    return f" (it looks like a {best.name} message)"
