"""A folder of JSON records, one file per key (a hex digest), each written atomically: the reply
cache of the API models and the judge's verdicts.

A killed run leaves whole entries only, so an entry that is not of the shape its user writes (it
cannot be read, is no JSON object, lacks the text, holds a field of the wrong type such as
``"prompt_tokens": "abc"``, or is larger than any entry its user keeps) was damaged or made by
something else. It counts as a miss: the request is asked again and the entry rewritten, and the
file and what was wrong are logged and counted (``discarded``). A miss rather than an error
because the server, not the cache, holds the answer: stopping the run would only make the user
delete the file by hand to get the same result.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Optional

from .atomic import write_text

Kind = tuple[str, Callable[[Any], bool]]  # what a field must be, in words, and the test of it

COUNT: Kind = ('a whole number >= -1 (-1: unknown)', lambda v: type(v) is int and v >= -1)
SECONDS: Kind = (
    'a number of seconds >= 0',
    lambda v: type(v) in (int, float) and math.isfinite(v) and v >= 0,
)
OPTIONAL_TEXT: Kind = ('a string or null', lambda v: v is None or isinstance(v, str))

_LOG = logging.getLogger(__name__)


class JsonRecords:
    """Records with a string ``text_field`` and, where present, ``fields`` of the given kinds."""

    def __init__(
        self,
        folder: str | os.PathLike,
        text_field: str,
        fields: Optional[Mapping[str, Kind]] = None,
        max_bytes: Optional[int] = None,
    ) -> None:
        self.folder, self.text_field = Path(folder), text_field
        self.fields, self.max_bytes = dict(fields or {}), max_bytes
        self.discarded = 0  # entries of the wrong shape counted as misses
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f'{key}.json'

    def get(self, key: str) -> Optional[dict]:
        return self.entry(key)[0]

    def entry(self, key: str) -> tuple[Optional[dict], Optional[str]]:
        """(the record, None); (None, None) where there is none; (None, what is wrong, naming the
        file) where a file is there but unusable, for users that report what they replace."""
        path = self.path(key)
        try:
            if self.max_bytes is not None and path.stat().st_size > self.max_bytes:
                return self._discard(path, f'larger than {self.max_bytes} bytes')
            stored = json.loads(path.read_text(encoding='utf-8'))
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError) as exc:
            return self._discard(path, f'cannot be read as JSON ({type(exc).__name__})')
        problem = self._shape_problem(stored)
        return (stored, None) if problem is None else self._discard(path, problem)

    def _shape_problem(self, stored: Any) -> Optional[str]:
        if not isinstance(stored, dict):
            return f'a JSON {type(stored).__name__}, not an object'
        if not isinstance(stored.get(self.text_field), str):
            return f'"{self.text_field}" is {_shown(stored.get(self.text_field))}, not a string'
        for name, (what, good) in self.fields.items():
            if name in stored and not good(stored[name]):
                return f'"{name}" is {_shown(stored[name])}, not {what}'
        return None

    def _discard(self, path: Path, problem: str) -> tuple[None, str]:
        with self._lock:
            self.discarded += 1
        _LOG.warning(
            f'cache entry {path}: {problem}; counted as not cached: asked again and rewritten'
        )
        return None, f'{path}: {problem}'

    def put(self, key: str, record: dict) -> None:
        write_text(self.path(key), json.dumps(record, ensure_ascii=False))


def _shown(value: Any) -> str:
    """A field's value in a message, short whatever its size."""
    if isinstance(value, (dict, list)):
        return 'an object' if isinstance(value, dict) else 'an array'
    if isinstance(value, str) and len(value) > 40:
        return json.dumps(value[:37], ensure_ascii=False)[:-1] + '..."'
    return json.dumps(value, ensure_ascii=False)
