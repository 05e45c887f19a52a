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

from .benchmarks import Cell, LengthUnit
from .factors import Factor
from .grid_tables import GridTables
from .sizes import by_size, is_size, is_whole, measure

SCORE, DEPTH = 'score', 'depth'  # the per-record keys of the declared evaluator's details
WORDS = LengthUnit('words', lambda text: len(text.split()))  # whitespace-separated
# What a ``level_unit`` that is a length of the prompt counts.
LENGTH_UNITS = {
    'words': WORDS,
    'characters': LengthUnit('characters', len),
    'tokens': LengthUnit('words', WORDS.count, model_tokens=True),
}
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
    'level': {'avg': 'the average column', 'all': "the usage tables' total column"},
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
    """What its levels count, said after a number on axes and in tables. A length of the prompt:
    ``'tokens'`` (the model's own tokens: RULER's 4k to 128k), ``'words'``, ``'characters'``;
    ``lveval inputs --count-only`` counts prompts so (``length_unit``). Or items of another
    kind (``'pairs'``, ``'documents'``: prompts are counted in words). Needed where levels are
    not named like ``16k``; None: ``16k``-like levels are words."""
    level_tokens: dict[str, int] = {}
    """A level's length in tokens, where the benchmark knows one (``{'4k': 4096}``; named buckets:
    ``{'short': 32000}``). Where every level of a plot has one, the plots place the levels at these
    lengths (a log axis) instead of evenly; a level with no place in the declared order (one
    built later) is ordered by it."""
    headline_metric: str = 'score'  # the mean of the per-record scores
    score_field: str = SCORE  # per record in the evaluator's details: a number, or a bool
    score_scale: float = 1.0  # what makes a detail's score a percentage (100 for fractions)
    depth_field: Optional[str] = None  # the record's answer depth (0-1), where it has one
    depth_bins: Union[int, tuple[float, ...], None] = 10
    """The rows of its depth maps: a number of equal slices of the context (10: tenths), the
    positions its records place answers at (``(0, 0.25, 0.5, 0.75, 1)``: a row each, a record
    in the row of the nearest), or None: a row per distinct position in the data (to 0.1%;
    tenths where there are more than 20)."""
    task_word: str = 'task'
    """What its tables call one task: ``dataset`` (LV-Eval), ``task``."""
    task_plural: str = 'tasks'
    """The same word for several, as declared (never ``task_word`` + 's'): ``datasets``."""
    size_word: str = 'size'
    """What its tables call one size: ``level`` (LV-Eval), ``setting`` (Ada-LEval)."""
    size_plural: str = 'sizes'
    """The same word for several, as declared: ``levels``, ``settings``."""
    size_name: str = 'size'
    """Its sizes as a plot's axis and in titles (``length level``); the axis adds its unit."""
    overall: Optional[str] = None
    """The name of its average over every task at a size (``Overall``: the unweighted mean of
    the tasks there, given only where all have a result), used for it everywhere: the report's
    row and table, the board's main table, tidy rows (item), plots, and a published row's task of
    that name. None: no such average (each task ranks on its own). The mean of a row over sizes
    is ``avg`` everywhere (column, tidy level, JSON key)."""
    task_groups: dict[str, tuple[str, ...]] = {}
    """Named sets of its tasks (LV-Eval's task types), each averaged over its tasks and the
    sizes: rows of a model's report table, a board table, tidy rows (table ``group``)."""
    task_groups_name: str = 'task groups'
    """What the board's table of ``task_groups`` is called: ``task types``."""
    factors: tuple[Factor, ...] = ()
    """Second factors beside task x level (``factors.Factor``): RULER's categories
    (``of_task``: task -> value), LongBench v2's difficulty or a hop count (``record_field``: a
    field of each record, kept per record in the evaluator's details under the factor's name).
    Each value gets, for every metric, a table by size with intervals and a plot in the report,
    a board table, tidy rows (table: the factor's name), JSON and summary groups
    (``{prefix}_{factor}_{value}`` over every size, ``..._{size}`` at one)."""
    summary_by: tuple[str, ...] = ('size',)
    """OpenCompass's summary groups, of these kinds in this order: ``'task'`` (a task over its
    sizes, named ``{prefix}_{task}``), ``'group'`` (a task group's cells, ``{prefix}_{group}``),
    ``'size'`` (the tasks at a size, ``{prefix}_{size}``), ``'all'`` (every cell,
    ``{prefix}_{summary_all}``). Declared ``factors`` add theirs after these."""
    summary_rows_by: Optional[tuple[str, ...]] = None
    """The order of the groups' rows in the summary (default: ``summary_by``'s); every cell's
    row follows them."""
    summary_all: Optional[str] = None
    """The name after the prefix of the group of every cell (kind ``'all'``): LV-Eval's ``qa``
    gives the group ``LVEval_qa``. None: no such group."""
    summary_metric: Optional[str] = None
    """The metric its groups average where it scores one metric (None: each dataset's first)."""
    summary_cell_metrics: tuple[str, ...] = ()
    """The metrics a cell's summary rows show, one row each (none: the dataset's row; a
    benchmark with several ``metrics`` shows each)."""
    published_file: Optional[Path] = None
    """The papers' numbers: a CSV of model, source, task, size, then one column per metric."""
    published_columns: dict[str, str] = {}
    """Columns of ``published_file`` named otherwise than here: ``{'size': 'setting'}``."""

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
        problems = super().check_declaration() + _names(f'{where}.name', (self.name,), 'name')
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
        problems += self._metric_problems(where) + _depth_bins(where, self.depth_bins)
        for factor in self.factors if not problems else ():
            problems += factor.problems(where, self.tasks, self.metrics)
        return problems

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

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        """What ``lveval inputs --count-only`` counts the prompts of its datasets in: its
        ``level_unit`` where that is a length (``tokens``: a model's own, words for a model
        without a tokenizer), words otherwise. A benchmark whose lengths differ by dataset (LV-Eval:
        words or characters by language) overrides it."""
        if self.split_abbr(abbr) is None:
            return None
        return LENGTH_UNITS.get(self.level_unit or WORDS.name, WORDS)

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

    def _factor_groups(self, cells: list[Cell], every_size: bool = True) -> list[dict]:
        """Each factor value's summary groups, per metric: over every size (where
        ``every_size``), then at each size. A per-task value's average its tasks' cells; a
        per-record value the cells' means over its records (``Factor.metric_key``)."""
        sizes = self.level_order(size for _, size in cells)
        groups = []
        for metric in self._summary_metrics():
            for factor in self.factors:
                for value in factor.shown_values():
                    members = factor.members(value, self.tasks)
                    found = [c for c in cells if c[0] in members]
                    parts = [(f'{factor.name}_{value}', found)] if every_size else []
                    parts += [
                        (f'{factor.name}_{value}_{size}', [c for c in found if c[1] == size])
                        for size in sizes
                    ]
                    groups += [
                        {
                            'name': self._group_name(name, metric),
                            'subsets': [
                                self._factor_subset(c, metric, factor, value) for c in in_it
                            ],
                        }
                        for name, in_it in parts
                        if in_it
                    ]
        return groups

    def _factor_subset(self, cell: Cell, metric: Optional[str], factor: Factor, value: str):
        if not factor.per_record:
            return self._subset(cell, metric)
        return [self.abbr(*cell), factor.metric_key(metric or self.headline_metric, value)]

    def summary(self, abbrs: Optional[list[str]] = None) -> tuple[list, list[dict]]:
        """Rows and groups of OpenCompass's summary for its datasets among ``abbrs`` (None: its
        standard cells): its groups, then its factors' groups, then every cell."""
        cells = self._summary_cells(abbrs)
        factors = self._factor_groups(cells)
        shown = self._summary_groups(cells, self.summary_rows_by) + factors
        return self._summary_rows(shown, cells), self._summary_groups(cells) + factors

    def summary_config(self, datasets: Optional[list[dict]] = None) -> dict:
        abbrs = None if datasets is None else [dataset['abbr'] for dataset in datasets]
        rows, groups = self.summary(abbrs)
        return dict(dataset_abbrs=rows, summary_groups=groups)

    def summary_groups(self, abbrs: list[str], named: set[str]) -> tuple[list[dict], list[str]]:
        """The average over its tasks at each size of the run's datasets that the configured
        groups do not name, and each factor value's there; the rows: those groups, then the
        run's datasets at those sizes."""
        cells = [c for c in self._summary_cells(abbrs) if f'{self.prefix}_{c[1]}' not in named]
        groups = self._summary_groups(cells, ['size'])
        groups += [g for g in self._factor_groups(cells, False) if g['name'] not in named]
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

    def record_factors(self, result: dict) -> dict[str, list]:
        """Each per-record factor's values (text; None where a record has none), read from the
        details under the factor's name, where every record has the key."""
        found = {}
        for factor in self.factors:
            values = self._details(result, factor.name) if factor.per_record else None
            if values:
                found[factor.name] = [None if v is None else str(v) for v in values]
        return found

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
