"""Ada-LEval's tables and plots: per task, every metric by setting for each model and the
accuracy plot of a run's report; accuracy with instruction following by setting on the
leaderboard. Settings are whatever the results hold, smallest first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..sizes import by_size, is_size
from ..tables import BoardLine, BoardTable, Table, result_value
from .tasks import METRICS, TASKS, AdaTask

NAME = 'adaleval'
BOARD_METRICS = ('accuracy', 'instruction_following')


def setting_of(abbr: str, task: AdaTask) -> Optional[str]:
    """The setting of a plain abbreviation of ``task`` (``AdaLEval_tsort_256k``), else None
    (other tasks, position-bias and perplexity variants)."""
    prefix = task.abbr('')
    rest = abbr[len(prefix) :]
    return rest if abbr.startswith(prefix) and is_size(rest) else None


def split_abbr(abbr: str) -> Optional[tuple[str, str]]:
    """(task name, setting) of a plain Ada-LEval abbreviation, else None."""
    for task in TASKS:
        if setting := setting_of(abbr, task):
            return task.name, setting
    return None


def settings_in(task: AdaTask, results_by_model: dict[str, dict]) -> list[str]:
    """The settings of ``task`` that any model has results for, smallest first."""
    return by_size(
        setting
        for results in results_by_model.values()
        for abbr in results
        if (setting := setting_of(abbr, task))
    )


def model_tables(model: str, results: dict) -> list[Table]:
    """Per task: every metric by setting, for one model."""
    tables = []
    for task in TASKS:
        settings = settings_in(task, {model: results})
        if settings:
            rows = [
                [m] + [result_value(results, task.abbr(s), m) for s in settings] for m in METRICS
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


def report(results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list[Path]]:
    """Every model's tables, and per task the accuracy plot with the chance line."""
    from ..report.plots import plot_lines

    tables = [table for model, found in results.items() for table in model_tables(model, found)]
    plots = []
    for task in TASKS:
        settings = settings_in(task, results)
        if not settings:
            continue
        accuracy = {
            model: [result_value(found, task.abbr(s), 'accuracy') for s in settings]
            for model, found in results.items()
        }
        chance = [
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
        path = out / f'adaleval_{task.name}_accuracy.png'
        plot_lines(
            path,
            f'Ada-LEval {task.name}: accuracy by setting',
            settings,
            accuracy,
            'setting (tokens)',
            'accuracy (%)',
            {'chance (uniform random answer)': chance},
        )
        plots.append(path)
    return tables, plots


# The leaderboard --------------------------------------------------------------------------------


def board_settings(rows: list) -> dict[str, list[str]]:
    """Task -> the settings any row has a result at, for the tasks that have any."""
    found = {
        task.name: by_size(
            {s for row in rows for (t, s) in row.results.get(NAME, {}) if t == task.name}
        )
        for task in TASKS
    }
    return {task: settings for task, settings in found.items() if settings}


def _values(row, task: str, setting: str) -> dict:
    return row.results.get(NAME, {}).get((task, setting), {})


def board_tables(rows: list, settings: dict[str, list[str]]) -> list[BoardTable]:
    tables = []
    for task, shown in settings.items():
        lines = [
            BoardLine(
                row,
                [_values(row, task, s).get('accuracy') for s in shown],
                [_values(row, task, s).get('instruction_following') for s in shown],
            )
            for row in rows
            if any(t == task for t, _ in row.results.get(NAME, {}))
        ]
        tables.append(
            BoardTable(
                f'{NAME}-{task}',
                f'Ada-LEval {task}: accuracy (instruction following) by setting',
                shown,
                lines,
                note_label='instruction following',
            )
        )
    return tables


def tidy(row, settings: dict[str, list[str]]) -> Iterator[tuple[str, str, str, str, float]]:
    for task, shown in settings.items():
        for setting in shown:
            for name, value in _values(row, task, setting).items():
                yield task, task, setting, name, value
