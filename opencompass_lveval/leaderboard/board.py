"""Runs and published results merged into one board: rows, their cells and provenance.

A measured row is one model under one set of settings: its abbr, its window (``max_seq_len``),
its input mode and the package version. A model run under other settings is another row, labelled
with what differs. Within a row the newest result per dataset wins; where the data under a dataset
changed between runs, or Ada-LEval extraction modes differ within the row, the board says so
(a conflict). LV-Eval's Overall at a level is the unweighted mean of the 11 datasets there (the
official leaderboard's rule), given only where all 11 are present; a row missing anything it was
asked to run is incomplete and gets no partial averages. Published rows are kept apart.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Optional

from ..adaleval.tasks import TASKS as ADALEVAL_TASKS
from ..lveval.tasks import LEVELS, TASKS, split_abbr
from ..report.results import adaleval_setting
from ..sizes import by_size
from .published import published_rows
from .runs import Result, Run, config_digest, missing_reason

MEASURED, PUBLISHED = 'measured', 'published'


@dataclass
class Row:
    label: str
    kind: str  # measured | published
    model: str
    settings: dict = field(default_factory=dict)
    lveval: dict[tuple[str, str], float] = field(default_factory=dict)  # (dataset, level)
    overall: dict[str, Optional[float]] = field(default_factory=dict)  # level -> mean of 11
    adaleval: dict[tuple[str, str], dict] = field(default_factory=dict)  # (task, setting)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (dataset abbr, why)
    conflicts: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.missing

    def average(self, levels: list[str]) -> Optional[float]:
        """Mean Overall over ``levels``; None unless every one is there."""
        values = [self.overall.get(level) for level in levels]
        if not values or any(v is None for v in values):
            return None
        return sum(values) / len(values)

    def group(self, name: str, levels: list[str]) -> Optional[float]:
        """Mean over a task-type group's datasets and the levels, only where all are present."""
        values = [
            self.lveval.get((t.name, level)) for t in TASKS if t.group == name for level in levels
        ]
        if not values or any(v is None for v in values):
            return None
        return sum(values) / len(values)


@dataclass
class Board:
    rows: list[Row]
    levels: list[str]  # LV-Eval levels shown, smallest first
    settings: dict[str, list[str]]  # Ada-LEval task -> settings shown

    @property
    def missing(self) -> list[tuple[str, str, str]]:
        return [(row.label, dataset, why) for row in self.rows for dataset, why in row.missing]

    @property
    def conflicts(self) -> list[tuple[str, str]]:
        return [(row.label, note) for row in self.rows for note in row.conflicts]


def _model_settings(run: Run, model: str) -> tuple:
    """(window, input mode) of a model in a run, from the config the run dumped."""
    config = run.models.get(model, {})
    ours = 'LongContext' in str(config.get('type'))
    return config.get('max_seq_len'), config.get('inputs', 'exact' if ours else None)


def _version(result: Result) -> Optional[str]:
    return result.provenance.get('package_version')


def measured_rows(runs: list[Run]) -> list[Row]:
    """One row per model and settings, from the runs (oldest first: newer results win)."""
    versions: dict[tuple, str] = {}  # (model, window, inputs) -> newest package version seen
    for run in runs:
        for result in run.results:
            if _version(result):
                versions[(result.model, *_model_settings(run, result.model))] = _version(result)

    def result_key(run: Run, result: Result) -> tuple:
        base = (result.model, *_model_settings(run, result.model))
        return (*base, _version(result) or versions.get(base))

    def asked_key(run: Run, model: str) -> tuple:
        """The row a run's asked-for datasets belong to: its newest version for the model."""
        base = (model, *_model_settings(run, model))
        own = [_version(r) for r in run.results if r.model == model and _version(r)]
        return (*base, own[-1] if own else versions.get(base))

    rows: dict[tuple, Row] = {}
    cells: dict[tuple, dict[str, Result]] = {}  # row key -> dataset -> newest result
    asked: dict[tuple, set[str]] = {}
    for run in runs:
        for model in sorted(set(run.models) | {r.model for r in run.results}):
            keys = {result_key(run, r) for r in run.results if r.model == model}
            keys.add(asked_key(run, model))
            for key in keys:
                settings = dict(zip(('window', 'inputs', 'package_version'), key[1:]))
                row = rows.setdefault(key, Row(model, MEASURED, model, settings))
                if str(run.folder) not in row.provenance.setdefault('runs', []):
                    row.provenance['runs'].append(str(run.folder))
                row.provenance['date'] = run.date
                if model in run.models:
                    row.provenance['config_digest'] = config_digest(run.models[model])
            asked.setdefault(asked_key(run, model), set()).update(run.datasets.get(model, []))
        for result in run.results:
            key = result_key(run, result)
            row_cells = cells.setdefault(key, {})
            older = row_cells.get(result.dataset)
            if older is not None and None not in (_fingerprint(older), _fingerprint(result)) \
                    and _fingerprint(older) != _fingerprint(result):  # fmt: skip
                rows[key].conflicts.append(
                    f'{result.dataset}: the data changed between {older.run.name} and '
                    f'{run.folder.name} (newest kept)'
                )
            if older is None or result.written >= older.written:
                row_cells[result.dataset] = result
    for key, row in rows.items():
        row_cells = cells.get(key, {})
        for dataset, result in row_cells.items():
            _place(row, dataset, result.values)
        row.missing = [
            (d, _why(row.model, d, runs)) for d in sorted(asked.get(key, set()) - set(row_cells))
        ]
        modes = {mode for r in row_cells.values() if (mode := r.provenance.get('extraction'))}
        if len(modes) > 1:
            row.conflicts.append(
                f'Ada-LEval extraction modes differ within the row: {sorted(modes)}'
            )
        row.provenance['data_fingerprint'] = _digest(
            sorted(f'{d}={_fingerprint(r)}' for d, r in row_cells.items())
        )
        row.provenance['package_version'] = key[3]
    _label(list(rows.values()))
    return list(rows.values())


