"""The reply store: one JSON file per request key, each written once, first writer wins.

It is the durable record of what a stage has done: a restarted run skips every key found here,
so nothing answered is paid for twice. A reply is written to a temporary file and then linked to
its name with ``os.link``, which fails where the name exists: two writers of one key (a request
asked again after its replica seemed lost, which then answered after all) leave the first reply,
whole, and the second is dropped. An entry of the wrong shape (``cache.py``) counts as absent and
is set aside (renamed ``*.damaged``) so that the request is asked again and its reply linked.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Optional

from ..files.cache import JsonRecords
from ..models.api_client import CACHED_SHAPE


class ReplyStore:
    """Replies of one model's requests under ``folder`` (``{key[:2]}/{key}.json``)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.records = JsonRecords(self.folder, 'text', fields=CACHED_SHAPE)

    def get(self, key: str) -> Optional[dict]:
        return self.records.get(key)

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def put_once(self, key: str, record: dict) -> bool:
        """Write ``record`` under ``key`` unless a reply is there: True where this one was kept."""
        path = self.records.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        stored, problem = self.records.entry(key)
        if stored is not None:
            return False
        if problem is not None:  # damaged: kept aside for whoever wants to see it, then replaced
            with suppress(FileNotFoundError):
                os.replace(path, path.with_suffix('.damaged'))
        descriptor, temporary = tempfile.mkstemp(prefix=f'.{key}.', suffix='.part', dir=path.parent)
        try:
            with os.fdopen(descriptor, 'w', encoding='utf-8') as stream:
                stream.write(json.dumps(record, ensure_ascii=False))
                stream.flush()
                os.fsync(stream.fileno())
            os.chmod(temporary, 0o644)
            os.link(temporary, path)
            return True
        except FileExistsError:
            return False
        finally:
            os.unlink(temporary)
