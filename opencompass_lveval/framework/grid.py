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
import difflib
import re
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Optional, Union

from .benchmarks import Cell
from .grid_tables import GridTables
from .sizes import by_size, is_size, is_whole, measure

SCORE, DEPTH = 'score', 'depth'  # the per-record keys of the declared evaluator's details
# Names end abbreviations, file names and JSON keys: what each kind may hold, said in refusals.
_PLAIN = (re.compile(r'[A-Za-z0-9][A-Za-z0-9_.+-]*'), "letters, digits, '_', '.', '+', '-'")
_FORMS = {
    'name': _PLAIN,
    'prefix': _PLAIN,
    'task': _PLAIN,
    'level': (re.compile(r'[A-Za-z0-9][A-Za-z0-9.+-]*'), "letters, digits, '.', '+', '-' (no '_')"),
    'metric': (re.compile(r'[A-Za-z][A-Za-z0-9_]*'), "a letter, then letters, digits, '_'"),
}
# Levels the tables use for averages; keys of a result or its details that are no metric.
_RESERVED = {
    'level': {'avg': 'the average column', 'all': 'the tidy rows of averages'},
    'metric': dict.fromkeys(
        ('details', 'provenance', 'error', 'pred', 'answer', DEPTH, 'example_abbr'),
        'a key of every result or its details',
    ),
}


