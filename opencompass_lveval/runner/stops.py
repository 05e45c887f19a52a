"""What did not run and why: the problems a run meets before or between its stages, listed in
the terminal a few at a time, and the log each model x dataset that did not run gets (its first
line the reason), where ``lveval leaderboard`` finds it for the missing result."""

from __future__ import annotations

import os.path as osp
from collections.abc import Iterable
from dataclasses import dataclass

from opencompass.utils import dataset_abbr_from_cfg, model_abbr_from_cfg

from ..files.atomic import write_text

SHOWN = 8  # causes listed in the terminal; every one is in the logs of what it stopped


@dataclass(frozen=True)
class Problem:
    """Why one model cannot run one dataset: ``cause`` is ``ErrorType: message``."""

    model: str
    dataset: str
    cause: str


def grouped(problems: Iterable[Problem], shown: int = SHOWN) -> list[str]:
    """One line per cause, naming the models and datasets it concerns (a few, then a count);
    after ``shown`` causes, how many more there are."""
    by_cause: dict[str, list[Problem]] = {}
    for problem in problems:
        by_cause.setdefault(problem.cause, []).append(problem)
    lines = []
    for cause, found in list(by_cause.items())[:shown]:
        models = sorted({p.model for p in found})
        datasets = list(dict.fromkeys(p.dataset for p in found))
        named = ', '.join(datasets[:3]) + (f' and {len(datasets) - 3} more' if datasets[3:] else '')
        lines.append(f'- {", ".join(models)} on {named}: {cause}')
    if len(by_cause) > shown:
        lines.append(f'- and {len(by_cause) - shown} more causes, each in the logs it concerns')
    return lines


def task_pairs(task: dict) -> list[tuple[str, str]]:
    """(model abbr, dataset abbr) of every model x dataset of a task config."""
    return [
        (model_abbr_from_cfg(model_cfg), dataset_abbr_from_cfg(dataset_cfg))
        for model_cfg, dataset_cfgs in zip(task['models'], task['datasets'])
        for dataset_cfg in dataset_cfgs
    ]


def write_not_run(log_dir: str, model: str, dataset: str, lines: list[str]) -> None:
    """The log of a model x dataset that did not run (``{log_dir}/{model}/{dataset}.out``), its
    first line the reason: ``lveval leaderboard`` shows it for the missing result."""
    write_text(osp.join(log_dir, model, f'{dataset}.out'), '\n'.join(lines) + '\n')
