"""Reading JSON-lines files of responses with errors that name the file, line and fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def json_objects(
    path: Path, required: tuple[str, ...], error: type[Exception]
) -> Iterator[tuple[str, dict]]:
    """``(where, record)`` for every non-blank line, ``where`` being ``'FILE, line N'``; raises
    ``error`` for a line that is not UTF-8, not JSON, not an object, or lacks a ``required``
    field."""
    fields = ' and '.join(f'"{name}"' for name in required)
    try:
        lines = open(path, 'rb')  # noqa: SIM115 (only the open may fail here; closed by `with`)
    except OSError as exc:
        raise error(f'{path} cannot be read ({exc.strerror})') from exc
    with lines:
        for line_number, raw in enumerate(lines, 1):
            where = f'{path}, line {line_number}'
            try:
                line = raw.decode('utf-8')
            except UnicodeDecodeError as exc:
                raise error(
                    f'{where}: not UTF-8 text ({exc.reason} at byte {exc.start} of the '
                    'line); save the file as UTF-8 (e.g. `iconv -f GBK -t UTF-8`)'
                ) from exc
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise error(
                    f'{where}: not valid JSON ({exc}); rewrite the line as one JSON '
                    f'object with {fields}'
                ) from exc
            if not isinstance(record, dict) or any(name not in record for name in required):
                raise error(f'{where}: expected an object with {fields}')
            yield where, record


class NotJSON:
    """What ``strict_loads`` puts where a file says ``NaN``, ``Infinity`` or ``-Infinity``
    (Python's json reads them; JSON has no such values): a field check then names the field."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f'{self.text} (not JSON: JSON has no NaN or Infinity)'


def strict_loads(text: str):
    """``json.loads`` that keeps ``NaN`` and ``Infinity`` out of every number: each becomes a
    ``NotJSON``, which no field check accepts."""
    return json.loads(text, parse_constant=NotJSON)


def not_json_field(record: dict) -> str | None:
    """The first field of an object holding a ``NotJSON`` at any depth, else None."""

    def holds(value) -> bool:
        if isinstance(value, NotJSON):
            return True
        if isinstance(value, list):
            return any(holds(v) for v in value)
        if isinstance(value, dict):
            return any(holds(v) for v in value.values())
        return False

    return next((name for name, value in record.items() if holds(value)), None)


def is_strings(value, non_empty: bool = False) -> bool:
    """A list of strings (non-empty when asked)."""
    return (
        isinstance(value, list)
        and (bool(value) or not non_empty)
        and all(isinstance(v, str) for v in value)
    )


def journal_records(path: Path) -> tuple[list[dict], list[str]]:
    """The records of a journal the package keeps (``logs/ray_runner.jsonl`` and the like), one
    JSON object a line, read line by line, and ``'FILE, line N: why'`` for each line left out:
    one that is not UTF-8, not JSON (a line cut by a crash) or not an object. A journal only
    informs what comes next (nodes to avoid, attempts made), so a bad line is named and skipped
    rather than stopping a run; a missing file has no records."""
    records, skipped = [], []
    try:
        stream = open(path, 'rb')  # noqa: SIM115 (only the open may fail here; closed by `with`)
    except FileNotFoundError:
        return records, skipped
    with stream:
        for line_number, raw in enumerate(stream, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode('utf-8'))
            except (UnicodeDecodeError, ValueError, RecursionError) as exc:
                skipped.append(f'{path}, line {line_number}: not a JSON line ({exc})')
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                found = type(record).__name__
                skipped.append(f'{path}, line {line_number}: a JSON {found}, not an object')
    return records, skipped