class GridBenchmark(GridTables):
    """Results as cells (task, size) of a headline metric with per-record scores, presented
    alike. Dataset abbreviations are ``{prefix}_{task}_{size}``."""

    prefix: str  # dataset abbreviations are ``{prefix}_{task}_{level}``
    tasks: tuple[str, ...]  # its tasks, in the order tables list them
    sizes: tuple[str, ...] = ()
    """Its levels, in its own order: names such as ``16k`` (a length) or ``75`` (what
    ``level_unit`` counts); each ends its dataset abbreviations and file names, so letters,
    digits, ``.``, ``+`` and ``-`` only. Data at another level runs the same way where its name
    has the declared levels' form (``16k``-like, or a whole number)."""
    level_unit: Optional[str] = None
    """What its level names count, said after a number on axes and in tables (``pairs``,
    ``documents``). Needed where levels are not named like ``16k``; without it, levels named so
    are lengths in its length unit (``length_unit``)."""
    level_tokens: dict[str, int] = {}
    """A level's length in tokens, where the benchmark knows one: where a level has no place in
    the declared order (one built later), it orders the levels."""
    headline_metric: str = 'score'  # the mean of the per-record scores
    score_field: str = SCORE  # per record in the evaluator's details: a number, or a bool
    score_scale: float = 1.0  # what makes a detail's score a percentage (100 for fractions)
    depth_field: Optional[str] = None  # the record's answer depth (0-1), where it has one
    depth_bins: Union[int, tuple[float, ...], None] = 10
    """The rows of its depth maps: a number of equal slices of the context (10: tenths), the
    positions its records place answers at (``(0, 0.25, 0.5, 0.75, 1)``: a row each, a record
    in the row of the nearest), or None: a row per distinct position in the data (to 0.1%;
    tenths where there are more than 20)."""
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
        """Every metric scored per record, the headline among them, in the order tables list
        them. Each gets what the headline gets:
        a table by size with intervals and a plot per task, depth maps, board tables with
        intervals, tidy rows and summary rows. A metric other than the headline is read from
        each record's details under its own name, in percent (True / False count 100 and 0).
        Default: the headline alone."""
        return (self.headline_metric,)

    @property
    def interval_metric(self) -> str:
        """The headline: what ``record_scores`` gives by default."""
        return self.headline_metric

    # Registration -------------------------------------------------------------------------------

    def check_declaration(self) -> list[str]:
        """Names the framework cannot use (empty, repeated, or holding characters that break
        abbreviations and file names), levels without their unit word, metrics the board or the
        evaluator would lose; one line each, naming the attribute and the fix."""
        where = type(self).__name__
        problems = _names(f'{where}.name', (self.name,), 'name')
        problems += _names(f'{where}.prefix', (getattr(self, 'prefix', ''),), 'prefix')
        problems += _names(f'{where}.tasks', getattr(self, 'tasks', ()), 'task')
        for task in dict.fromkeys(self.tasks if not problems else ()):
            problems += _names(f'{where}.sizes ({task})', self.sizes_of(task), 'level')
        if not problems and not self.levels():
            problems.append(f"{where}.sizes is empty: declare its levels, e.g. ('2k', '4k')")
        sized = all(is_size(level) for level in self.levels())
        if not problems and not sized and not self.level_unit:
            problems.append(
                f'{where}.level_unit is not declared: its levels ({", ".join(self.levels())}) '
                "are not lengths like 16k; declare what they count, e.g. level_unit = 'pairs'"
            )
        return problems + self._metric_problems(where) + _depth_bins(where, self.depth_bins)

    def _metric_problems(self, where: str) -> list[str]:
        headline, metrics = self.headline_metric, tuple(self.metrics)
        problems = _names(f'{where}.metrics', metrics, 'metric', allowed=(headline,))
        if SCORE in metrics and headline != SCORE:
            problems.append(
                f"{where}.metrics holds 'score', the details' key of the headline "
                f'{headline!r}: rename it'
            )
        if headline not in metrics:
            problems.append(
                f'{where}.metrics {metrics} leaves out its headline_metric {headline!r}: list '
                'it, or leave metrics out (default: the headline alone)'
            )
        for attribute in ('board_metrics', 'result_metrics'):
            lacking = [m for m in metrics if m not in getattr(self, attribute)]
            if lacking:
                problems.append(
                    f'{where}.{attribute} {tuple(getattr(self, attribute))} leaves out '
                    f'{", ".join(map(repr, lacking))} of its metrics: without them the '
                    'leaderboard and reports drop their tables; add them, or leave '
                    f'{attribute} out (a declared benchmark derives it from metrics)'
                )
        return problems

    # Cells --------------------------------------------------------------------------------------

    def abbr(self, task: str, size: str) -> str:
        """A cell's dataset abbreviation: ``{prefix}_{task}_{level}``."""
        return f'{self.prefix}_{task}_{size}'

    def split_abbr(self, abbr: str) -> Optional[Cell]:
        found = re.fullmatch(rf'{re.escape(self.prefix)}_(.+)_([^_]+)', abbr)
        if found and found[1] in self.tasks and self.is_level(found[2]):
            return found[1], found[2]
        return None

    def levels(self) -> tuple[str, ...]:
        """Its declared levels, each once, in its order (every task's)."""
        return tuple(dict.fromkeys(size for task in self.tasks for size in self.sizes_of(task)))

    def is_level(self, name: str) -> bool:
        """A declared level, or a name of their form: ``16k``-like sizes where every declared
        level is one, whole numbers where every declared level is one."""
        declared = self.levels()
        if name in declared:
            return True
        if all(is_size(level) for level in declared):
            return is_size(name)
        return all(is_whole(level) for level in declared) and is_whole(name)

    def level_order(self, names) -> list[str]:
        """The distinct level names in its order: sizes (``16k``) by size where every name is
        one; otherwise the declared levels as declared, then the others by ``level_tokens``, or
        by the number their name says, then by name."""
        names, declared = set(names), self.levels()
        if all(is_size(name) for name in (*names, *declared)):
            return by_size(names)
        rank = {name: number for number, name in enumerate(declared)}

        def key(name: str) -> tuple:
            size = self.level_tokens.get(name) or measure(name) or 0
            return name not in rank, rank.get(name, 0), size, name

        return sorted(names, key=key)

    def sizes_of(self, task: str) -> tuple[str, ...]:
        """A task's standard sizes."""
        return self.sizes

    def _abbrs_by_size(self, task: str, abbrs) -> list[str]:
        """The abbreviations of ``task`` among ``abbrs``, smallest size first."""
        sizes = self.level_order(
            c[1] for abbr in abbrs if (c := self.split_abbr(abbr)) and c[0] == task
        )
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
        tasks = self._known_tasks(tasks, 'configs') if tasks else self.tasks
        sizes = self._known_levels(sizes, 'configs') if sizes else None
        return [
            self.cell_config(task, size, path, **options)
            for task in tasks
            for size in sizes or self.sizes_of(task)
        ]

    def _known_tasks(self, tasks, where: str) -> list[str]:
        """``tasks`` (one name or several), each one of its own, or an error naming the unknown
        one, the closest known name and all of them: a misspelled task would add nothing."""
        tasks = [tasks] if isinstance(tasks, str) else list(tasks)
        for task in tasks:
            if task not in self.tasks:
                close = difflib.get_close_matches(str(task), self.tasks, n=1)
                guess = f'did you mean {close[0]!r}? ' if close else ''
                raise ValueError(
                    f'{self.name}.{where}: no task {task!r}; {guess}its tasks: '
                    f'{", ".join(self.tasks)}'
                )
        return tasks

    def _known_levels(self, sizes, where: str) -> list[str]:
        """``sizes`` (one name or several), each a level of its form (``is_level``), or an error
        naming the one that is not and the form."""
        sizes = [sizes] if isinstance(sizes, str) else list(sizes)
        sized = all(is_size(level) for level in self.levels())
        form = '; a size is a whole number of thousands or millions, like 512k or 1m' * sized
        for size in sizes:
            if not self.is_level(size):
                raise ValueError(
                    f'{self.name}.{where}: {size!r} is no level of its form (its levels: '
                    f'{", ".join(self.levels())}){form}'
                )
        if not sizes:
            raise ValueError(f'{self.name}.{where}: give at least one level, e.g. 512k')
        return sizes

    def at_sizes(self, configs: list, sizes, tasks=None) -> list:
        """Copies of its dataset configs at other sizes (data made with the builders: ``512k``,
        any size): one per task (all, or ``tasks``) and size, from the task's first plain config,
        so whatever a config changed (``limit``, the extraction mode) is kept. A task or size
        that matches nothing is an error naming the known ones, never an empty list."""
        sizes = self._known_levels(sizes, 'at_sizes')
        tasks = self._known_tasks(tasks, 'at_sizes') if tasks is not None else None
        first: dict[str, dict] = {}
        for config in configs:
            cell = self.split_abbr(config.get('abbr', ''))
            if cell and (tasks is None or cell[0] in tasks):
                first.setdefault(cell[0], config)
        lacking = [task for task in tasks or () if task not in first]
        if lacking or not first:
            raise ValueError(
                f'{self.name}.at_sizes: the {len(configs)} configs given hold no plain config of '
                f'{", ".join(lacking) or "any of its tasks"} to copy; give its dataset configs '
                f"(named('{self.name}').configs(...), or the shipped ones)"
            )
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
            sizes = self.level_order(size for _, size in present)
            return [(task, size) for task in self.tasks for size in sizes]
        return [
            (t, s) for t in self.tasks for s in self.level_order(s for u, s in present if u == t)
        ]

    def _summary_metrics(self) -> list[Optional[str]]:
        """What its summary groups average: ``summary_metric`` (None: the dataset's first) where
        it scores one metric; each of its ``metrics`` otherwise."""
        return [self.summary_metric] if len(self.metrics) == 1 else list(self.metrics)

    def _subset(self, cell: Cell, metric: Optional[str]):
        abbr = self.abbr(*cell)
        return [abbr, metric] if metric else abbr

    def _group_name(self, name: str, metric: Optional[str]) -> str:
        """``{prefix}_{name}``; a metric besides the headline adds ``_{metric}``."""
        own = metric in (None, self.summary_metric, self.headline_metric)
        return f'{self.prefix}_{name}' if own else f'{self.prefix}_{name}_{metric}'

    def _summary_groups(self, cells: list[Cell], kinds=None) -> list[dict]:
        """Its summary groups over ``cells`` (kinds in ``summary_by`` order), empty ones left
        out."""
        sizes = self.level_order(size for _, size in cells)
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
            {
                'name': self._group_name(name, metric),
                'subsets': [self._subset(c, metric) for c in members],
            }
            for metric in self._summary_metrics()
            for kind in kinds or self.summary_by
            for name, members in found[kind]
            if members
        ]

    def _summary_rows(self, groups: list[dict], cells: list[Cell]) -> list:
        """The summary's rows: the groups, then every cell (each of its metrics, if declared)."""
        rows: list = [group['name'] for group in groups]
        for cell in cells:
            abbr = self.abbr(*cell)
            metrics = self.summary_cell_metrics or (self.metrics if len(self.metrics) > 1 else ())
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
        from ..report.results import detail_value

        try:
            return [detail_value(d, key) for d in result.get('details') or []] or None
        except (KeyError, TypeError, IndexError):
            return None

    def record_scores(self, result: dict, metric: Optional[str] = None) -> Optional[list[float]]:
        """Per-record values in percent of ``metric`` (default the headline, read from the
        details' ``score_field``; another metric from its own key): True/False count 100 and 0;
        None unless every record has one of one kind."""
        own = metric in (None, self.headline_metric)
        found = self._details(result, self.score_field if own else metric)
        if found and all(isinstance(v, bool) for v in found):
            return [100.0 * v for v in found]
        if found and all(_is_number(v) for v in found):
            return [(self.score_scale if own else 1.0) * float(v) for v in found]
        return None

    def record_depths(self, run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
        found = self._details(result, DEPTH) if self.depth_field else None
        return [v if _is_number(v) else None for v in found] if found else None

    def depth_maps(
        self, results: dict[str, dict], scores: dict, depths: dict, metric_scores=None
    ) -> list:
        """Per metric and task, the metric by answer depth (rows: ``depth_bins``) and level,
        where records carry depths; ``metric_scores`` holds the other metrics' per-record values
        (metric -> abbr -> values) as ``scores`` holds the headline's."""
        from ..report.depth import depth_map

        maps = []
        for metric in self.metrics:
            found = scores if metric == self.headline_metric else (metric_scores or {}).get(metric)
            for task in self.tasks:
                columns = {
                    self.split_abbr(abbr)[1]: (found[abbr], depths[abbr])
                    for abbr in self._abbrs_by_size(task, results)
                    if abbr in (found or {}) and abbr in depths
                }
                stem = f'{self.name}_{metric}_by_answer_depth'
                one = depth_map(
                    stem, task, columns, self.depth_bins, size_axis=self.axis_label(), metric=metric
                )
                maps += [one] if one else []
        return maps

    # The papers' numbers ------------------------------------------------------------------------

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The rows of ``published_file`` whose task is one of its own (any case): model, source,
        cell, and every metric the paper gives there."""
        from ..leaderboard.published import number

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


def _names(where: str, names, kind: str, allowed=()) -> list[str]:
    """What is wrong with a declared tuple of names of one kind (task, level, metric)."""
    if isinstance(names, str) or not isinstance(names, (tuple, list)):
        return [f'{where} is {names!r}, not a tuple of names: write ({names!r},)']
    form, rule = _FORMS[kind]
    problems, seen = [], set()
    for name in names:
        if not isinstance(name, str) or not name:
            problems.append(f'{where} holds {name!r}: each {kind} needs a name')
        elif not form.fullmatch(name):
            what = 'benchmark name' if kind == 'name' else f'{kind} name'
            problems.append(f'{where} holds {name!r}: a {what} is {rule}; rename it')
        elif name in _RESERVED.get(kind, {}) and name not in allowed:
            used = _RESERVED[kind][name]
            problems.append(f'{where} holds {name!r}, which is {used}: rename it')
        elif name in seen:
            problems.append(f'{where} names {name!r} twice: name each {kind} once')
        seen.add(name)
    return problems


def _depth_bins(where: str, bins) -> list[str]:
    """What is wrong with a declared ``depth_bins``: a count from 1, positions from 0 to 1 in
    increasing order, or None."""
    if bins is None or (isinstance(bins, int) and not isinstance(bins, bool) and bins >= 1):
        return []
    if (
        isinstance(bins, (tuple, list))
        and bins
        and all(_is_number(p) and 0 <= p <= 1 for p in bins)
        and all(a < b for a, b in zip(bins, bins[1:]))
    ):
        return []
    return [
        f'{where}.depth_bins {bins!r} is no number of rows from 1 and no positions from 0 to 1 '
        'in increasing order: declare e.g. 10 (tenths) or (0, 0.25, 0.5, 0.75, 1), or None '
        "(the data's positions)"
    ]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
