"""The board as Markdown (to paste into a README), tidy CSV and JSON (for machines)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Optional

from ..lveval.tasks import GROUPS, TASKS
from .board import PUBLISHED, Board, Row


def cell(value: Optional[float]) -> str:
    return '-' if value is None else f'{value:.2f}'


def status(row: Row) -> str:
    if row.kind == PUBLISHED:
        return 'published'
    if row.missing:
        return f'incomplete ({len(row.missing)} missing)'
    return 'complete' + (f', {len(row.conflicts)} conflicts' if row.conflicts else '')


def _table(header: list[str], lines: list[list[str]]) -> list[str]:
    return ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)] + [
        '| ' + ' | '.join(line) + ' |' for line in lines
    ]


def markdown(board: Board, generated: str) -> str:
    levels = board.levels
    parts = [
        '# Long-context leaderboard',
        '',
        f'Generated {generated}. LV-Eval Overall at a level is the unweighted mean of the 11 '
        'datasets there, given only where all 11 have a result; rows marked published are the '
        "papers' numbers, never mixed with measured ones.",
        '',
    ]
    lveval = [r for r in board.rows if r.lveval or r.overall]
    if lveval and levels:
        parts += ['## LV-Eval: Overall by length level', '']
        parts += _table(
            ['model'] + levels + ['avg', 'status'],
            [[r.label] + [cell(r.overall.get(level)) for level in levels]
             + [cell(r.average(levels)), status(r)] for r in lveval],
        )  # fmt: skip
        parts += ['', '## LV-Eval: task types (mean over datasets and levels)', '']
        parts += _table(['model'] + list(GROUPS),
                        [[r.label] + [cell(r.group(g, levels)) for g in GROUPS] for r in lveval])  # fmt: skip
        for task in TASKS:
            parts += ['', f'### LV-Eval {task.name}', '']
            parts += _table(['model'] + levels,
                            [[r.label] + [cell(r.lveval.get((task.name, level))) for level in levels]
                             for r in lveval])  # fmt: skip
    for task, settings in board.settings.items():
        rows = [r for r in board.rows if any(t == task for t, _ in r.adaleval)]
        parts += ['', f'## Ada-LEval {task}: accuracy (instruction following) by setting', '']
        parts += _table(['model'] + settings, [[r.label] + [_ada(r, task, s) for s in settings]
                                               for r in rows])  # fmt: skip
    if board.missing:
        parts += ['', '## Missing results', '']
        parts += _table(['model', 'dataset', 'first error line'],
                        [[m, d, why.replace('|', '\\|')] for m, d, why in board.missing])  # fmt: skip
    if board.conflicts:
        parts += ['', '## Conflicts', ''] + [
            f'- {label}: {note}' for label, note in board.conflicts
        ]
    parts += ['', '## Provenance', '']
    parts += _table(
        ['model', 'runs', 'date', 'config digest', 'package version', 'data fingerprint', 'source'],
        [[r.label, ', '.join(r.provenance.get('runs', [])), r.provenance.get('date', ''),
          r.provenance.get('config_digest', ''), str(r.provenance.get('package_version') or ''),
          r.provenance.get('data_fingerprint', ''), ', '.join(r.provenance.get('source', []))]
         for r in board.rows],
    )  # fmt: skip
    return '\n'.join(parts) + '\n'


def _ada(row: Row, task: str, setting: str) -> str:
    values = row.adaleval.get((task, setting))
    if not values:
        return '-'
    shown = cell(values.get('accuracy'))
    if 'instruction_following' in values:
        shown += f' ({cell(values["instruction_following"])})'
    return shown


def tidy(board: Board) -> list[dict]:
    """One record per number: row, kind, benchmark, table, item, level, metric, value."""
    records = []

    def add(row: Row, benchmark: str, table: str, item: str, level: str, metric: str, value):
        if value is not None:
            records.append(dict(row=row.label, kind=row.kind, benchmark=benchmark, table=table,
                                item=item, level=level, metric=metric, value=round(value, 2)))  # fmt: skip

    for row in board.rows:
        for level in board.levels:
            add(row, 'lveval', 'overall', 'all datasets', level, 'score', row.overall.get(level))
        add(row, 'lveval', 'overall', 'all datasets', 'avg', 'score', row.average(board.levels))
        for group in GROUPS:
            add(row, 'lveval', 'group', group, 'all', 'score', row.group(group, board.levels))
        for task in TASKS:
            for level in board.levels:
                add(row, 'lveval', 'dataset', task.name, level, 'score',
                    row.lveval.get((task.name, level)))  # fmt: skip
        for task, settings in board.settings.items():
            for setting in settings:
                for metric, value in row.adaleval.get((task, setting), {}).items():
                    add(row, 'adaleval', task, task, setting, metric, value)
    return records


def write_csv(board: Board, path: Path) -> None:
    fields = ['row', 'kind', 'benchmark', 'table', 'item', 'level', 'metric', 'value']
    with open(path, 'w', newline='', encoding='utf-8') as stream:
        writer = csv.DictWriter(stream, fieldnames=fields)
        writer.writeheader()
        writer.writerows(tidy(board))


def as_json(board: Board, generated: str) -> dict:
    return {
        'generated': generated,
        'levels': board.levels,
        'adaleval_settings': board.settings,
        'rows': [
            {
                'label': r.label, 'kind': r.kind, 'model': r.model, 'settings': r.settings,
                'status': status(r), 'complete': r.complete,
                'overall': {lv: r.overall.get(lv) for lv in board.levels},
                'average': r.average(board.levels),
                'datasets': {f'{d}_{lv}': v for (d, lv), v in sorted(r.lveval.items())},
                'adaleval': {f'{t}_{s}': v for (t, s), v in sorted(r.adaleval.items())},
                'missing': [{'dataset': d, 'error': why} for d, why in r.missing],
                'conflicts': r.conflicts, 'provenance': r.provenance,
            }
            for r in board.rows
        ],
    }  # fmt: skip


def write_json(board: Board, path: Path, generated: str) -> None:
    path.write_text(json.dumps(as_json(board, generated), indent=1, ensure_ascii=False), 'utf-8')
