"""LV-Eval's tables and plots: a run's report (dataset x level per model with task-type groups and
the per-level average, factrecall by needle depth) and the leaderboard's (Overall by level, task
types, one table per dataset).

Levels are whatever the results hold, smallest first (``16k`` ... ``256k``, ``512k``); an average
is only given where every member has a result: a partial average would mislead. Overall at a level
is the unweighted mean of the 11 datasets (the official leaderboard's rule).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..sizes import by_size
from ..tables import PUBLISHED, BoardLine, BoardTable, Table, file_part, mean, result_value
from .tasks import GROUPS, LEVELS, TASKS, split_abbr

NAME = 'lveval'
OVERALL = 'Overall'  # the task key of published Overall numbers on a board row
POSITION_BUCKETS = 10


def levels_in(abbrs) -> list[str]:
    """The LV-Eval levels among dataset abbreviations, smallest first."""
    return by_size(found[1] for abbr in abbrs if (found := split_abbr(abbr)))


# A run's report ---------------------------------------------------------------------------------


def model_table(model: str, results: dict, levels: list[str]) -> Optional[Table]:
    """Datasets, task-type groups and the per-level average, by level, for one model."""
    grid = {
        task.name: [result_value(results, task.abbr(level)) for level in levels] for task in TASKS
    }
    if all(v is None for row in grid.values() for v in row):
        return None
    rows = [[name] + values + [mean(values)] for name, values in grid.items()]
    members = [(group, [t.name for t in TASKS if t.group == group]) for group in GROUPS]
    for name, names in members + [('average', [t.name for t in TASKS])]:
        values = [mean([grid[m][i] for m in names]) for i in range(len(levels))]
        rows.append([name] + values + [mean([v for m in names for v in grid[m]])])
    return Table(f'LV-Eval, {model}', f'lveval_{model}', ['dataset'] + levels + ['avg'], rows)


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


def report(results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list[Path]]:
    """The tables (the model x level averages first) and the plots written to ``out``."""
    from ..report.plots import plot_heatmaps, plot_lines

    levels = levels_in(abbr for model in results.values() for abbr in model)
    tables, averages, plots = [], {}, []
    for model, model_results in results.items():
        table = model_table(model, model_results, levels)
        if table:
            tables.append(table)
            averages[model] = table.rows[-1][1 : 1 + len(levels)]
    if not averages:
        return [], []
    header = ['model'] + levels + ['avg']
    rows = [[m] + row + [mean(row)] for m, row in averages.items()]
    tables.insert(0, Table('LV-Eval average score by length level', 'lveval_levels', header, rows))
    path = out / 'lveval_levels.png'
    plot_lines(
        path,
        'LV-Eval: average over 11 datasets',
        levels,
        averages,
        'length level (English words / Chinese characters)',
        'average score (%)',
    )
    plots.append(path)
    for model, model_results in results.items():
        grids = {
            t.name: grid
            for t in TASKS
            if t.haystack and (grid := factrecall_heatmap(model_results, t.name, levels))
        }
        if grids:
            path = out / f'factrecall_heatmap_{file_part(model)}.png'
            plot_heatmaps(path, model, grids, levels)
            plots.append(path)
    return tables, plots


# The leaderboard --------------------------------------------------------------------------------


def board_levels(rows: list, with_published: bool) -> list[str]:
    """Levels any row has a result at (the official five too when published rows are shown)."""
    found = {size for row in rows for _, size in row.results.get(NAME, {})}
    return by_size(found | (set(LEVELS) if with_published else set()))


def dataset_score(row, dataset: str, level: str) -> Optional[float]:
    return row.results.get(NAME, {}).get((dataset, level), {}).get('score')


def overall(row, level: str) -> Optional[float]:
    """A published row's Overall as published; a measured row's, the mean of the 11 datasets
    where all 11 are there."""
    if row.kind == PUBLISHED:
        return dataset_score(row, OVERALL, level)
    return mean([dataset_score(row, task.name, level) for task in TASKS])


def average(row, levels: list[str]) -> Optional[float]:
    """Mean Overall over ``levels``; None unless every one is there."""
    return mean([overall(row, level) for level in levels])


def group_score(row, group: str, levels: list[str]) -> Optional[float]:
    """Mean over a task-type group's datasets and the levels, only where all are present."""
    return mean(
        [dataset_score(row, t.name, lv) for t in TASKS if t.group == group for lv in levels]
    )


def _absent_overall(row, levels: list[str]) -> str:
    """Why a published row has no Overall where it has dataset scores (a paper gave only some
    per-dataset numbers): said, not left as a row of dashes."""
    if row.kind != PUBLISHED or any(overall(row, level) is not None for level in levels):
        return ''
    found = by_size({lv for (task, lv) in row.results.get(NAME, {}) if task != OVERALL})
    return f'no Overall published; dataset scores at {", ".join(found)} (provenance)'


def board_tables(rows: list, levels: list[str]) -> list[BoardTable]:
    """Overall by level (the headline), task types, and one table per dataset."""
    shown = [row for row in rows if row.results.get(NAME)]
    if not (shown and levels):
        return []
    tables = [
        BoardTable(
            NAME,
            'LV-Eval: Overall by length level',
            levels + ['avg'],
            [
                BoardLine(
                    r,
                    [overall(r, lv) for lv in levels] + [average(r, levels)],
                    remark=_absent_overall(r, levels),
                )
                for r in shown
            ],
            headline=True,
            plotted=len(levels),
            note='Overall at a level is the unweighted mean of the 11 datasets there, given '
            'only where all 11 have a result.',
        ),
        BoardTable(
            f'{NAME}-groups',
            'LV-Eval: task types (mean over datasets and levels)',
            list(GROUPS),
            [BoardLine(r, [group_score(r, g, levels) for g in GROUPS]) for r in shown],
        ),
    ]
    for task in TASKS:
        lines = [BoardLine(r, [dataset_score(r, task.name, lv) for lv in levels]) for r in shown]
        tables.append(BoardTable(f'{NAME}-{task.name}', f'LV-Eval {task.name}', levels, lines, 3))
    return tables


def tidy(row, levels: list[str]) -> Iterator[tuple[str, str, str, str, Optional[float]]]:
    """(table, item, level, metric, value) for every number of a row."""
    for level in levels:
        yield 'overall', 'all datasets', level, 'score', overall(row, level)
    yield 'overall', 'all datasets', 'avg', 'score', average(row, levels)
    for group in GROUPS:
        yield 'group', group, 'all', 'score', group_score(row, group, levels)
    for task in TASKS:
        for level in levels:
            yield 'dataset', task.name, level, 'score', dataset_score(row, task.name, level)


def json_fields(row, levels: list[str]) -> dict:
    return {
        'overall': {level: overall(row, level) for level in levels},
        'average': average(row, levels),
    }
