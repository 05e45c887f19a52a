"""Runs and published results merged into one board: rows, their results and provenance.

A measured row is one model under one set of settings (``RowKey``: its abbr, its window
``max_seq_len``, its input mode and the package version). A model run under other settings is
another row, labelled with what differs. Within a row the newest result per dataset wins; where
the data under a dataset changed between runs, or a benchmark finds the row's results disagree
(``Benchmark.row_conflicts``: Ada-LEval's extraction modes), the board says so (a conflict). A row missing anything it was asked to run is incomplete; each
benchmark derives its own averages (LV-Eval's Overall) only where every member is present.
Published rows are kept apart. Rows hold results per benchmark, keyed by (task, size).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

import numpy as np

from ..framework import benchmarks
from ..report.intervals import RESAMPLES, SEED, bootstrap_cells
from ..report.tables import MEASURED, PUBLISHED, SYNTHETIC, number, synthetic_label
from .published import published_rows
from .runs import Result, Run, config_digest, missing_reason
from .usage import add_usage, result_usage

OUR_MODELS = 'opencompass_lveval.'  # where our wrappers' dumped ``type`` points


@dataclass
class Row:
    label: str
    kind: str  # measured | synthetic (measured on synthetic data) | published
    model: str
    settings: dict = field(default_factory=dict)
    # benchmark name -> (task, size) -> metric -> value
    results: dict[str, dict[tuple[str, str], dict[str, float]]] = field(default_factory=dict)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (dataset abbr, why)
    conflicts: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)
    # benchmark name -> (task, size) -> the cell's result (per-record scores, depths, fingerprint)
    records: dict[str, dict[tuple[str, str], Result]] = field(default_factory=dict)
    # benchmark name -> (task, size) -> bootstrap distribution of the cell's mean (``intervals``)
    samples: dict[str, dict[tuple[str, str], Any]] = field(default_factory=dict)
    # benchmark name -> metric -> (task, size) -> the same for a metric besides the headline
    metric_samples: dict[str, dict[str, dict[tuple[str, str], Any]]] = field(default_factory=dict)
    # benchmark name -> metric -> (task, size, factor, value) -> the same for the records of a
    # per-record factor's value in a cell (``framework/factors.py``)
    factor_samples: dict[str, dict[str, dict[tuple, Any]]] = field(default_factory=dict)
    # benchmark name -> variant dataset abbr -> its result (``Benchmark.keeps_variant``)
    variants: dict[str, dict[str, Result]] = field(default_factory=dict)
    # benchmark name -> size -> what the results shown cost to run (``usage.py``)
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.missing


@dataclass
class Board:
    rows: list[Row]
    sizes: dict[str, Any]  # benchmark name -> what it shows (levels, settings per task)
    # rows measured on synthetic data stay after every other row, in any order a reader picks;
    # false where the board was built with ``include_synthetic`` (ranked among the measured)
    synthetic_last: bool = True

    @property
    def missing(self) -> list[tuple[str, str, str]]:
        return [(row.label, dataset, why) for row in self.rows for dataset, why in row.missing]

    def shown_sizes(self) -> str:
        """What the board shows per benchmark, in a line: ``lveval 16k, 32k; adaleval ...``."""
        parts = []
        for name, sizes in self.sizes.items():
            if flat := benchmarks.named(name).shown_sizes(sizes):
                parts.append(f'{name} {", ".join(flat)}')
        return '; '.join(parts) or '-'

    @property
    def conflicts(self) -> list[tuple[str, str]]:
        return [(row.label, note) for row in self.rows for note in row.conflicts]


class RowKey(NamedTuple):
    model: str
    window: Optional[int]
    inputs: Optional[str]
    package_version: Optional[str]


def _model_settings(run: Run, model: str) -> tuple[Optional[int], Optional[str]]:
    """(window, input mode) of a model in a run, from the config the run dumped; our wrappers
    default to exact inputs."""
    config = run.models.get(model, {})
    ours = str(config.get('type', '')).startswith(OUR_MODELS)
    return config.get('max_seq_len'), config.get('inputs', 'exact' if ours else None)


def _version(result: Result) -> Optional[str]:
    return result.provenance.get('package_version')


def _fingerprint(result: Result) -> Optional[str]:
    return result.provenance.get('data_fingerprint')


class _Keys:
    """Which row a result, and a run's asked-for datasets, belong to. A result without a package
    version joins the newest version seen for its model and settings."""

    def __init__(self, runs: list[Run]) -> None:
        self.newest: dict[tuple, str] = {}
        for run in runs:
            for result in run.results:
                if _version(result):
                    self.newest[(result.model, *_model_settings(run, result.model))] = _version(
                        result
                    )

    def of_result(self, run: Run, result: Result) -> RowKey:
        base = (result.model, *_model_settings(run, result.model))
        return RowKey(*base, _version(result) or self.newest.get(base))

    def of_asked(self, run: Run, model: str) -> RowKey:
        """The row a run's asked-for datasets belong to: its newest version for the model."""
        base = (model, *_model_settings(run, model))
        own = [_version(r) for r in run.results if r.model == model and _version(r)]
        return RowKey(*base, own[-1] if own else self.newest.get(base))


