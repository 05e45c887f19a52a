"""The tables, plots, tidy rows and JSON of a grid benchmark's declared factors (``factors.py``):
one table per factor value and metric, by size with the average over sizes, in the run's report
(with a plot, a line per model) and on the board (plotted on the page), each number with its
interval. The same numbers come from a run's result files (``RunCells``) and from a board row
(``BoardCells``): a per-task value averages its tasks' cells, a per-record value each task's
mean over its records of that value (``factors.py`` says how)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..report.tables import BoardLine, BoardTable, Table, mean, result_value
from .factors import Factor, subset, subset_mean


def cell_subsets(benchmark, task: str, factor_values: dict, scores) -> Iterator[tuple]:
    """(factor name, value, the scores of that value's records) of one cell, for every
    per-record factor its task carries and every value its records hold."""
    for factor in benchmark.factors:
        if task not in factor.record_tasks(benchmark.tasks):
            continue
        for value in factor.shown_values():
            chosen = subset(scores, factor_values.get(factor.name), value)
            if chosen:
                yield factor.name, value, chosen


class RunCells:
    """One model's results in a run (abbr -> result), with the report's bootstrap
    distributions of its cells (``samples``) and of their per-record factor subsets."""

    def __init__(self, benchmark, model: str, results: dict, samples: dict, subsets: dict):
        self.benchmark, self.model, self.results = benchmark, model, results
        self.cell_samples, self.subsets = samples, subsets

    def _result(self, task: str, size: str) -> dict:
        return self.results.get(self.benchmark.abbr(task, size), {})

    def value(self, task: str, size: str, metric: str) -> Optional[float]:
        return result_value(self.results, self.benchmark.abbr(task, size), metric)

    def scores(self, task: str, size: str, metric: str):
        return self.benchmark.record_scores(self._result(task, size), metric)

    def factor_values(self, task: str, size: str, factor: Factor):
        return self.benchmark.record_factors(self._result(task, size)).get(factor.name)

    def samples(self, task: str, size: str, metric: str):
        return self.cell_samples.get((self.benchmark.name, task, size), {}).get(self.model)

    def subset_samples(self, task: str, size: str, metric: str, factor: Factor, value: str):
        key = (self.benchmark.name, task, size, factor.name, value)
        return self.subsets.get(key, {}).get(self.model)


class BoardCells:
    """One board row's cells: its values, the records it kept and their distributions."""

    def __init__(self, benchmark, row) -> None:
        self.benchmark, self.row = benchmark, row

    def _result(self, task: str, size: str):
        return self.row.records.get(self.benchmark.name, {}).get((task, size))

    def value(self, task: str, size: str, metric: str) -> Optional[float]:
        return self.benchmark.value(self.row, task, size, metric)

    def scores(self, task: str, size: str, metric: str):
        found = self._result(task, size)
        if found is None:
            return None
        return (
            found.scores
            if metric == self.benchmark.interval_metric
            else (found.metric_scores.get(metric))
        )

    def factor_values(self, task: str, size: str, factor: Factor):
        found = self._result(task, size)
        return found.factors.get(factor.name) if found is not None else None

    def samples(self, task: str, size: str, metric: str):
        return self.benchmark.samples(self.row, task, size, metric)

    def subset_samples(self, task: str, size: str, metric: str, factor: Factor, value: str):
        by_metric = self.row.factor_samples.get(self.benchmark.name, {}).get(metric, {})
        return by_metric.get((task, size, factor.name, value))


def factor_values(benchmark, cells, factor: Factor, value: str, sizes: list[str], metric: str):
    """A factor value's results at each of ``sizes`` then their average (``avg``), and the
    intervals of each: averages of its member cells, resampled within each."""
    from ..report.intervals import interval, pooled

    members = factor.members(value, benchmark.tasks)

    def cell(task: str, size: str) -> tuple:
        if not factor.per_record:
            return cells.value(task, size, metric), cells.samples(task, size, metric)
        found = cells.factor_values(task, size, factor)
        return (
            subset_mean(cells.scores(task, size, metric), found, value),
            cells.subset_samples(task, size, metric, factor, value),
        )

    def point(at: list[str]) -> tuple:
        found = [cell(task, size) for task in members for size in at]
        return mean([v for v, _ in found]), interval(pooled([d for _, d in found]))

    points = [point([size]) for size in sizes] + [point(sizes)]
    return [v for v, _ in points], [i for _, i in points]


def title(benchmark, factor: Factor, value: str, metric: str) -> str:
    return f'{benchmark.title}, {factor.word} {value}: {metric} by {benchmark.size_word}'


def _stem(benchmark, factor: Factor, value: str, metric: str) -> str:
    stem = f'{benchmark.name}_{factor.name}_{value}'
    return stem if metric == benchmark.headline_metric else f'{stem}_{metric}'


def report_subsets(benchmark, results: dict, abbrs, metric: str) -> dict:
    """(name, task, size, factor, value) -> model -> the bootstrap distribution of the mean of
    ``metric`` over that value's records in the cell, keyed as the board's."""
    import numpy as np

    from ..report.intervals import bootstrap_cells

    cells: dict = {}
    for abbr in abbrs:
        task, size = benchmark.split_abbr(abbr)
        for model, found in results.items():
            result = found.get(abbr, {})
            scores = benchmark.record_scores(result, metric)
            values = benchmark.record_factors(result)
            for name, value, chosen in cell_subsets(benchmark, task, values, scores):
                key = (benchmark.name, task, size, name, value)
                cells.setdefault(key, {})[model] = np.asarray(chosen)
    return bootstrap_cells(cells)


def report_tables(benchmark, results: dict, out: Path, metric: str) -> tuple[list, list]:
    """Per factor value, ``metric`` by size for every model with intervals, and its plot (a
    line per model)."""
    every = [
        a for a in dict.fromkeys(a for f in results.values() for a in f) if benchmark.split_abbr(a)
    ]
    samples = benchmark.report_samples(results, every, metric)
    subsets = report_subsets(benchmark, results, every, metric)
    tables, plots = [], []
    for factor in benchmark.factors:
        for value in factor.shown_values():
            members = factor.members(value, benchmark.tasks)
            sizes = benchmark.level_order(
                cell[1] for a in every if (cell := benchmark.split_abbr(a))[0] in members
            )
            lines, errors, rows, bounds = {}, {}, [], []
            for model, found in results.items():
                cells = RunCells(benchmark, model, found, samples, subsets)
                values, intervals = factor_values(benchmark, cells, factor, value, sizes, metric)
                if any(v is not None for v in values):
                    lines[model], errors[model] = values[:-1], intervals[:-1]
                    rows.append([model, *values])
                    bounds.append([None, *intervals])
            if not rows:
                continue
            name = title(benchmark, factor, value, metric)
            stem = _stem(benchmark, factor, value, metric)
            tables.append(Table(name, stem, ['model', *sizes, 'avg'], rows, bounds))
            path = out / f'{benchmark.name}_{factor.name}_{value}_{metric}.png'
            plots.append(benchmark._plot_by_size(path, name, sizes, lines, errors, metric))
    return tables, plots


def _note(benchmark, factor: Factor, value: str, members: tuple) -> str:
    what = ', '.join(members)
    if factor.per_record:
        rule = (
            f"the mean over the {benchmark.task_plural} {what} of each one's mean over its "
            f'records of {factor.word} {value}, given only where each has such records'
        )
    else:
        rule = (
            f'the unweighted mean of the {benchmark.task_plural} of {factor.word} {value} '
            f'({what}), given only where all have a result'
        )
    return f'At a {benchmark.size_word}: {rule}; avg: their mean over the {benchmark.size_plural}. '


def board_sizes(benchmark, sizes, members: tuple) -> list[str]:
    """The board's sizes a factor value's members have (a grid: all of them)."""
    if benchmark.overall:
        return list(sizes)
    return benchmark.level_order(s for task in members for s in sizes.get(task, []))


def board_tables(benchmark, rows: list, sizes, metric: str) -> list[BoardTable]:
    """Per factor value, ``metric`` by size for every row that has it, with intervals."""
    tables = []
    own = metric == benchmark.headline_metric
    for factor in benchmark.factors:
        for value in factor.shown_values():
            members = factor.members(value, benchmark.tasks)
            levels = board_sizes(benchmark, sizes, members)
            lines = []
            for row in rows:
                cells = BoardCells(benchmark, row)
                values, intervals = factor_values(benchmark, cells, factor, value, levels, metric)
                if any(v is not None for v in values):
                    lines.append(BoardLine(row, values, intervals=intervals))
            if not (lines and levels):
                continue
            key = f'{benchmark.name}-{factor.name}-{value}' + ('' if own else f'-{metric}')
            tables.append(
                BoardTable(
                    key,
                    title(benchmark, factor, value, metric),
                    [*levels, 'avg'],
                    lines,
                    heading=3 if benchmark.overall else 2,
                    plotted=len(levels),
                    note=_note(benchmark, factor, value, members) + benchmark._interval_note(rows),
                    axis=benchmark.axis_label(),
                    metric=metric,
                    positions=benchmark.level_positions(levels),
                )
            )
    return tables


def tidy_rows(benchmark, row, sizes) -> Iterator[tuple]:
    """(factor name, value, size or 'avg', metric, value, interval) of every factor value."""
    cells = BoardCells(benchmark, row)
    for metric in benchmark.metrics:
        for factor in benchmark.factors:
            for value in factor.shown_values():
                members = factor.members(value, benchmark.tasks)
                levels = board_sizes(benchmark, sizes, members)
                values, intervals = factor_values(benchmark, cells, factor, value, levels, metric)
                for level, found, bounds in zip([*levels, 'avg'], values, intervals):
                    yield factor.name, value, level, metric, found, bounds


def json_fields(benchmark, row, sizes) -> dict:
    """factor -> metric -> value -> size (and 'avg') -> the number as the board shows it."""
    from ..report.rounding import rounded

    found: dict = {}
    for name, value, level, metric, number, _ in tidy_rows(benchmark, row, sizes):
        shown = None if number is None else rounded(number)
        found.setdefault(name, {}).setdefault(metric, {}).setdefault(value, {})[level] = shown
    return found
