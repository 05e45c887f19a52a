"""The board as Markdown (to paste into a README), tidy CSV and JSON (for machines). The tables
are the benchmarks' own (``board_tables``), rendered alike."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Optional

from .. import benchmarks
from ..atomic import atomic_open, write_text
from ..intervals import interval, shown
from ..rounding import rounded
from ..rounding import shown as shown_value
from ..tables import PUBLISHED, BoardLine, BoardTable, csv_text, markdown_text
from .board import Board, Row
from .usage import tokens_per_s, usage_board_tables, usage_json

INTRO = (
    "Rows marked published are the papers' numbers, never mixed with measured ones. Rows marked "
    '"(synthetic data)" were measured on the data of `lveval data synth`: they test the pipeline, '
    'not a model, and come last unless the board was built with --include-synthetic.'
)


def cell(value: Optional[float]) -> str:
    return '-' if value is None else shown_value(value)


def line_status(line: BoardLine) -> str:
    """A headline line's status, with the benchmark's remark on what is absent."""
    return status(line.row) + (f'; {line.remark}' if line.remark else '')


def status(row: Row) -> str:
    if row.kind == PUBLISHED:
        return 'published'
    if row.missing:
        return f'incomplete ({len(row.missing)} missing)'
    return 'complete' + (f', {len(row.conflicts)} conflicts' if row.conflicts else '')


def board_tables(board: Board) -> list[BoardTable]:
    """Every benchmark's tables, in registry order, then what the rows cost to run."""
    return [
        table
        for benchmark in benchmarks.BENCHMARKS
        for table in benchmark.board_tables(board.rows, board.sizes[benchmark.name])
    ] + usage_board_tables(board.rows)


def _table(header: list[str], lines: list[list[str]]) -> list[str]:
    """A Markdown table; every cell's text escaped (names come from run folders)."""
    return ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)] + [
        '| ' + ' | '.join(markdown_text(cell) for cell in line) + ' |' for line in lines
    ]


def _cells(line: BoardLine) -> list[str]:
    notes = line.notes or [None] * len(line.values)
    intervals = line.intervals or [None] * len(line.values)
    return [
        cell(v) + shown(i) + (f' ({cell(n)})' if n is not None else '')
        for v, n, i in zip(line.values, notes, intervals)
    ]


def markdown(board: Board, tables: list[BoardTable], generated: str) -> str:
    parts = ['# Long-context leaderboard', '', f'Generated {generated}. {INTRO}']
    for table in tables:
        header = [table.label] + table.header + (['status'] if table.headline else [])
        lines = [
            [line.row.label] + _cells(line) + ([line_status(line)] if table.headline else [])
            for line in table.lines
        ]
        parts += ['', f'{"#" * table.heading} {markdown_text(table.title)}', '']
        parts += [table.note, ''] if table.note else []
        parts += _table(header, lines)
    if board.missing:
        parts += ['', '## Missing results', '']
        parts += _table(
            ['model', 'dataset', 'first error line'],
            [[m, d, why] for m, d, why in board.missing],
        )
    if board.conflicts:
        parts += ['', '## Conflicts', ''] + [
            f'- {markdown_text(label)}: {markdown_text(note)}' for label, note in board.conflicts
        ]
    parts += ['', '## Provenance', '']
    provenance = ('runs', 'date', 'config_digest', 'package_version', 'data_fingerprint', 'source')
    parts += _table(
        ['model', 'runs', 'date', 'config digest', 'package version', 'data fingerprint', 'source'],
        [[r.label] + [_shown(r.provenance.get(key)) for key in provenance] for r in board.rows],
    )
    return '\n'.join(parts) + '\n'


def _shown(value) -> str:
    return ', '.join(value) if isinstance(value, list) else str(value or '')


def tidy(board: Board) -> list[dict]:
    """One record per number: row, kind, benchmark, table, item, level, metric, value, and its
    95% interval (low, high) where the benchmark gives one (a measured row's scores)."""
    return [
        dict(
            row=row.label,
            kind=row.kind,
            benchmark=benchmark.name,
            table=table,
            item=item,
            level=level,
            metric=metric,
            value=rounded(value),
            low=rounded(found[0][0]) if found and found[0] else None,
            high=rounded(found[0][1]) if found and found[0] else None,
        )
        for row in board.rows
        for benchmark in benchmarks.BENCHMARKS
        for table, item, level, metric, value, *found in benchmark.tidy(
            row, board.sizes[benchmark.name]
        )
        if value is not None
    ] + [
        dict(
            row=row.label,
            kind=row.kind,
            benchmark=name,
            table='usage',
            item='all datasets',
            level=size,
            metric=metric,
            value=value,
            low=None,
            high=None,
        )
        for row in board.rows
        for name, cells in row.usage.items()
        for size, total in sorted(cells.items())
        for metric, value in (
            ('prompt_tokens', total.prompt_tokens),
            ('completion_tokens', total.completion_tokens),
            ('tokens_per_s', tokens_per_s(total)),
            ('cost_usd', total.cost_usd),
        )
        if value is not None
    ]


def write_csv(board: Board, path: Path) -> None:
    fields = ['row', 'kind', 'benchmark', 'table', 'item', 'level', 'metric', 'value']
    fields += ['low', 'high']
    with atomic_open(path, newline='') as stream:
        writer = csv.DictWriter(stream, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: csv_text(v) for k, v in record.items()} for record in tidy(board))


def _row_json(row: Row, board: Board) -> dict:
    found = {
        'label': row.label,
        'kind': row.kind,
        'model': row.model,
        'settings': row.settings,
        'status': status(row),
        'complete': row.complete,
        'results': {
            name: {f'{task}_{size}': values for (task, size), values in sorted(cells.items())}
            for name, cells in row.results.items()
        },
        'intervals': {
            name: {
                f'{task}_{size}': interval(distribution)
                for (task, size), distribution in sorted(cells.items())
            }
            for name, cells in row.samples.items()
        }
        if row.kind != PUBLISHED
        else 'none: published numbers have no per-record scores',
    }
    if row.metric_samples:  # the intervals of the metrics besides each benchmark's headline
        found['metric_intervals'] = {
            name: {
                metric: {f'{t}_{s}': interval(d) for (t, s), d in sorted(cells.items())}
                for metric, cells in by_metric.items()
            }
            for name, by_metric in row.metric_samples.items()
        }
    for benchmark in benchmarks.BENCHMARKS:
        if not row.results.get(benchmark.name):  # no empty block for a benchmark it lacks
            continue
        if derived := benchmark.json_fields(row, board.sizes[benchmark.name]):
            found.setdefault('derived', {})[benchmark.name] = derived
    if row.usage:
        found['usage'] = usage_json(row)
    found.update(
        missing=[{'dataset': d, 'error': why} for d, why in row.missing],
        conflicts=row.conflicts,
        provenance=row.provenance,
    )
    return found


def as_json(board: Board, generated: str) -> dict:
    return {
        'generated': generated,
        'sizes': {name: sizes for name, sizes in board.sizes.items() if sizes},
        'rows': [_row_json(row, board) for row in board.rows],
    }


def write_json(board: Board, path: Path, generated: str) -> None:
    write_text(path, json.dumps(as_json(board, generated), indent=1, ensure_ascii=False))