def _open_rows(runs: list[Run], keys: _Keys) -> tuple[dict[RowKey, Row], dict[RowKey, set]]:
    """Every row the runs imply, with its provenance, and the datasets each row was asked for."""
    rows: dict[RowKey, Row] = {}
    asked: dict[RowKey, set[str]] = {}
    for run in runs:
        for model in sorted(set(run.models) | {r.model for r in run.results}):
            found = {keys.of_result(run, r) for r in run.results if r.model == model}
            found.add(keys.of_asked(run, model))
            for key in found:
                settings = {k: v for k, v in key._asdict().items() if k != 'model'}
                row = rows.setdefault(key, Row(model, MEASURED, model, settings))
                if str(run.folder) not in row.provenance.setdefault('runs', []):
                    row.provenance['runs'].append(str(run.folder))
                row.provenance['date'] = run.date
                if model in run.models:
                    row.provenance['config_digest'] = config_digest(run.models[model])
            asked.setdefault(keys.of_asked(run, model), set()).update(run.datasets.get(model, []))
    return rows, asked


def _newest_results(runs: list[Run], keys: _Keys, rows: dict) -> dict[RowKey, dict]:
    """Row -> dataset -> its newest result (by run, in start order); changed data under a
    dataset is a conflict."""
    cells: dict[RowKey, dict[str, Result]] = {}
    for run in runs:
        for result in run.results:
            key = keys.of_result(run, result)
            row_cells = cells.setdefault(key, {})
            older = row_cells.get(result.dataset)
            prints = (_fingerprint(older), _fingerprint(result)) if older else (None, None)
            if None not in prints and prints[0] != prints[1]:
                rows[key].conflicts.append(
                    f'{result.dataset}: the data changed between {older.run.name} and '
                    f'{run.folder.name} (newest kept)'
                )
            row_cells[result.dataset] = result  # runs come oldest first: the newest wins
    return cells


def _fill(row: Row, key: RowKey, results: dict[str, Result], asked: set, runs: list[Run]):
    for dataset, result in results.items():
        _place(row, dataset, result)
        if (total := result_usage(result.run, row.model, dataset)) is not None:
            add_usage(row.usage, dataset, total)
    row.missing = [(d, _why(row.model, d, runs)) for d in sorted(asked - set(results))]
    for benchmark in benchmarks.BENCHMARKS:
        row.conflicts += benchmark.row_conflicts(results)
    row.provenance['data_fingerprint'] = _digest(
        sorted(f'{d}={_fingerprint(r)}' for d, r in results.items())
    )
    row.provenance['package_version'] = key.package_version
    if any(r.provenance.get('data_origin') == SYNTHETIC for r in results.values()):
        row.kind = SYNTHETIC


def measured_rows(runs: list[Run]) -> list[Row]:
    """One row per model and settings, from the runs (oldest first: newer results win)."""
    keys = _Keys(runs)
    rows, asked = _open_rows(runs, keys)
    cells = _newest_results(runs, keys, rows)
    for key, row in rows.items():
        _fill(row, key, cells.get(key, {}), asked.get(key, set()), runs)
    _label(list(rows.values()))
    return list(rows.values())


def _why(model: str, dataset: str, runs: list[Run]) -> str:
    """The first error line for a missing result, from the newest run that asked for it."""
    for run in reversed(runs):
        if dataset in run.datasets.get(model, []):
            return missing_reason(run, model, dataset)
    return 'not run'


def _digest(parts: list[str]) -> str:
    return hashlib.sha1('\n'.join(parts).encode()).hexdigest()[:12]


def _place(row: Row, dataset: str, result: Result) -> None:
    """A result's numbers (and its records) in the row, under the benchmark that knows its
    abbreviation."""
    for benchmark in benchmarks.BENCHMARKS:
        cell = benchmark.split_abbr(dataset)
        if cell is None:
            continue
        found = {metric: number(result.values.get(metric)) for metric in benchmark.board_metrics}
        kept = {metric: value for metric, value in found.items() if value is not None}
        if kept:
            row.results.setdefault(benchmark.name, {})[cell] = kept
            row.records.setdefault(benchmark.name, {})[cell] = result
        return
    for benchmark in benchmarks.BENCHMARKS:
        if benchmark.keeps_variant(dataset):
            row.variants.setdefault(benchmark.name, {})[dataset] = result
            return


