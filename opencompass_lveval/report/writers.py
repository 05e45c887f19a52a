"""Tables as Markdown and CSV: two decimals, ``-`` (Markdown) or empty (CSV) where missing."""

from __future__ import annotations

import csv
from pathlib import Path

from ..files.atomic import atomic_open
from .intervals import shown
from .rounding import rounded
from .rounding import shown as shown_value
from .tables import Table, csv_text, markdown_text


def markdown_cell(value) -> str:
    if value is None:
        return '-'
    return shown_value(value) if isinstance(value, float) else markdown_text(value)


def to_markdown(table: Table) -> str:
    lines = [
        f'### {markdown_text(table.name)}',
        '',
        '| ' + ' | '.join(markdown_text(h) for h in table.header) + ' |',
        '|' + '---|' * len(table.header),
    ]
    intervals = table.intervals or [[None] * len(row) for row in table.rows]
    lines += [
        '| ' + ' | '.join(markdown_cell(v) + shown(i) for v, i in zip(row, found)) + ' |'
        for row, found in zip(table.rows, intervals)
    ]
    return '\n'.join(lines) + '\n'


def csv_cell(value):
    return '' if value is None else rounded(value) if isinstance(value, float) else csv_text(value)


def write_csv(table: Table, path: Path) -> None:
    with atomic_open(path, newline='') as stream:
        writer = csv.writer(stream)
        writer.writerow([csv_text(h) for h in table.header])
        writer.writerows([[csv_cell(v) for v in row] for row in table.rows])


def write_intervals_csv(tables: list[Table], path: Path) -> None:
    """Every interval of the report's tables, one line each (the value CSVs keep their shape)."""
    with atomic_open(path, newline='') as stream:
        writer = csv.writer(stream)
        writer.writerow(['table', 'row', 'column', 'value', 'low', 'high'])
        for table in tables:
            for row, found in zip(table.rows, table.intervals or []):
                for column, value, bounds in zip(table.header, row, found):
                    if bounds is not None:
                        writer.writerow(
                            [csv_text(table.name), csv_text(row[0]), csv_text(column)]
                            + [csv_cell(value), rounded(bounds[0]), rounded(bounds[1])]
                        )
