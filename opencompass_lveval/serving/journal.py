"""Where each replica of a placement ran and how it ended: ``replicas.jsonl`` in the log folder.

A line per event (``started`` with url, host, GPUs; ``stopped`` with the exit code or ``lost``);
the whole file is rewritten through a temporary name at each event, so a reader never finds a
half-written line.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Optional

from ..files.atomic import write_text


class ReplicaJournal:
    """The events of one placement's replicas; keeps nothing on disk without a folder."""

    def __init__(self, folder: Optional[Path]) -> None:
        self.path = folder / 'replicas.jsonl' if folder else None
        self.records: list[dict] = []
        self.lock = threading.Lock()
        if self.path is not None and self.path.is_file():  # earlier stages of the same run
            lines = self.path.read_text(encoding='utf-8').splitlines()
            self.records = [json.loads(line) for line in lines if line.strip()]

    def note(self, replica: str, event: str, **fields) -> None:
        if self.path is None:
            return
        with self.lock:
            self.records.append({'replica': replica, 'event': event, 'time': time.time(), **fields})
            write_text(self.path, ''.join(json.dumps(r) + '\n' for r in self.records))
