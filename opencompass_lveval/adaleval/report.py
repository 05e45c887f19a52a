"""Ada-LEval's own report: per task, every metric by setting for each model, and the accuracy
plot with the chance line; BestAnswer's position-bias maps. Its leaderboard tables and tidy rows
are the framework's (``grid.py``). Settings are whatever the results hold, smallest first."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..framework.sizes import by_size, is_size
from ..report.intervals import interval
from ..report.tables import Table, result_value
from .tasks import METRICS, TASKS, AdaTask

NAME = 'adaleval'  # the benchmark's name, which keys its cells' resamples (report_samples)
INTERVAL_METRIC = 'accuracy'  # what the per-record scores average to
POSITION_STEM = 'adaleval_score_by_answer_position'


def setting_of(abbr: str, task: AdaTask, variant: str = '') -> Optional[str]:
    """The setting of a plain abbreviation of ``task`` (``AdaLEval_tsort_256k``), or of one of
    its ``variant`` (``_front``), else None (other tasks and variants)."""
    prefix = task.abbr('', variant)
    rest = abbr[len(prefix) :]
    return rest if abbr.startswith(prefix) and is_size(rest) else None


def settings_in(task: AdaTask, results_by_model: dict[str, dict]) -> list[str]:
    """The settings of ``task`` that any model has results for, smallest first."""
    return by_size(
        setting
        for results in results_by_model.values()
        for abbr in results
        if (setting := setting_of(abbr, task))
    )


def model_tables(model: str, results: dict, samples: dict) -> list[Table]:
    """Per task: every metric by setting, for one model; accuracy with its interval."""
    tables = []
    for task in TASKS:
        settings = settings_in(task, {model: results})
        if settings:
            rows = [
                [m] + [result_value(results, task.abbr(s), m) for s in settings] for m in METRICS
            ]
            intervals = [
                [None]
                + [
                    interval(samples.get((NAME, task.name, s), {}).get(model))
                    if m == INTERVAL_METRIC
                    else None
                    for s in settings
                ]
                for m in METRICS
            ]
            tables.append(
                Table(
                    f'Ada-LEval {task.name}, {model}',
                    f'adaleval_{task.name}_{model}',
                    ['metric'] + settings,
                    rows,
                    intervals,
                )
            )
    return tables


def is_position_variant(abbr: str) -> bool:
    """A BestAnswer position-bias dataset (``..._front``, ``_middle``, ``_rear``)."""
    return any(setting_of(abbr, task, f'_{p}') for task in TASKS for p in task.positions)


def depth_maps(results: dict[str, dict], scores: dict) -> list:
    """BestAnswer's accuracy by where the best answer stands among the candidates (the
    position-bias variants' results: front, middle, rear) and setting, where a run has them;
    each cell's record count from its per-record scores (``scores``, abbr -> list)."""
    from ..report.depth import DepthMap

    maps = []
    for task in TASKS:
        settings = by_size(
            setting
            for position in task.positions
            for abbr in results
            if (setting := setting_of(abbr, task, f'_{position}'))
        )
        if not settings:
            continue
        abbrs = [[task.abbr(s, f'_{p}') for s in settings] for p in task.positions]
        counts = [[len(scores.get(a) or []) for a in row] for row in abbrs]
        maps.append(
            DepthMap(
                POSITION_STEM,
                task.name,
                list(task.positions),
                settings,
                [[result_value(results, a, INTERVAL_METRIC) for a in row] for row in abbrs],
                counts,
                sum(map(sum, counts)),
                sum(map(sum, counts)),
                'best answer position',
            )
        )
    return maps


def report(benchmark, results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list]:
    """Every model's tables, and per task the accuracy plot with the chance line and error
    bars (``benchmark``'s intervals of the per-record accuracy)."""
    from ..report.plots import plot_lines

    every = [t.abbr(s) for t in TASKS for s in settings_in(t, results)]
    samples = benchmark.report_samples(results, every)
    tables = [
        table for model, found in results.items() for table in model_tables(model, found, samples)
    ]
    plots = []
    for task in TASKS:
        settings = settings_in(task, results)
        if not settings:
            continue
        accuracy = {
            model: [result_value(found, task.abbr(s), INTERVAL_METRIC) for s in settings]
            for model, found in results.items()
        }
        path = out / f'adaleval_{task.name}_accuracy.png'
        plot_lines(
            path,
            f'Ada-LEval {task.name}: accuracy by setting',
            settings,
            accuracy,
            'setting (tokens)',
            'accuracy (%)',
            {'chance (uniform random answer)': chance(task, settings, results)},
            errors={
                model: [
                    interval(samples.get((NAME, task.name, s), {}).get(model)) for s in settings
                ]
                for model in results
            },
        )
        plots.append(path)
    return tables, plots


def chance(task: AdaTask, settings: list[str], results: dict) -> list[Optional[float]]:
    """The random-guess accuracy per setting, as the first model with a result there has it."""
    return [
        next(
            (
                v
                for found in results.values()
                if (v := result_value(found, task.abbr(s), 'random_guess')) is not None
            ),
            None,
        )
        for s in settings
    ]
