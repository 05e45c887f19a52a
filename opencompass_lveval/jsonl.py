"""Reading JSON-lines files of responses with errors that name the file, line and fix."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


def json_objects(path: Path, required: tuple[str, ...],
                 error: type[Exception]) -> Iterator[tuple[str, dict]]:
    """``(where, record)`` for every non-blank line, ``where`` being ``'FILE, line N'``; raises
    ``error`` for a line that is not JSON, not an object, or lacks a ``required`` field."""
    fields = ' and '.join(f'"{name}"' for name in required)
    with open(path, encoding='utf-8') as lines:
        for line_number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f'{path}, line {line_number}'
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise error(f'{where}: not valid JSON ({exc}); rewrite the line as one JSON '
                            f'object with {fields}') from exc
            if not isinstance(record, dict) or any(name not in record for name in required):
                raise error(f'{where}: expected an object with {fields}')
            yield where, record
