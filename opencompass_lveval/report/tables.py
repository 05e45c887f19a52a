"""Per-length tables as plain data, computed from result files (no I/O, no plotting).

- LV-Eval: a dataset x level table per model with task-type groups and a per-level average row,
  and a model x level table of those averages;
- Ada-LEval: per task, a metric x setting table per model;
- factrecall: mean per-sample score by needle depth and level.
Levels and settings are whatever the results hold, smallest first (``16k`` ... ``256k``,
``512k``, ``1000k``). An average is only given where every member has a result: a partial
average would mislead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..adaleval.tasks import METRICS as ADALEVAL_METRICS
from ..adaleval.tasks import TASKS as ADALEVAL_TASKS
from ..lveval.tasks import GROUPS, TASKS, split_abbr
from ..sizes import by_size
from .results import adaleval_setting, score

POSITION_BUCKETS = 10


@dataclass
class Table:
    name: str
    stem: str  # file name of its CSV, without extension
    header: list[str]
    rows: list[list]


def mean(values: list[Optional[float]]) -> Optional[float]:
    """Average of the values, or None when any is missing. Not rounded: writers round."""
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def lveval_levels(results: dict) -> list[str]:
    """The LV-Eval levels present in one model's results (or several merged), smallest first."""
    return by_size(found[1] for abbr in results if (found := split_abbr(abbr)))


def lveval_table(model: str, results: dict, levels: list[str]) -> Optional[Table]:
    """Datasets, task-type groups and the per-level average, by level, for one model."""
    grid = {task.name: [score(results, task.abbr(level)) for level in levels] for task in TASKS}
    if all(v is None for row in grid.values() for v in row):
        return None
    rows = [[name] + values + [mean(values)] for name, values in grid.items()]
    for name, members in [
        (group, [t.name for t in TASKS if t.group == group]) for group in GROUPS
    ] + [('average', [t.name for t in TASKS])]:
        values = [mean([grid[m][i] for m in members]) for i in range(len(levels))]
        rows.append([name] + values + [mean([v for m in members for v in grid[m]])])
    return Table(f'LV-Eval, {model}', f'lveval_{model}', ['dataset'] + levels + ['avg'], rows)


def average_row(table: Table, levels: list[str]) -> list[Optional[float]]:
    """The per-level averages of an ``lveval_table``."""
    return table.rows[-1][1 : 1 + len(levels)]


def adaleval_settings(task, results_by_model: dict[str, dict]) -> list[str]:
    """The settings of ``task`` that any model has results for, smallest first."""
    return by_size(
        setting
        for results in results_by_model.values()
        for abbr in results
        if (setting := adaleval_setting(abbr, task))
    )


def adaleval_tables(model: str, results: dict) -> list[Table]:
    """Per task: every metric by setting, for one model."""
    tables = []
    for task in ADALEVAL_TASKS:
        settings = adaleval_settings(task, {model: results})
        if not settings:
            continue
        rows = [
            [metric] + [score(results, task.abbr(s), metric) for s in settings]
            for metric in ADALEVAL_METRICS
        ]
        tables.append(
            Table(
                f'Ada-LEval {task.name}, {model}',
                f'adaleval_{task.name}_{model}',
                ['metric'] + settings,
                rows,
            )
        )
    return tables


def factrecall_heatmap(
    results: dict, dataset: str, levels: list[str]
) -> Optional[list[list[Optional[float]]]]:
    """Mean per-sample score (%) by needle depth bucket (rows) and level (columns).

    The official factrecall files put the needle at evenly spaced depths in record order, so a
    record's index gives its depth. Up to ten buckets, fewer when there are fewer samples.
    """
    per_level = [results.get(f'LVEval_{dataset}_{level}', {}).get('details') for level in levels]
    sizes = [len(details) for details in per_level if details]
    if not sizes:
        return None
    buckets = min(POSITION_BUCKETS, min(sizes))
    grid: list[list[Optional[float]]] = [[None] * len(levels) for _ in range(buckets)]
    for column, details in enumerate(per_level):
        if not details:
            continue
        scores = [_detail_score(d) for d in details]
        for bucket in range(buckets):
            chunk = scores[bucket * len(scores) // buckets : (bucket + 1) * len(scores) // buckets]
            grid[bucket][column] = 100 * sum(chunk) / len(chunk)
    return grid


def _detail_score(detail: dict) -> float:
    """A sample's score from OpenCompass's details (a list per replica, or a bare value)."""
    value = detail['score']
    return float(value[0] if isinstance(value, list) else value)
