"""A benchmark of cells (task x size) stated as data; the framework presents it.

``GridBenchmark`` is every benchmark here: LV-Eval (datasets x length levels), Ada-LEval (tasks x
token settings) and the declared ones (``declared.DeclaredBenchmark``, the repository's example). A
benchmark states its cells, its headline metric, where each record's score and answer depth live,
its averages (an Overall per size and task groups, where it has them), its OpenCompass dataset
config per cell, the shape of its summary, its published file and the words its tables use. The
framework supplies from that: abbreviations, the OpenCompass configs at any size and the summary
groups, per-record scores and depths, depth maps, the run's tables and plots, the leaderboard
tables, tidy rows and JSON, the headline a board ranks by, and the published rows
(``grid_tables.py`` holds the tables). A benchmark overrides only what is its own.

Two layouts, chosen by whether the benchmark declares an ``overall``:

- without one, each task has its own sizes (Ada-LEval's settings differ by task): one table per
  task of the headline metric by size, every row ranked by its mean over the cells it has;
- with one, the tasks share their sizes (a grid): a model's table of every task by size with the
  task groups and the average, an Overall table (the mean over the tasks at each size, shown only
  where all are present) that the board ranks by and plots, and one table per task.
"""

from __future__ import annotations

import copy
import csv
import re
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from .benchmarks import Cell
from .grid_tables import GridTables
from .sizes import by_size, is_size

SCORE, DEPTH = 'score', 'depth'  # the per-record keys of the declared evaluator's details


