"""The rule every test of a real part (a database server, Debezium, the Kafka broker, Chromium) follows when
that part is missing: skipped locally with the reason, which says how to install it; failed where CI sets the
part's ``CDCKIT_REQUIRE_*`` variable, so that CI never skips it."""

from __future__ import annotations

import os

import pytest


def require(problem: str | None, variable: str) -> None:
    """Skip (or, with ``variable`` set, fail) the calling test when ``problem`` says what is missing."""
    if problem:
        if os.environ.get(variable):
            pytest.fail(problem)
        pytest.skip(problem)
