"""The reply store: one JSON file per request key, each written once, first writer wins.

It is the durable record of what a stage has done: a restarted run skips every key found here,
so nothing answered is paid for twice. Each reply carries what binds it to its request (its key,
the prompt ids' digest, the served model's name, the request's ``max_tokens`` and prompt
tokens), and is used only where all of them are the request's and its counts are within its
budget (``read``): a reply copied over another key's file, another model's, or one of more
tokens than asked counts as absent, is set aside (renamed ``*.damaged``) when the request's
answer is written, and the request is asked again. An entry of the wrong shape (``cache.py``)
alike.

A reply is written to a temporary file and then linked to its name with ``os.link``, which fails
where the name exists: two writers of one key (a request asked again after its replica seemed
lost, which then answered after all) leave the first reply, whole. Replacing a damaged entry is
done under a lock on the store (``fcntl.flock``, across processes), re-reading the entry there:
of two writers that both found it damaged, the second finds the first's good reply and keeps it.
A store that cannot be written (a full or read-only file system) raises ``ReplyStoreError``
naming the error and the path: the stage stops at once rather than asking replies it cannot
keep.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from contextlib import suppress
from pathlib import Path
from typing import Optional

from ..files.cache import COUNT, OPTIONAL_TEXT, SECONDS, JsonRecords

TEXT: tuple = ('a string', lambda v: isinstance(v, str))
REPLY_SHAPE = {
    'key': TEXT,
    'prompt_digest': TEXT,
    'model': TEXT,
    'max_tokens': COUNT,
    'prompt_tokens': COUNT,
    'completion_tokens': COUNT,
    'latency_s': SECONDS,
    'finish_reason': OPTIONAL_TEXT,
}
BOUND = ('key', 'prompt_digest', 'model', 'max_tokens', 'prompt_tokens')
MAX_ENTRY_BYTES = 16 * 2**20 + 4096  # a reply is read up to 16 MiB by default


class ReplyStoreError(RuntimeError):
    """The reply store cannot be written or read: the stage stops, naming the path."""


def problem_with(record: dict, expected: dict) -> Optional[str]:
    """Why a stored reply is not the answer of the request ``expected`` describes, or None."""
    for name in BOUND:
        if record.get(name) != expected[name]:
            return f'its {name} is {str(record.get(name))[:70]!r}, not {str(expected[name])[:70]!r}'
    if record.get('completion_tokens', 0) > expected['max_tokens']:
        return (
            f'its {record["completion_tokens"]} completion tokens exceed max_tokens='
            f'{expected["max_tokens"]}'
        )
    return None


class ReplyStore:
    """Replies of one engine's requests under ``folder`` (``{key[:2]}/{key}.json``)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.records = JsonRecords(
            self.folder, 'text', fields=REPLY_SHAPE, max_bytes=MAX_ENTRY_BYTES
        )

    def read(self, expected: dict) -> tuple[Optional[dict], Optional[str]]:
        """(the reply, None) where the request's reply is stored; (None, None) where none is;
        (None, why) where the entry there is not its answer (damaged, or another's)."""
        stored, problem = self.records.entry(expected['key'])
        if stored is None:
            return None, problem
        mismatch = problem_with(stored, expected)
        if mismatch is not None:
            return None, f'{self.records.path(expected["key"])}: {mismatch}'
        return stored, None

    def answered(self, expected: dict) -> bool:
        return self.read(expected)[0] is not None

    def put_once(self, record: dict) -> bool:
        """Write ``record`` (a reply bound to its request) unless its answer is there: True
        where this one was kept; ``ReplyStoreError`` where the store cannot be written."""
        key = record['key']
        path = self.records.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self._link(path, record):
                return True
            if self.answered(record):
                return False
            with self._locked():  # damaged or another's: replaced by one writer only
                if self.answered(record):
                    return False
                with suppress(FileNotFoundError):
                    os.replace(path, path.with_suffix('.damaged'))
                return self._link(path, record)
        except OSError as exc:
            raise ReplyStoreError(
                f'the reply store cannot be written ({exc.strerror or exc}: {exc.filename or path}): '
                'free space on that file system or make it writable, then run again with -r '
                '(what was stored is kept)'
            ) from exc

    def _link(self, path: Path, record: dict) -> bool:
        """The record linked to ``path`` unless a file is there: True where it was. The
        temporary file's name is this process's and thread's own (no two writers share one)."""
        temporary = path.parent / f'.{path.stem}.{os.getpid()}.{threading.get_ident()}.part'
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            try:
                os.write(descriptor, json.dumps(record, ensure_ascii=False).encode('utf-8'))
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            os.link(temporary, path)
            return True
        except FileExistsError:
            return False
        finally:
            with suppress(FileNotFoundError):
                os.unlink(temporary)

    def _locked(self):
        return _FileLock(self.folder / '.replace.lock')


class _FileLock:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        self.stream = open(self.path, 'a')  # noqa: SIM115 (held for the block)
        fcntl.flock(self.stream.fileno(), fcntl.LOCK_EX)

    def __exit__(self, *exc) -> None:
        fcntl.flock(self.stream.fileno(), fcntl.LOCK_UN)
        self.stream.close()
