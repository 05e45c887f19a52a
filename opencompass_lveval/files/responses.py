"""Model responses as the text the metrics read, whatever a prediction file holds.

A prediction should be a string. Anything else is counted (``non_string_predictions`` in the
diagnostics) and read as text only where that is unambiguous: a number as its JSON text (``42``),
a list holding exactly one string as that string (``["John Smith"]``). Everything else (None from a
failed generation, true/false, objects, lists of several items) is read as an empty answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def response_text(value: Any) -> str:
    """The text a metric reads for one prediction (see the module docstring)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        return value[0]
    return ''


def response_texts(values: Iterable[Any]) -> tuple[list[str], int]:
    """(texts, how many values were not strings)."""
    values = list(values)
    return [response_text(v) for v in values], sum(not isinstance(v, str) for v in values)
