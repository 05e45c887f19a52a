"""``lveval score --benchmark longbench_v2 RESULTS_DIR``: the folder of pred.py's result files
scored as ``result.py`` scores it, its table written to ``result.txt`` beside the folder (where
result.py, run from the folder's parent, writes it).

Rows, one per ``*.jsonl`` / ``*.json`` file (JSON lines or one array, as result.py reads both):

- ``official``: in ``os.listdir`` order, as result.py lists them. That order is the file system's
  (on ext4 a hash of the names), the same on one machine for one folder, not from one machine to
  the next; so the row *order* of the official table is reproduced where result.py would run, and
  the rows themselves byte for byte anywhere. ``judge`` is taken from the file as written.
- ``default``: rows sorted by file name, the same everywhere; ``judge`` read again from
  ``response`` (``extract_answer(response) == answer``), the files' disagreements counted; with
  ``data`` (the official ``data.json``), records a file lacks (pred.py drops a record whose reply
  was empty) count wrong, so every row has the same denominator.

Files result.py would stop on are handled, and each is said: other files and folders are
skipped (result.py would crash on them), a class with no record shows ``-``, a file of one
JSON-lines record is read as that record (result.py's ``json.load`` takes it for an object and
fails).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from ..files.atomic import write_text
from ..files.errors import LongBenchV2DataError
from ..files.json_stream import JSONStreamError, json_objects_of
from .data import SCORING_FIELDS, load_records
from .extraction import extract_answer
from .metrics import row_cells, row_name, table_text
from .prompts import check_mode

RESULT_FILE = 'result.txt'
_SUFFIXES = ('.jsonl', '.json')
_NEEDED = {'official': ('judge', 'difficulty', 'length'), 'default': ('difficulty', 'length')}


def read_result_file(path: Path, mode: str) -> list[dict]:
    """The result lines of one file, each checked for what ``mode`` reads."""
    try:
        lines = list(json_objects_of(path))
    except (JSONStreamError, UnicodeDecodeError) as exc:
        raise LongBenchV2DataError(
            f'{path}: {exc}; a result file is JSON lines (or one JSON array) as pred.py writes'
        ) from None
    for number, line in enumerate(lines, 1):
        lacking = [name for name in _NEEDED[mode] if name not in line]
        if mode == 'official' and not isinstance(line.get('judge'), bool):
            lacking.append('judge (true or false)')
        if mode == 'default' and not (
            isinstance(line.get('response'), str) and isinstance(line.get('answer'), str)
        ):
            lacking.append('"response" and "answer" (strings)')
        if lacking:
            raise LongBenchV2DataError(f'{path}, record {number}: needs {", ".join(lacking)}')
    return lines


def rejudged(lines: list[dict]) -> tuple[list[dict], int]:
    """The lines judged again from their replies, and how many stored judgements differ."""
    out, differ = [], 0
    for line in lines:
        pred = extract_answer(line['response'])
        judge = pred == line['answer']
        differ += judge != line.get('judge')
        out.append({**line, 'pred': pred, 'judge': judge})
    return out, differ


def with_missing(lines: list[dict], records: list[dict]) -> tuple[list[dict], int]:
    """``lines`` plus a wrong line for every record of ``data.json`` they lack."""
    present = {line.get('_id') for line in lines}
    missing = [
        {**record, 'pred': None, 'judge': False}
        for record in records
        if record['_id'] not in present
    ]
    return lines + missing, len(missing)


def result_files(results_dir: Path, mode: str) -> tuple[list[Path], list[str]]:
    """The result files to score, in the mode's order, and the names skipped."""
    if not results_dir.is_dir():
        raise LongBenchV2DataError(
            f'{results_dir} is no folder: give the folder pred.py wrote its results to '
            '(--save_dir, default results)'
        )
    names = os.listdir(results_dir) if mode == 'official' else sorted(os.listdir(results_dir))
    files, skipped = [], []
    for name in names:
        path = results_dir / name
        keep = path.is_file() and name.endswith(_SUFFIXES) and not name.startswith('.')
        if keep:
            files.append(path)
        else:
            skipped.append(name)
    if not files:
        raise LongBenchV2DataError(f'{results_dir} holds no *.jsonl result files of pred.py')
    return files, skipped


def score_and_write(
    results_dir: str | Path,
    mode: str = 'default',
    data: Optional[str | Path] = None,
    out: Optional[str | Path] = None,
) -> list[str]:
    """Score every result file of ``results_dir``, write the table (``out``, default
    ``result.txt`` beside the folder) and return the lines to print: the table, then notes."""
    check_mode(mode)
    if data is not None and mode == 'official':
        raise ValueError(
            "counting the records a file lacks (data=...) is the default mode's; result.py "
            'scores only the lines present: drop data or use mode="default"'
        )
    results_dir = Path(results_dir)
    files, skipped = result_files(results_dir, mode)
    records = load_records(data, SCORING_FIELDS) if data is not None else None
    rows, notes = [], []
    for path in files:
        lines = read_result_file(path, mode)
        if mode == 'default':
            lines, differ = rejudged(lines)
            if differ:
                notes.append(f'{path.name}: {differ} stored judgements differ from the replies')
            if records is not None:
                lines, missing = with_missing(lines, records)
                if missing:
                    notes.append(f'{path.name}: {missing} records of {data} absent, counted wrong')
        cells = row_cells(lines)
        if '-' in cells:
            notes.append(f'{path.name}: a class with no record shows - (result.py stops there)')
        rows.append((row_name(path.name), cells))
    text = table_text(rows)
    target = Path(out) if out is not None else results_dir.resolve().parent / RESULT_FILE
    write_text(target, text)
    if skipped:
        notes.append(f'skipped (not result files): {", ".join(skipped)}')
    return text.split('\n') + notes + [f'wrote {target}']
