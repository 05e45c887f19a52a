"""LongBench v2's ``data.json`` (the Hugging Face dataset THUDM/LongBench-v2, one JSON array of
503 records, 465 MB) read once, record by record, keeping only the fields asked for.

The file is parsed a slice at a time (``files/json_stream.py``): the text of one record is parsed
and dropped before the next is read, so the peak is the records kept plus one slice, not the
file's bytes, text and objects at once as with ``json.load``. A scorer that needs no contexts asks
for ``SCORING_FIELDS`` and holds a few kilobytes. JSON lines (one record a line) are read too.
Every record is checked as it is read; an error names the file, the record's number and ``_id``,
the field and what it must be.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Optional

from ..files.errors import LongBenchV2DataError
from ..files.json_stream import JSONStreamError, json_objects_of
from .tasks import CHOICES, DIFFICULTIES, LENGTHS, RECORD_FIELDS

# What a table needs of a record: no context, question or choices.
SCORING_FIELDS = ('_id', 'difficulty', 'length', 'answer')
RETRIEVAL_FIELD = 'retrieved_context'
_ALLOWED = {'difficulty': DIFFICULTIES, 'length': LENGTHS, 'answer': CHOICES}


def record_problem(record: Mapping, fields: Iterable[str]) -> Optional[str]:
    """What is wrong with ``record``'s ``fields``, or None."""
    for name in fields:
        if name not in record:
            return f'has no "{name}"'
        value = record[name]
        if name == RETRIEVAL_FIELD:
            problem = _chunks_problem(value)
            if problem:
                return problem
        elif not isinstance(value, str):
            return f'"{name}" must be a string, found {type(value).__name__}'
        elif name in _ALLOWED and value not in _ALLOWED[name]:
            return f'"{name}" must be one of {", ".join(_ALLOWED[name])}, found {value!r}'
    return None


def _chunks_problem(chunks) -> Optional[str]:
    if not isinstance(chunks, list) or not chunks:
        return f'"{RETRIEVAL_FIELD}" must be a non-empty list of chunks'
    for number, chunk in enumerate(chunks, 1):
        if not (
            isinstance(chunk, dict)
            and isinstance(chunk.get('c_idx'), int)
            and isinstance(chunk.get('content'), str)
        ):
            return (
                f'"{RETRIEVAL_FIELD}" chunk {number} must be an object with an integer '
                '"c_idx" and a string "content"'
            )
    return None


def iter_records(
    path: str | Path, fields: Iterable[str] = RECORD_FIELDS, retrieval: bool = False
) -> Iterator[dict]:
    """Each record of ``path`` with only ``fields`` (and ``retrieved_context`` when
    ``retrieval``), in file order, checked."""
    wanted = tuple(fields) + ((RETRIEVAL_FIELD,) if retrieval else ())
    number = 0
    try:
        for number, record in enumerate(json_objects_of(path), 1):
            problem = record_problem(record, wanted)
            if problem:
                name = record.get('_id')
                shown = f' (_id {name!r})' if isinstance(name, str) else ''
                raise LongBenchV2DataError(
                    f'{path}, record {number}{shown}: {problem}; the official data.json '
                    '(THUDM/LongBench-v2) has every field; see docs/longbench_v2.md'
                )
            yield {name: record[name] for name in wanted}
    except JSONStreamError as exc:
        raise LongBenchV2DataError(
            f'{path}: {exc} (after record {number}); download data.json again '
            '(docs/longbench_v2.md)'
        ) from None
    except OSError as exc:
        raise LongBenchV2DataError(f'{path} cannot be read ({exc.strerror})') from exc
    except UnicodeDecodeError as exc:
        raise LongBenchV2DataError(
            f'{path}: not UTF-8 text after record {number} ({exc.reason}); download data.json '
            'again (docs/longbench_v2.md)'
        ) from None


def load_records(
    path: str | Path, fields: Iterable[str] = RECORD_FIELDS, retrieval: bool = False
) -> list[dict]:
    """``iter_records`` as a list; an error where the file holds no record or repeats an
    ``_id``."""
    records, seen = [], set()
    for record in iter_records(path, fields, retrieval):
        name = record.get('_id')
        if name is not None and name in seen:
            raise LongBenchV2DataError(f'{path}: _id {name!r} occurs twice')
        seen.add(name)
        records.append(record)
    if not records:
        raise LongBenchV2DataError(f'{path} holds no records')
    return records