class GridBenchmark(GridTables):
    """Results as cells (task, size) of a headline metric with per-record scores, presented
    alike. Dataset abbreviations are ``{prefix}_{task}_{size}``."""

    prefix: str
    tasks: tuple[str, ...]
    sizes: tuple[str, ...] = ()  # its standard sizes; data at any other size runs the same way
    headline_metric: str = 'score'  # the mean of the per-record scores
    score_field: str = SCORE  # per record in the evaluator's details: a number, or a bool
    score_scale: float = 1.0  # what makes a detail's score a percentage (100 for fractions)
    depth_field: Optional[str] = None  # the record's answer depth (0-1), where it has one
    # What its tables call a task and a size ('dataset', 'level'), and its sizes as an axis.
    task_word: str = 'task'
    size_word: str = 'size'
    size_name: str = 'size'
    # Averages: the Overall at a size (the unweighted mean of every task there), named as on the
    # board and in published files; task groups, each the mean over its tasks and the sizes.
    overall: Optional[str] = None
    task_groups: dict[str, tuple[str, ...]] = {}
    task_groups_name: str = 'task groups'
    # OpenCompass's summary: its groups, of these kinds in this order ('task' over its sizes,
    # 'group' over a task group's cells, 'size' over the tasks at a size, 'all' over every cell,
    # named ``summary_all``), its rows (the groups in ``summary_rows_by`` order, default the same,
    # then every cell), the metric groups average (None: the dataset's first) and the metrics a
    # cell's rows show (none: the dataset's row).
    summary_by: tuple[str, ...] = ('size',)
    summary_rows_by: Optional[tuple[str, ...]] = None
    summary_all: Optional[str] = None
    summary_metric: Optional[str] = None
    summary_cell_metrics: tuple[str, ...] = ()
    # The papers' numbers: a CSV of model, source, task, size, then one column per metric, the
    # columns named as here unless ``published_columns`` maps a name to the file's.
    published_file: Optional[Path] = None
    published_columns: dict[str, str] = {}

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric scored per record, the headline first. Each gets what the headline gets:
        a table by size with intervals and a plot per task, depth maps, board tables with
        intervals, tidy rows and summary rows. A metric other than the headline is read from
        each record's details under its own name, in percent (True / False count 100 and 0).
        Default: the headline alone."""
        return (self.headline_metric,)

    @property
    def interval_metric(self) -> str:
        return self.headline_metric

    # Cells --------------------------------------------------------------------------------------

    def abbr(self, task: str, size: str) -> str:
        return f'{self.prefix}_{task}_{size}'

    def split_abbr(self, abbr: str) -> Optional[Cell]:
        found = re.fullmatch(rf'{re.escape(self.prefix)}_(.+)_([^_]+)', abbr)
        if found and found[1] in self.tasks and is_size(found[2]):
            return found[1], found[2]
        return None

    def sizes_of(self, task: str) -> tuple[str, ...]:
        """A task's standard sizes."""
        return self.sizes

    def _abbrs_by_size(self, task: str, abbrs) -> list[str]:
        """The abbreviations of ``task`` among ``abbrs``, smallest size first."""
        sizes = by_size(c[1] for abbr in abbrs if (c := self.split_abbr(abbr)) and c[0] == task)
        return [self.abbr(task, size) for size in sizes]

    # OpenCompass dataset configs ----------------------------------------------------------------

    def cell_fields(self, task: str, size: str) -> dict:
        """The keys of a dataset config that name its cell: the abbreviation, and how the
        dataset class is told the cell."""
        return {'abbr': self.abbr(task, size)}

    @abstractmethod
    def cell_config(self, task: str, size: str, path: str, **options) -> dict:
        """One cell's OpenCompass dataset config reading the folder ``path``
        (``declared.dataset_config`` builds it), ``options`` the benchmark's own."""

    def default_data_dir(self) -> str:
        """The data folder of configs given none."""
        return '.'

    def configs(self, path=None, sizes=None, tasks=None, **options) -> list[dict]:
        """Its OpenCompass dataset configs reading ``path``, at ``sizes`` (any size; default
        each task's standard ones) of ``tasks`` (default all)."""
        path = path or self.default_data_dir()
        return [
            self.cell_config(task, size, path, **options)
            for task in tasks or self.tasks
            for size in sizes or self.sizes_of(task)
        ]

    def at_sizes(self, configs: list, sizes, tasks=None) -> list:
        """Copies of its dataset configs at other sizes (data made with the builders: ``512k``,
        any size): one per task (all, or ``tasks``) and size, from the task's first plain config,
        so whatever a config changed (``limit``, the extraction mode) is kept."""
        first: dict[str, dict] = {}
        for config in configs:
            cell = self.split_abbr(config['abbr'])
            if cell and (tasks is None or cell[0] in tasks):
                first.setdefault(cell[0], config)
        copies = []
        for task, config in first.items():
            for size in sizes:
                copied = copy.deepcopy(config)
                copied.update(self.cell_fields(task, size))
                copies.append(copied)
        return copies

    # OpenCompass summary groups -----------------------------------------------------------------

    def _summary_cells(self, abbrs: Optional[list[str]]) -> list[Cell]:
        """The summary's cells: the standard ones, or those of the run's datasets ``abbrs``; with
        an Overall, every task at each size any of them has (an average needs all)."""
        if abbrs is None:
            return [(task, size) for task in self.tasks for size in self.sizes_of(task)]
        present = {cell for abbr in abbrs if (cell := self.split_abbr(abbr))}
        if self.overall:
            sizes = by_size(size for _, size in present)
            return [(task, size) for task in self.tasks for size in sizes]
        return [(t, s) for t in self.tasks for s in by_size(s for u, s in present if u == t)]

    def _subset(self, cell: Cell):
        abbr = self.abbr(*cell)
        return [abbr, self.summary_metric] if self.summary_metric else abbr

    def _summary_groups(self, cells: list[Cell], kinds=None) -> list[dict]:
        """Its summary groups over ``cells`` (kinds in ``summary_by`` order), empty ones left
        out."""
        sizes = by_size(size for _, size in cells)
        grouped = [
            (g, [c for t in members for c in cells if c[0] == t])
            for g, members in self.task_groups.items()
        ]
        every = [c for _, found in grouped for c in found] if grouped else cells
        found = {
            'all': [(self.summary_all, every)] if self.summary_all else [],
            'size': [(size, [c for c in cells if c[1] == size]) for size in sizes],
            'group': grouped,
            'task': [(task, [c for c in cells if c[0] == task]) for task in self.tasks],
        }
        return [
            {'name': f'{self.prefix}_{name}', 'subsets': [self._subset(c) for c in members]}
            for kind in kinds or self.summary_by
            for name, members in found[kind]
            if members
        ]

    def _summary_rows(self, groups: list[dict], cells: list[Cell]) -> list:
        """The summary's rows: the groups, then every cell (each of its metrics, if declared)."""
        rows: list = [group['name'] for group in groups]
        for cell in cells:
            abbr = self.abbr(*cell)
            metrics = self.summary_cell_metrics
            rows += [[abbr, metric] for metric in metrics] if metrics else [abbr]
        return rows

    def summary(self, abbrs: Optional[list[str]] = None) -> tuple[list, list[dict]]:
        """Rows and groups of OpenCompass's summary for its datasets among ``abbrs`` (None: its
        standard cells)."""
        cells = self._summary_cells(abbrs)
        shown = self._summary_groups(cells, self.summary_rows_by)
        return self._summary_rows(shown, cells), self._summary_groups(cells)

    def summary_config(self, datasets: Optional[list[dict]] = None) -> dict:
        abbrs = None if datasets is None else [dataset['abbr'] for dataset in datasets]
        rows, groups = self.summary(abbrs)
        return dict(dataset_abbrs=rows, summary_groups=groups)

    def summary_groups(self, abbrs: list[str], named: set[str]) -> tuple[list[dict], list[str]]:
        """The average over its tasks at each size of the run's datasets that the configured
        groups do not name, and the rows: those groups, then the run's datasets at those sizes."""
        cells = [c for c in self._summary_cells(abbrs) if f'{self.prefix}_{c[1]}' not in named]
        groups = self._summary_groups(cells, ['size'])
        wanted = {size for _, size in cells}
        present = [c for abbr in abbrs if (c := self.split_abbr(abbr)) and c[1] in wanted]
        return groups, self._summary_rows(groups, present) if groups else []

    # Per-record scores and depths ---------------------------------------------------------------

    def _details(self, result: dict, key: str) -> Optional[list]:
        from .report.results import detail_value

        try:
            return [detail_value(d, key) for d in result.get('details') or []] or None
        except (KeyError, TypeError, IndexError):
            return None

    def record_scores(self, result: dict) -> Optional[list[float]]:
        """Per-record scores in percent from the details' ``score_field`` (True/False count 100
        and 0); None unless every record has one of one kind."""
        found = self._details(result, self.score_field)
        if found and all(isinstance(v, bool) for v in found):
            return [100.0 * v for v in found]
        if found and all(_is_number(v) for v in found):
            return [self.score_scale * float(v) for v in found]
        return None

    def record_depths(self, run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
        found = self._details(result, DEPTH) if self.depth_field else None
        return [v if _is_number(v) else None for v in found] if found else None

    def depth_maps(self, results: dict[str, dict], scores: dict, depths: dict) -> list:
        """Per task, the score by answer depth and size, where records carry depths."""
        from .report.depth import depth_map

        maps = []
        for task in self.tasks:
            columns = {
                self.split_abbr(abbr)[1]: (scores[abbr], depths[abbr])
                for abbr in self._abbrs_by_size(task, results)
                if abbr in scores and abbr in depths
            }
            found = depth_map(f'{self.name}_score_by_answer_depth', task, columns)
            maps += [found] if found else []
        return maps

    # The papers' numbers ------------------------------------------------------------------------

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The rows of ``published_file`` whose task is one of its own (any case): model, source,
        cell, and every metric the paper gives there."""
        from .leaderboard.published import number

        if self.published_file is None:
            return
        column = self.published_columns.get
        tasks = {task.lower(): task for task in self.tasks}
        with open(self.published_file, newline='', encoding='utf-8') as stream:
            for line in csv.DictReader(stream):
                task = tasks.get(line[column('task', 'task')].lower())
                values = {
                    metric: value
                    for metric in self.result_metrics
                    if (value := number(line.get(column(metric, metric)) or '')) is not None
                }
                if task and values:
                    cell = (task, line[column('size', 'size')])
                    yield line['model'], line['source'], cell, values


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
