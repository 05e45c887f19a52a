"""What the package's runners do around OpenCompass's launching, whatever launches the tasks.

An evaluation task is not started for a dataset without predictions: OpenCompass's would start,
load, and fail seconds later with "Prediction files not found", once per dataset. The dataset is
left out and named, with the cause read from the inference logs, in the terminal and in its
evaluation log, where ``lveval leaderboard`` finds it. And a task that fails has the first error
line of its log printed in the terminal, beside OpenCompass's bare "fail, see LOG".

``StageOutcomes`` is a mixin for any OpenCompass runner: put it before the runner's class among
the bases (``CheckedLocalRunner``, ``CheckedSlurmRunner``).
"""

from __future__ import annotations

import copy
import os.path as osp
from pathlib import Path
from typing import Any

from opencompass.registry import TASKS
from opencompass.tasks import OpenICLEvalTask
from opencompass.utils import (
    dataset_abbr_from_cfg,
    get_infer_output_path,
    get_logger,
    model_abbr_from_cfg,
)

from ..leaderboard.runs import first_error, inference_error
from .stops import Problem, counted, grouped, task_pairs, write_not_run


def task_class(task_type: Any) -> Any:
    return TASKS.get(task_type) if isinstance(task_type, str) else task_type


def has_predictions(model_cfg: dict, dataset_cfg: dict, work_dir: str) -> bool:
    """Whether the predictions an evaluation reads are there (whole, or the first part of a
    split dataset), where OpenCompass's evaluation task looks for them."""
    path = get_infer_output_path(model_cfg, dataset_cfg, osp.join(work_dir, 'predictions'))
    root, ext = osp.splitext(path)
    return osp.exists(path) or osp.exists(f'{root}_0{ext}')


def why_no_predictions(work_dir: str, model: str, dataset: str, asked: list[str]) -> str:
    """The inference log's first error line for a model x dataset, or what to do when none
    has one."""
    found = inference_error(Path(work_dir), model, dataset, asked)
    if found:
        return f'its inference failed: {found}'
    return 'its inference left no error in logs/infer: run it first (`-m infer` or `-m all`)'


def inferred_only(tasks: list, log_subdir: str) -> tuple[list, list[Problem]]:
    """The evaluation tasks with only the datasets that have predictions (a task left with none
    is dropped), and a problem for each dataset left out, its cause read from the inference
    logs; the evaluation log of each (``{log_subdir}/{model}/{dataset}.out``) says the same."""
    asked: dict[str, list[str]] = {}  # model -> every dataset asked: each log is read once
    for task in tasks:
        for model, dataset in task_pairs(task):
            asked.setdefault(model, []).append(dataset)
    kept, left_out = [], []
    for task in tasks:
        work_dir = task['work_dir']
        models, datasets = [], []
        for model_cfg, dataset_cfgs in zip(task['models'], task['datasets']):
            model = model_abbr_from_cfg(model_cfg)
            ready = []
            for dataset_cfg in dataset_cfgs:
                if has_predictions(model_cfg, dataset_cfg, work_dir):
                    ready.append(dataset_cfg)
                    continue
                dataset = dataset_abbr_from_cfg(dataset_cfg)
                cause = why_no_predictions(work_dir, model, dataset, asked[model])
                line = f'NoPredictionsError: not evaluated, {cause}'
                write_not_run(osp.join(work_dir, log_subdir), model, dataset, [line])
                left_out.append(Problem(model, dataset, f'no predictions, {cause}'))
            if ready:
                models.append(model_cfg)
                datasets.append(ready)
        if models:
            task = copy.deepcopy(task)
            task['models'], task['datasets'] = models, datasets
            kept.append(task)
    return kept, left_out


def report_failures(status: list, tasks: list, task_type: Any) -> None:
    """Each failed task's first error line in the terminal, with its log."""
    failed = {name for name, code in status if code != 0}
    for cfg in tasks if failed else []:
        task = TASKS.build(dict(cfg=cfg, type=task_type))
        if task.name in failed:
            log = task.get_log_path(file_extension='out')
            error = first_error(Path(log)) if osp.isfile(log) else None
            name = task.name if len(task.name) < 100 else f'{task.name[:96]}...]'
            get_logger().error(f'{name} failed: {error or "its log names no error"} (log: {log})')


class StageOutcomes:
    """Runner mixin: evaluation tasks only for datasets with predictions (the others named with
    their inference's error), and each failed task's error line in the terminal."""

    def launch(self, tasks: list) -> list:
        task_type = self.task_cfg['type']
        kind = task_class(task_type)
        if isinstance(kind, type) and issubclass(kind, OpenICLEvalTask):
            tasks, left_out = inferred_only(tasks, kind.log_subdir)
            if left_out:
                get_logger().error(
                    '\n'.join(
                        [
                            f'{counted(len(left_out), "model x dataset pair")} not evaluated, '
                            'for want of predictions (each evaluation log says why):',
                            *grouped(left_out),
                        ]
                    )
                )
        status = list(super().launch(tasks))
        report_failures(status, tasks, task_type)
        return status
