"""JSON text written the ways producers write it: the tests' source of non-compact, non-orjson text.

Kafka's JsonConverter (Jackson) writes doubles in exponent form outside
[1e-3, 1e7); Python's ``json`` puts spaces after separators and escapes
non-ASCII; decimal encoders write fixed notation with or without trailing
zeros. :func:`written` writes a value in one such style, each number and
string in a form picked by the caller (a random or hypothesis choice).

>>> written({"a": [1.5e7, 2.5]}, lambda options: options[1], (", ", ": "))  # Java's doubles
'{"a": [1.5E7, 2.5]}'
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any


def java_double(x: float) -> str:
    """A double as Java's ``Double.toString`` (and so Jackson) writes it: exponent form outside [1e-3, 1e7)."""
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    mantissa, exponent = f"{x:.16e}".split("e")
    mantissa = mantissa.rstrip("0")
    return f"{mantissa}0E{int(exponent)}" if mantissa.endswith(".") else f"{mantissa}E{int(exponent)}"


def plain_decimal(x: float) -> str:
    """A double in fixed notation without trailing zeros, as ``BigDecimal.toPlainString`` writes a decimal."""
    text = f"{x:.12f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


NUMBER_FORMS: list[Callable[[float], str]] = [
    repr, java_double, lambda x: f"{x:.17g}", lambda x: f"{x:.6f}", lambda x: f"{x:.10f}", lambda x: f"{x:e}",
    plain_decimal,
]
STYLES = [(",", ":"), (", ", ": "), (",", ": "), (" ,", " :"), (",\n  ", ":\t")]


def written(value: Any, pick: Callable[[Sequence], Any], style: tuple[str, str]) -> str:
    """``value`` as JSON text with ``style``'s (comma, colon), each float in a picked form, each string
    with or without ``\\u`` escapes."""
    comma, colon = style
    if isinstance(value, dict):
        items = [f"{written(k, pick, style)}{colon}{written(v, pick, style)}" for k, v in value.items()]
        return "{" + comma.join(items) + "}"
    if isinstance(value, list):
        return "[" + comma.join(written(v, pick, style) for v in value) + "]"
    if isinstance(value, float):
        text = pick(NUMBER_FORMS)(value)
        return text if math.isfinite(float(text)) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=pick([False, False, True]))
    return json.dumps(value)
