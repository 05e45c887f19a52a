"""LongBench v2's table as ``result.py`` writes it: one row per result file, accuracy in percent
overall, by difficulty (Easy, Hard) and by length (Short, Medium, Long).

A cell is ``str(round(100 * right / count, 1))`` (Python's float rounding: ``30.95`` prints
``30.9``, ``1/3`` ``33.3``); ``judge`` counts 1 when true. result.py puts every difficulty other
than ``easy`` under Hard and every length other than ``short`` and ``medium`` under Long; the
loader refuses other values, so both readings agree on real data. Its ``compensated`` switch
(off in the published table) counts a record with no letter read as 0.25, a guess.

Where a class has no record result.py divides by zero and writes nothing; here that cell is
``-`` (``NO_RECORDS``) and the rest of the table is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .tasks import TABLE_HEADER

NO_RECORDS = '-'
GUESS = 0.25  # what ``compensated`` counts for a reply with no letter


def accuracy_cell(right: float, count: int) -> str:
    """One cell: the percentage to one decimal as result.py prints it, ``-`` for no records."""
    return str(round(100 * right / count, 1)) if count else NO_RECORDS


def row_cells(lines: Iterable[Mapping], compensated: bool = False) -> list[str]:
    """Overall, Easy, Hard, Short, Medium, Long of one file's result lines (each with
    ``judge``, ``difficulty``, ``length`` and, when ``compensated``, ``pred``)."""
    right = dict.fromkeys(('all', 'easy', 'hard', 'short', 'medium', 'long'), 0.0)
    count = dict.fromkeys(right, 0)
    for line in lines:
        value = GUESS if compensated and line['pred'] is None else int(line['judge'])
        difficulty = 'easy' if line['difficulty'] == 'easy' else 'hard'
        length = line['length'] if line['length'] in ('short', 'medium') else 'long'
        for key in ('all', difficulty, length):
            right[key] += value
            count[key] += 1
    return [accuracy_cell(right[key], count[key]) for key in right]


def table_text(rows: Sequence[tuple[str, Sequence[str]]]) -> str:
    """result.txt: the header and one tab-separated row per (name, cells), joined by newlines,
    with no newline at the end."""
    return '\n'.join([TABLE_HEADER] + ['\t'.join([name, *cells]) for name, cells in rows])


def row_name(file_name: str) -> str:
    """A row's name: the file name without its last extension ('' for a name with no dot)."""
    return '.'.join(file_name.split('.')[:-1])
