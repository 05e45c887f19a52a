"""Where each replica ran, and how each start, exit, restart and stop went: ``replicas.jsonl``
in the model's log folder, for every placement.

A line per event (``launched``, ``started`` with url, host and GPUs, ``ready``, ``exited``,
``restarting`` with the attempt and its wait, ``gave up``, ``stopped`` with the exit code or
``lost``); the whole file is rewritten through a temporary name at each event, so a reader never
finds a half-written line. An earlier stage's file is read line by line: a line that is not a
JSON object (a file cut by a full disk, or edited) is named and skipped, never fatal.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Optional

from ..files.atomic import write_text
from ..files.jsonl import journal_records

_LOG = logging.getLogger(__name__)


class ReplicaJournal:
    """The events of one model's replicas; keeps nothing on disk without a folder."""

    def __init__(self, folder: Optional[Path]) -> None:
        self.path = Path(folder) / 'replicas.jsonl' if folder else None
        self.records: list[dict] = []
        self.lock = threading.Lock()
        if self.path is not None and self.path.is_file():  # earlier stages of the same run
            self.records, skipped = journal_records(self.path)
            for why in skipped:
                _LOG.warning(f'{why}; skipped')

    def note(self, replica: str, event: str, **fields) -> None:
        """One event; a journal that cannot be written is said once, and the stage goes on
        (the replies, not the journal, are the record of what is done)."""
        if self.path is None:
            return
        with self.lock:
            self.records.append({'replica': replica, 'event': event, 'time': time.time(), **fields})
            try:
                write_text(self.path, ''.join(json.dumps(r) + '\n' for r in self.records))
            except OSError as exc:
                _LOG.warning(f'{self.path} cannot be written ({exc}); no more events kept there')
                self.path = None