def _overall(row: Row, levels: list[str]) -> None:
    """LV-Eval's Overall per level: the mean of the 11 datasets, where all 11 are there."""
    for level in levels:
        values = [row.lveval.get((task.name, level)) for task in TASKS]
        row.overall[level] = None if any(v is None for v in values) else sum(values) / len(values)


def _fingerprint(result: Result) -> Optional[str]:
    return result.provenance.get('data_fingerprint')


def _why(model: str, dataset: str, runs: list[Run]) -> str:
    """The first error line for a missing result, from the newest run that asked for it."""
    for run in reversed(runs):
        if dataset in run.datasets.get(model, []):
            return missing_reason(run.folder, model, dataset)
    return 'not run'


def _digest(parts: list[str]) -> str:
    return hashlib.sha1('\n'.join(parts).encode()).hexdigest()[:12]


def _place(row: Row, dataset: str, values: dict) -> None:
    found = split_abbr(dataset)
    if found and isinstance(values.get('score'), (int, float)):
        row.lveval[found[0].name, found[1]] = float(values['score'])
        return
    for task in ADALEVAL_TASKS:
        setting = adaleval_setting(dataset, task)
        if setting:
            row.adaleval[task.name, setting] = {
                metric: float(values[metric]) for metric in ('accuracy', 'instruction_following')
                if isinstance(values.get(metric), (int, float))
            }  # fmt: skip


def _label(rows: list[Row]) -> None:
    """A model under several settings gets labels that say what differs."""
    by_model: dict[str, list[Row]] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    for same in by_model.values():
        if len(same) < 2:
            continue
        differing = [k for k in same[0].settings if len({str(r.settings[k]) for r in same}) > 1]
        for row in same:
            shown = ', '.join(f'{k}={row.settings[k]}' for k in differing)
            row.label = f'{row.model} [{shown}]'


def published(rows_wanted: bool) -> list[Row]:
    if not rows_wanted:
        return []
    rows = []
    for found in published_rows():
        row = Row(f'{found.model} (published)', PUBLISHED, found.model)
        row.lveval = dict(found.datasets)
        row.overall = dict(found.overall)
        row.adaleval = {key: {'accuracy': value} for key, value in found.adaleval.items()}
        row.provenance = {'source': sorted(found.sources)}
        rows.append(row)
    return rows


def build_board(runs: list[Run], with_published: bool = False) -> Board:
    measured = measured_rows(runs)
    levels = by_size({level for row in measured for _, level in row.lveval}
                     | (set(LEVELS) if with_published else set()))  # fmt: skip
    for row in measured:
        _overall(row, levels)
    measured.sort(key=lambda row: (row.average(levels) is None or not row.complete,
                                   -(row.average(levels) or 0), row.label))  # fmt: skip
    rows = measured + published(with_published)
    settings = {
        task.name: by_size({s for row in rows for (t, s) in row.adaleval if t == task.name})
        for task in ADALEVAL_TASKS
    }
    return Board(rows, levels, {task: found for task, found in settings.items() if found})