def attach_samples(rows: list[Row], resamples: int = RESAMPLES, seed: int = SEED) -> None:
    """Every measured cell's bootstrap distribution on its row (``Row.samples``), all rows of a
    cell resampled together; published rows have no per-record scores and get none."""
    cells: dict[tuple, dict[int, np.ndarray]] = {}
    others: dict[str, dict[tuple, dict[int, np.ndarray]]] = {}
    for number_, row in enumerate(rows):
        for name, by_cell in row.records.items():
            for cell, result in by_cell.items():
                if result.scores:
                    cells.setdefault((name, *cell), {})[number_] = np.asarray(result.scores)
                for metric, scores in result.metric_scores.items():
                    found = others.setdefault(metric, {}).setdefault((name, *cell), {})
                    found[number_] = np.asarray(scores)
    for (name, *cell), by_row in bootstrap_cells(cells, resamples, seed).items():
        for number_, distribution in by_row.items():
            rows[number_].samples.setdefault(name, {})[tuple(cell)] = distribution
    for metric, metric_cells in others.items():  # the same resamples: keyed by the same cells
        for (name, *cell), by_row in bootstrap_cells(metric_cells, resamples, seed).items():
            for number_, distribution in by_row.items():
                by_metric = rows[number_].metric_samples.setdefault(name, {})
                by_metric.setdefault(metric, {})[tuple(cell)] = distribution
    _attach_subsets(rows, resamples, seed)


def _attach_subsets(rows: list[Row], resamples: int, seed: int) -> None:
    """Each cell's per-record factor subsets' distributions, every metric (``Row.factor_samples``),
    keyed as the report's so that a value has one interval everywhere."""
    from ..framework.factor_tables import cell_subsets

    found: dict[str, dict[tuple, dict[int, np.ndarray]]] = {}
    for number_, row in enumerate(rows):
        for name, by_cell in row.records.items():
            benchmark = benchmarks.named(name)
            for (task, size), result in by_cell.items():
                scores = {benchmark.interval_metric: result.scores, **result.metric_scores}
                for metric, values in scores.items():
                    for factor, value, chosen in cell_subsets(
                        benchmark, task, result.factors, values
                    ):
                        key = (name, task, size, factor, value)
                        found.setdefault(metric, {}).setdefault(key, {})[number_] = np.asarray(
                            chosen
                        )
    for metric, cells in found.items():
        for (name, *key), by_row in bootstrap_cells(cells, resamples, seed).items():
            for number_, distribution in by_row.items():
                by_metric = rows[number_].factor_samples.setdefault(name, {})
                by_metric.setdefault(metric, {})[tuple(key)] = distribution


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
    return [
        Row(
            f'{found.model} (published)',
            PUBLISHED,
            found.model,
            results=found.results,
            provenance={'source': sorted(found.sources)},
        )
        for found in published_rows()
    ]


def _rank(row: Row, sizes: dict[str, Any]) -> tuple:
    """Complete rows first; among them those with a headline score, grouped by the first benchmark
    (in registry order) that gives one, since averages of two benchmarks do not compare; highest
    first within a group, then by label."""
    for order, benchmark in enumerate(benchmarks.BENCHMARKS):
        score = benchmark.headline(row, sizes[benchmark.name])
        if score is not None:
            return not row.complete, order, -score, row.label
    return not row.complete, len(benchmarks.BENCHMARKS), 0, row.label


def build_board(
    runs: list[Run],
    with_published: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    include_synthetic: bool = False,
) -> Board:
    """Measured rows ranked, then published rows ranked, then rows measured on synthetic data
    (ranked among the measured ones only when ``include_synthetic``), each labelled so."""
    measured = measured_rows(runs)
    attach_samples(measured, resamples, seed)
    for row in measured:
        if row.kind == SYNTHETIC:
            row.label = synthetic_label(row.label)
    papers = published(with_published)
    every = measured + papers
    sizes = {b.name: b.board_sizes(every, with_published) for b in benchmarks.BENCHMARKS}
    measured.sort(key=lambda row: _rank(row, sizes))
    papers.sort(key=lambda row: _rank(row, sizes))
    synthetic = [] if include_synthetic else [r for r in measured if r.kind == SYNTHETIC]
    real = [row for row in measured if row not in synthetic]
    return Board(real + papers + synthetic, sizes, synthetic_last=not include_synthetic)
