"""A folder of JSON records, one file per key (a hex digest), each written atomically: the reply
cache of the API models and the judge's verdicts. A killed run leaves whole entries only; an entry
that cannot be read, or lacks the text field its user needs, counts as absent and is rewritten."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from .atomic import write_text


class JsonRecords:
    def __init__(self, folder: str | os.PathLike, text_field: str) -> None:
        self.folder, self.text_field = Path(folder), text_field

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f'{key}.json'

    def get(self, key: str) -> Optional[dict]:
        return self.entry(key)[0]

    def entry(self, key: str) -> tuple[Optional[dict], Optional[str]]:
        """(the record, None); (None, None) where there is none; (None, what is wrong, naming the
        file) where a file is there but unusable, for users that report what they replace."""
        path = self.path(key)
        try:
            stored = json.loads(path.read_text(encoding='utf-8'))
        except FileNotFoundError:
            return None, None
        except (OSError, ValueError) as exc:
            return None, f'{path} cannot be read ({exc})'
        if not isinstance(stored, dict) or not isinstance(stored.get(self.text_field), str):
            return None, f'{path} holds no "{self.text_field}" text'
        return stored, None

    def put(self, key: str, record: dict) -> None:
        write_text(self.path(key), json.dumps(record, ensure_ascii=False))
