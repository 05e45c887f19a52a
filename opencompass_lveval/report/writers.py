"""Tables as Markdown and CSV: two decimals, ``-`` (Markdown) or empty (CSV) where missing."""

from __future__ import annotations

import csv
from pathlib import Path

from ..atomic import atomic_open
from ..tables import Table, csv_text, markdown_text


def markdown_cell(value) -> str:
    if value is None:
        return '-'
    return f'{value:.2f}' if isinstance(value, float) else markdown_text(value)


def to_markdown(table: Table) -> str:
    lines = [
        f'### {markdown_text(table.name)}',
        '',
        '| ' + ' | '.join(markdown_text(h) for h in table.header) + ' |',
        '|' + '---|' * len(table.header),
    ]
    lines += ['| ' + ' | '.join(markdown_cell(v) for v in row) + ' |' for row in table.rows]
    return '\n'.join(lines) + '\n'


def csv_cell(value):
    return '' if value is None else round(value, 2) if isinstance(value, float) else csv_text(value)


def write_csv(table: Table, path: Path) -> None:
    with atomic_open(path, newline='') as stream:
        writer = csv.writer(stream)
        writer.writerow([csv_text(h) for h in table.header])
        writer.writerows([[csv_cell(v) for v in row] for row in table.rows])
