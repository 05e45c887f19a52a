"""The tables of a ``GridBenchmark`` (``grid.py``): the values of a board row and their averages,
the run's report (tables and plots), the board's tables, its tidy rows and JSON fields, all read
from the benchmark's declaration. Numbers stay raw here; the writers round what they show.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..report.tables import PUBLISHED, BoardLine, BoardTable, Table, mean, result_value
from .benchmarks import Benchmark, Cell


class GridTables(Benchmark):
    """The presentation half of ``GridBenchmark``, whose declaration (``tasks``, ``overall``,
    ``task_groups``, the words) and cells (``abbr``, ``split_abbr``, ``record_scores``) it reads.
    A benchmark adds tables of its own through ``own_report_tables`` and ``own_board_tables``."""

    board_title: str = '{title} {task}: {metric} by {size_word}'
    """The title of its board table per task (its sizes as columns), filling ``{title}``,
    ``{task}``, ``{metric}`` and ``{size_word}``."""
    board_note_metric: Optional[str] = None
    """A second metric shown in brackets beside the headline in the board's task tables
    (Ada-LEval's instruction following), or None."""
    board_note_label: str = ''
    """What the bracketed ``board_note_metric`` is called in titles and tooltips."""
    # The note metric is a rating some rows have (LV-Eval's LLM judge), not a metric of every
    # result: shown where a measured row has it, its tidy rows after the headline's.
    board_note_rated: bool = False
    board_plot: bool = True  # without an Overall, the page plots each task's table

    # Values of a board row ----------------------------------------------------------------------

    def value(self, row, task: str, size: str, metric: Optional[str] = None) -> Optional[float]:
        """A row's metric (default the headline) at a cell, where it has one."""
        cell = row.results.get(self.name, {}).get((task, size), {})
        return cell.get(metric or self.headline_metric)

    def samples(self, row, task: str, size: str, metric: Optional[str] = None):
        """A measured cell's bootstrap distribution of ``metric`` (default the headline; the
        board attaches them), else None."""
        if metric in (None, self.headline_metric):
            return row.samples.get(self.name, {}).get((task, size))
        return row.metric_samples.get(self.name, {}).get(metric, {}).get((task, size))

    def pooled_interval(self, row, cells: list[Cell], metric: Optional[str] = None):
        """The interval of the unweighted mean of the cells, each resampled within itself; none
        for published rows (no per-record scores)."""
        from ..report.intervals import interval, pooled

        return interval(pooled(self.samples(row, task, size, metric) for task, size in cells))

    def overall_value(self, row, size: str, metric: Optional[str] = None) -> Optional[float]:
        """A published row's Overall as published; a measured row's, the mean over every task at
        ``size`` where all are there."""
        if row.kind == PUBLISHED:
            return self.value(row, self.overall, size, metric)
        return mean([self.value(row, task, size, metric) for task in self.tasks])

    def average_value(self, row, sizes: list[str], metric=None) -> Optional[float]:
        """The mean Overall over ``sizes``; None unless every one is there."""
        return mean([self.overall_value(row, size, metric) for size in sizes])

    def group_cells(self, group: str, sizes: list[str]) -> list[Cell]:
        """The cells of a task group at ``sizes``."""
        return [(task, size) for task in self.task_groups[group] for size in sizes]

    def group_value(self, row, group: str, sizes: list[str], metric=None) -> Optional[float]:
        """The mean over a task group's tasks and ``sizes``, only where all are present."""
        cells = self.group_cells(group, sizes)
        return mean([self.value(row, task, size, metric) for task, size in cells])

    def rated(self, row) -> bool:
        """Whether a row holds the rated note metric (an LLM judge's score) anywhere."""
        cells = row.results.get(self.name, {}).values()
        return self.board_note_rated and any(self.board_note_metric in v for v in cells)

    def headline(self, row, sizes) -> Optional[float]:
        """What a board ranks rows by: with an Overall, its average over the board's sizes;
        otherwise the mean of the headline metric over the cells the row has on the board (a
        published row may lack some: the paper printed no number there)."""
        if self.overall:
            return self.average_value(row, sizes)
        found = [
            value
            for task, shown in sizes.items()
            for size in shown
            if (value := self.value(row, task, size)) is not None
        ]
        return mean(found) if found else None

    def pooled_cells(self, cells: list[Cell]) -> list[tuple[str, str, list[Cell]]]:
        """The Overall at every size among ``cells``: the unweighted mean of every task."""
        if not self.overall:
            return []
        return [
            (self.overall, size, [(task, size) for task in self.tasks])
            for size in self.level_order({size for _, size in cells})
        ]

    def board_sizes(self, rows: list, with_published: bool):
        """With an Overall, the sizes any row has (the standard ones too when published rows are
        shown); otherwise task -> the sizes any row has a result at, for the tasks with any."""
        if self.overall:
            found = {size for row in rows for _, size in row.results.get(self.name, {})}
            return self.level_order(found | (set(self.sizes) if with_published else set()))
        found = {
            task: self.level_order(
                {s for row in rows for t, s in row.results.get(self.name, {}) if t == task}
            )
            for task in self.tasks
        }
        return {task: sizes for task, sizes in found.items() if sizes}

    def shown_sizes(self, sizes) -> list[str]:
        if self.overall:
            return list(sizes)
        return [f'{task} {", ".join(shown)}' for task, shown in sizes.items() if shown]

    def _by_task(self, sizes) -> dict[str, list[str]]:
        """The board's sizes per task, whichever layout."""
        return {task: list(sizes) for task in self.tasks} if self.overall else sizes

    def length_units(self) -> list:
        """The units of its tasks' lengths, each once, in task order."""
        found = {}
        for task in self.tasks:
            for size in self.sizes_of(task)[:1]:
                if unit := self.length_unit(self.abbr(task, size)):
                    found.setdefault((unit.name, unit.texts), unit)
        return list(found.values())

    def axis_label(self, detailed: bool = False) -> str:
        """Its sizes as a plot's axis, with what its levels count (``level_unit``: ``number of
        pairs (pairs)``) or else the units of its lengths: ``length level (words /
        characters)``; ``detailed`` says which texts each unit is for (``English words``)."""
        if self.level_unit:
            return f'{self.size_name} ({self.level_unit})'
        units = [
            f'{unit.texts} {unit.name}' if detailed and unit.texts else unit.name
            for unit in self.length_units()
        ]
        return f'{self.size_name} ({" / ".join(units)})' if units else self.size_name

    def level_positions(self, sizes: list[str]) -> Optional[list[float]]:
        """Where its levels sit on a plot's x axis: their ``level_tokens`` where every one of
        ``sizes`` has one (on a log axis); None: evenly spaced."""
        found = [self.level_tokens.get(size) for size in sizes]
        return [float(v) for v in found] if found and None not in found else None

    # A run's report -----------------------------------------------------------------------------

    def report(self, results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list]:
        """With an Overall, every model's grid and the Overall by size; otherwise, per task, the
        headline metric by size for every model. Intervals on every number, plots with error
        bars, then the benchmark's own tables, then a table and plot per factor value
        (``factors``); the same for each of its other ``metrics``."""
        from . import factor_tables

        tables, plots = [], []
        for metric in self.metrics:
            if self.overall:
                found = self._grid_report(results, out, metric)
            else:
                found = self._task_report(results, out, metric)
            by_factor = factor_tables.report_tables(self, results, out, metric)
            tables += found[0] + by_factor[0]
            plots += found[1] + by_factor[1]
        return tables, plots

    def own_report_tables(self, results: dict, sizes: list[str]) -> list[Table]:
        """Tables of its own after a grid report's (LV-Eval's LLM judge)."""
        return []

    def report_samples(self, results: dict[str, dict[str, dict]], abbrs, metric=None) -> dict:
        """(name, task, size) -> model -> the bootstrap distribution of its cell's ``metric``
        (default the headline), keyed as the board's so that a cell has the same interval in
        every table."""
        from ..report.intervals import bootstrap_cells

        cells = {
            (self.name, *self.split_abbr(abbr)): {
                model: scores
                for model, found in results.items()
                if (scores := self.record_scores(found.get(abbr, {}), metric))
            }
            for abbr in abbrs
        }
        return bootstrap_cells(cells)

    def _stem(self, stem: str, metric: str) -> str:
        """A table's file stem: the headline's as it always was, another metric's after it."""
        return stem if metric == self.headline_metric else f'{stem}_{metric}'

    def _task_report(self, results: dict, out: Path, metric: str) -> tuple[list[Table], list]:
        from ..report.intervals import interval

        tables, plots = [], []
        every = {abbr for found in results.values() for abbr in found}
        for task in self.tasks:
            abbrs = self._abbrs_by_size(task, every)
            if not abbrs:
                continue
            sizes = [self.split_abbr(abbr)[1] for abbr in abbrs]
            samples = self.report_samples(results, abbrs, metric)
            values = {m: [result_value(f, a, metric) for a in abbrs] for m, f in results.items()}
            errors = {
                m: [interval(samples.get((self.name, task, s), {}).get(m)) for s in sizes]
                for m in results
            }
            title = f'{self.title} {task}: {metric} by {self.size_word}'
            rows = [[model, *found] for model, found in values.items()]
            bounds = [[None, *errors[model]] for model in values]
            stem = self._stem(f'{self.name}_{task}', metric)
            tables.append(Table(title, stem, ['model', *sizes], rows, bounds))
            path = out / f'{self.name}_{task}_{metric}.png'
            plots.append(self._plot_by_size(path, title, sizes, values, errors, metric))
        return tables, plots

    def _plot_by_size(self, path: Path, title: str, sizes, lines: dict, errors: dict, metric):
        """A line per model of ``metric`` by size with error bars, the levels placed by
        ``level_positions``: the report's plot of a task or a factor value."""
        from ..report.plots import plot_lines

        axis = self.axis_label(True)
        positions = self.level_positions(sizes)
        plot_lines(
            path, title, sizes, lines, axis, f'{metric} (%)', errors=errors, positions=positions
        )
        return path

    def _grid_report(self, results: dict, out: Path, metric: str) -> tuple[list[Table], list]:
        from ..report.plots import plot_lines

        sizes = self.level_order(
            c[1] for model in results.values() for a in model if (c := self.split_abbr(a))
        )
        cells = [self.abbr(t, s) for t in self.tasks for s in sizes]
        found = self.report_samples(results, cells, metric)
        tables, averages, errors = [], {}, {}
        for model, model_results in results.items():

            def samples(task: str, size: str, model=model):
                return found.get((self.name, task, size), {}).get(model)

            if table := self._model_table(model, model_results, sizes, samples, metric):
                tables.append(table)
                averages[model] = table.rows[-1][1 : 1 + len(sizes)]
                errors[model] = table.intervals[-1][1 : 1 + len(sizes)]
        if not averages:
            return [], []
        header = ['model', *sizes, 'avg']
        rows = [[m, *row, mean(row)] for m, row in averages.items()]
        intervals = [[None, *errors[m], t.intervals[-1][-1]] for m, t in zip(averages, tables)]
        stem = self._stem(f'{self.name}_{self.size_plural}', metric)
        title = self._overall_title(metric)
        tables.insert(0, Table(title, stem, header, rows, intervals))
        path = out / f'{stem}.png'
        plot_lines(
            path,
            f'{self.title}: {self.overall}, the mean of its {len(self.tasks)} '
            f'{self.task_plural} (95% bootstrap intervals)',
            sizes,
            averages,
            self.axis_label(detailed=True),
            f'{self.overall} {metric} (%)',
            errors=errors,
            positions=self.level_positions(sizes),
        )
        own = self.own_report_tables(results, sizes) if metric == self.headline_metric else []
        return tables + own, [path]

    def _model_table(self, model: str, results: dict, sizes: list[str], samples, metric: str):
        """Every task, task group and the average by size for one model, with the intervals: a
        task's over its records, an average's resampled within each task."""
        from ..report.intervals import interval, pooled

        grid = {
            task: [result_value(results, self.abbr(task, s), metric) for s in sizes]
            for task in self.tasks
        }
        if all(v is None for row in grid.values() for v in row):
            return None
        rows = [[task, *values, mean(values)] for task, values in grid.items()]
        intervals = [
            [
                None,
                *(interval(samples(task, s)) for s in sizes),
                interval(pooled(samples(task, s) for s in sizes)),
            ]
            for task in grid
        ]
        for name, members in [*self.task_groups.items(), (self.overall, self.tasks)]:
            values = [mean([grid[m][i] for m in members]) for i in range(len(sizes))]
            rows.append([name, *values, mean([v for m in members for v in grid[m]])])
            intervals.append(
                [
                    None,
                    *(interval(pooled(samples(m, s) for m in members)) for s in sizes),
                    interval(pooled(samples(m, s) for m in members for s in sizes)),
                ]
            )
        header = [self.task_word, *sizes, 'avg']
        title = f'{self.title}, {model}' + ('' if metric == self.headline_metric else f': {metric}')
        stem = self._stem(f'{self.name}_{model}', metric)
        return Table(title, stem, header, rows, intervals)

    # The leaderboard ----------------------------------------------------------------------------

    def own_board_tables(self, rows: list, sizes) -> list[BoardTable]:
        """Tables of its own, after the Overall and task groups, before the per-task tables."""
        return []

    def board_tables(self, rows: list, sizes) -> list[BoardTable]:
        """With an Overall: the Overall by size (the board's headline) and the task groups. Then
        its own tables, then one table per task: the headline metric by size with intervals, the
        note metric in brackets, then one per factor value. Then the same for each of its other
        ``metrics``."""
        from . import factor_tables

        shown = [row for row in rows if row.results.get(self.name)]
        if self.overall and not (shown and sizes):
            return []
        tables = []
        if self.overall:
            tables.append(self._overall_table(shown, sizes))
            tables += [self._groups_table(shown, sizes)] if self.task_groups else []
        tables += self.own_board_tables(shown, sizes)
        notes = self.board_note_metric is not None and (
            not self.board_note_rated or any(r.kind != PUBLISHED and self.rated(r) for r in shown)
        )
        tables += [
            self._task_table(task, task_sizes, shown, notes)
            for task, task_sizes in self._by_task(sizes).items()
        ]
        tables += factor_tables.board_tables(self, shown, sizes, self.headline_metric)
        for metric in self.metrics:
            if metric != self.headline_metric:
                tables += [self._overall_table(shown, sizes, metric)] if self.overall else []
                tables += [
                    self._task_table(task, task_sizes, shown, False, metric)
                    for task, task_sizes in self._by_task(sizes).items()
                ]
                tables += factor_tables.board_tables(self, shown, sizes, metric)
        return tables

    def _interval_note(self, rows: list) -> str:
        from ..report.intervals import NOTE, resamples_in

        return NOTE.format(resamples=resamples_in(rows, self.name))

    def _task_table(
        self, task: str, sizes: list[str], shown: list, notes: bool, metric: Optional[str] = None
    ) -> BoardTable:
        """One task by size of ``metric`` (default the headline); every row of a grid, the rows
        that ran it otherwise."""
        from ..report.intervals import interval

        own = metric in (None, self.headline_metric)
        metric = metric or self.headline_metric
        lines = [
            BoardLine(
                row,
                [self.value(row, task, size, metric) for size in sizes],
                [self.value(row, task, s, self.board_note_metric) for s in sizes]
                if notes
                else None,
                intervals=[interval(self.samples(row, task, size, metric)) for size in sizes],
            )
            for row in shown
            if self.overall or any(t == task for t, _ in row.results.get(self.name, {}))
        ]
        title = self.board_title.format(
            title=self.title, task=task, metric=metric, size_word=self.size_word
        )
        if not own and '{metric}' not in self.board_title:
            title += f': {metric}'
        if notes and self.board_note_rated:
            title += f' ({self.board_note_label} in brackets)'
        return BoardTable(
            f'{self.name}-{task}' + ('' if own else f'-{metric}'),
            title,
            sizes,
            lines,
            heading=3 if self.overall else 2,
            plotted=len(sizes) if self.board_plot and not self.overall else 0,
            note_label=self.board_note_label if notes else '',
            note='' if self.overall else self._interval_note(shown),
            axis=self.axis_label(),
            metric=metric,
            positions=self.level_positions(sizes),
        )

    def _overall_table(
        self, shown: list, sizes: list[str], metric: Optional[str] = None
    ) -> BoardTable:
        """The Overall by size of ``metric``: the headline's is the board's main table."""
        every, own = len(self.tasks), metric in (None, self.headline_metric)
        metric = metric or self.headline_metric
        return BoardTable(
            self.name if own else f'{self.name}-{metric}',
            self._overall_title(metric),
            [*sizes, 'avg'],
            [
                BoardLine(
                    row,
                    [self.overall_value(row, s, metric) for s in sizes]
                    + [self.average_value(row, sizes, metric)],
                    remark=self._absent_overall(row, sizes) if own else '',
                    intervals=[
                        self.pooled_interval(row, self._size_cells([s]), metric) for s in sizes
                    ]
                    + [self.pooled_interval(row, self._size_cells(sizes), metric)],
                )
                for row in shown
            ],
            headline=own,
            plotted=len(sizes),
            note=f'{self.overall} at a {self.size_word} is the unweighted mean of the {every} '
            f'{self.task_plural} there, given only where all {every} have a result. '
            + self._interval_note(shown),
            axis=self.axis_label(),
            metric=metric,
            positions=self.level_positions(sizes),
        )

    def _overall_title(self, metric: str) -> str:
        """The Overall's table, the same in the report and on the board."""
        title = f'{self.title}: {self.overall} by {self.size_name}'
        return title if metric == self.headline_metric else f'{title}: {metric}'

    def _size_cells(self, sizes: list[str]) -> list[Cell]:
        return [(task, size) for task in self.tasks for size in sizes]

    def _absent_overall(self, row, sizes: list[str]) -> str:
        """Why a published row has no Overall where it has task scores (a paper gave only some):
        said, not left as a row of dashes."""
        if row.kind != PUBLISHED or any(self.overall_value(row, s) is not None for s in sizes):
            return ''
        found = self.level_order(
            {s for t, s in row.results.get(self.name, {}) if t != self.overall}
        )
        return f'no {self.overall} published; {self.task_word} scores at {", ".join(found)} (provenance)'

    def _groups_table(self, shown: list, sizes: list[str]) -> BoardTable:
        groups = list(self.task_groups)
        return BoardTable(
            f'{self.name}-groups',
            f'{self.title}: {self.task_groups_name} (mean over {self.task_plural} and '
            f'{self.size_plural})',
            groups,
            [
                BoardLine(
                    row,
                    [self.group_value(row, group, sizes) for group in groups],
                    intervals=[
                        self.pooled_interval(row, self.group_cells(g, sizes)) for g in groups
                    ],
                )
                for row in shown
            ],
        )

    # Tidy rows and JSON -------------------------------------------------------------------------

    def tidy(self, row, sizes) -> Iterator[tuple]:
        """(table, item, size, metric, value, interval) of every number of a row: the Overall and
        task groups where declared, every cell's metrics (the headline with its interval), each
        factor value (table: the factor's name), then a rated note metric's Overall and cells."""
        from ..report.intervals import interval
        from . import factor_tables

        rated = self.board_note_metric if self.board_note_rated else None
        if self.overall:
            for metric in self.metrics:
                yield from self._average_rows(row, sizes, metric)
        for task, shown in self._by_task(sizes).items():
            table = self.task_word if self.overall else task
            for size in shown:
                for metric, value in row.results.get(self.name, {}).get((task, size), {}).items():
                    if metric != rated:
                        found = self.samples(row, task, size, metric)
                        bounds = interval(found) if metric in self.metrics else None
                        yield table, task, size, metric, value, bounds
        yield from factor_tables.tidy_rows(self, row, sizes)
        if rated and self.rated(row):
            yield from self._rated_rows(row, sizes)

    def _average_rows(self, row, sizes: list[str], metric: str) -> Iterator[tuple]:
        every = self.overall
        for size in sizes:
            found = self.pooled_interval(row, self._size_cells([size]), metric)
            yield 'overall', every, size, metric, self.overall_value(row, size, metric), found
        found = self.pooled_interval(row, self._size_cells(sizes), metric)
        yield 'overall', every, 'avg', metric, self.average_value(row, sizes, metric), found
        for group in self.task_groups:
            found = self.pooled_interval(row, self.group_cells(group, sizes), metric)
            value = self.group_value(row, group, sizes, metric)
            yield 'group', group, 'avg', metric, value, found

    def _rated_rows(self, row, sizes) -> Iterator[tuple]:
        metric = self.board_note_metric
        if self.overall:
            for size in sizes:
                value = self.overall_value(row, size, metric)
                yield 'overall', self.overall, size, metric, value, None
        for task, shown in self._by_task(sizes).items():
            table = self.task_word if self.overall else task
            for size in shown:
                yield table, task, size, metric, self.value(row, task, size, metric), None

    def json_fields(self, row, sizes) -> dict:
        """With an Overall: the row's Overall per size and its average (rounded as the board
        shows them), with their intervals; with factors, each value's numbers (``factors``)."""
        from ..report.rounding import rounded
        from . import factor_tables

        factors = {'factors': factor_tables.json_fields(self, row, sizes)} if self.factors else {}
        if not self.overall:
            return factors

        def shown(value):
            return None if value is None else rounded(value)

        return {
            'overall': {size: shown(self.overall_value(row, size)) for size in sizes},
            'avg': shown(self.average_value(row, sizes)),
            'overall_interval': {
                size: self.pooled_interval(row, self._size_cells([size])) for size in sizes
            },
            'avg_interval': self.pooled_interval(row, self._size_cells(sizes)),
            **factors,
        }
