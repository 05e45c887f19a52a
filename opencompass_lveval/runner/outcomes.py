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

import contextlib
import copy
import os.path as osp
import re
import shlex
import sys
import time
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
from ..report.rounding import counted
from .installs import INSTALL
from .stops import Problem, grouped, task_pairs, write_not_run


def task_class(task_type: Any) -> Any:
    return TASKS.get(task_type) if isinstance(task_type, str) else task_type


def has_predictions(
    model_cfg: dict, dataset_cfg: dict, work_dir: str, folder: str = 'predictions'
) -> bool:
    """Whether the predictions an evaluation reads are there (whole, or the first part of a
    split dataset), where OpenCompass's evaluation task looks for them; with ``folder``
    'results', the evaluation's result."""
    path = get_infer_output_path(model_cfg, dataset_cfg, osp.join(work_dir, folder))
    root, ext = osp.splitext(path)
    return osp.exists(path) or osp.exists(f'{root}_0{ext}')


def left_nothing(tasks: list, folder: str) -> bool:
    """Whether no model x dataset of ``tasks`` has its file in the run's ``folder``."""
    return not any(
        has_predictions(model_cfg, dataset_cfg, task['work_dir'], folder)
        for task in tasks
        for model_cfg, dataset_cfgs in zip(task['models'], task['datasets'])
        for dataset_cfg in dataset_cfgs
    )


def why_no_predictions(work_dir: str, model: str, dataset: str, asked: list[str]) -> str:
    """The inference log's first error line for a model x dataset, or what to do when none
    has one."""
    found = inference_error(Path(work_dir), model, dataset, asked)
    if found:
        return f'its inference failed: {found}'
    logs = Path(work_dir) / 'logs' / 'infer' / model
    if logs.is_dir() and any(logs.glob('*.out')):
        return f'its inference left no predictions and no error line: see the logs in {logs}'
    return 'its inference has not run: run it first (`-m infer` or `-m all`)'


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


def log_cause(log: str) -> str:
    """Why a task failed, from its log: its first error line, else its last line (a shell's
    ``srun: not found`` names no error), else that it left no log."""
    if not osp.isfile(log):
        return 'it left no log'
    error = first_error(Path(log))
    if error:
        return error
    lines = [line.strip() for line in Path(log).read_text(errors='replace').splitlines()]
    last = next((line for line in reversed(lines) if line), None)
    return f'its log names no error; its last line: {last}' if last else 'its log is empty'


def report_failures(status: list, tasks: list, task_type: Any) -> list[str]:
    """Each failed task's cause (``log_cause``) in the terminal, with its log; returns the
    causes."""
    failed = {name for name, code in status if code != 0}
    causes = []
    for cfg in tasks if failed else []:
        task = TASKS.build(dict(cfg=cfg, type=task_type))
        if task.name in failed:
            log = task.get_log_path(file_extension='out')
            cause = log_cause(log)
            causes.append(cause)
            name = task.name if len(task.name) < 100 else f'{task.name[:96]}...]'
            get_logger().error(f'{name} failed: {cause} (log: {log})')
    return causes


# Causes a task log names that one command fixes: (text in the cause, what to do).
_HINTS = (
    (re.compile(r"No module named '([\w.]+)'"), 'install {0} in {python}: {install}'),
    (
        re.compile(r'\b(\S+): (?:command )?not found'),
        '{0} is not on the PATH of the machine that ran the tasks: install it there, or run on '
        'a machine that has it',
    ),
)


def hints(causes: list[str]) -> list[str]:
    """What to do for each distinct cause ``_HINTS`` recognises, one line each."""
    found = []
    for cause in causes:
        for pattern, hint in _HINTS:
            match = pattern.search(cause)
            if match:
                name = match[1].split('.')[0]
                install = INSTALL.get(name, f'pip install {name}')
                found.append(hint.format(name, python=sys.executable, install=install))
    return list(dict.fromkeys(found))


def resume_command(work_dir: str) -> str:
    """The command line that resumes this run in its run folder (``-r RUN``), from the one that
    started it."""
    argv, kept, skip = sys.argv[1:], [], False
    for arg in argv:
        if skip and re.fullmatch(r'\d{8}_\d{6}|latest', arg):
            skip = False
            continue
        skip = arg in ('-r', '--reuse')
        if not (skip or arg.startswith('--reuse=')):
            kept.append(arg)
    program = osp.basename(sys.argv[0]) or 'opencompass'
    return shlex.join([program, *kept, '-r', osp.basename(osp.normpath(work_dir))])


def stop_all_failed(what: str, causes: list[str], work_dir: str) -> None:
    """Raise ``SystemExit`` (exit 1) saying ``what`` failed (every task of a stage, so nothing
    after it can run), the hints that fit the causes, and the command that resumes."""
    raise SystemExit(
        '\n'.join(
            [
                f'{what} (each cause above, with its log): the run stops here.',
                *(f'- {hint}' for hint in hints(causes)),
                f'Fix what the logs name, then `{resume_command(work_dir)}` runs only what is '
                'missing.',
            ]
        )
    )


def _child_processes() -> list[str]:
    """The processes this one started that have not been reaped yet (Linux's ``/proc``)."""
    found = []
    for thread in Path('/proc/self/task').glob('*'):
        with contextlib.suppress(OSError):
            found += (thread / 'children').read_text().split()
    return found


def stop_interrupted(work_dir: str, wait_s: float = 30.0) -> None:
    """Exit 130 after Ctrl-C, naming the command that resumes, without a traceback. The task
    processes got the interrupt too: they are given ``wait_s`` to end (a second Ctrl-C goes at
    once), so that the hint comes last, and the ends the interrupt caused are not reported as
    failures ("fail, see LOG"). (Python before 3.13 marks a thread whose ``join`` was
    interrupted as ended, so the processes are watched, not the runner's threads.)"""

    def not_interrupted(record) -> bool:
        return ' fail, see' not in record.getMessage()

    get_logger().addFilter(not_interrupted)
    deadline = time.monotonic() + wait_s
    with contextlib.suppress(KeyboardInterrupt):
        while _child_processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)  # the runner's threads note the ends
    from tqdm import tqdm

    for bar in list(getattr(tqdm, '_instances', ())):  # drawn now, not after the hint at exit
        bar.close()
    print(
        f'\nInterrupted: the tasks that finished are kept. `{resume_command(work_dir)}` resumes '
        'the run, running only what is missing.',
        file=sys.stderr,
    )
    raise SystemExit(130)


class StageOutcomes:
    """Runner mixin: evaluation tasks only for datasets with predictions (the others named with
    their inference's error), each failed task's cause in the terminal, and a stage whose every
    task failed leaving nothing for the next (or, for evaluation, that has no predictions to
    read) stops the run with exit 1; Ctrl-C exits 130 saying how to resume."""

    def launch(self, tasks: list) -> list:
        task_type = self.task_cfg['type']
        kind = task_class(task_type)
        evaluation = isinstance(kind, type) and issubclass(kind, OpenICLEvalTask)
        stage = 'evaluation' if evaluation else 'inference'
        if evaluation:
            asked, (tasks, left_out) = tasks, inferred_only(tasks, kind.log_subdir)
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
            if not tasks and left_out:
                pairs = counted(len(left_out), 'model x dataset pair')
                what = f'No evaluation task could start: none of its {pairs} has predictions'
                stop_all_failed(what, [], asked[0]['work_dir'])
        if not tasks:
            return []
        try:
            status = list(super().launch(tasks))
        except KeyboardInterrupt:
            stop_interrupted(tasks[0]['work_dir'])
        causes = report_failures(status, tasks, task_type)
        output = 'results' if evaluation else 'predictions'
        failed = status and all(code != 0 for _, code in status)
        if failed and left_nothing(tasks, output):  # else the next stage reads what there is
            self.summarize(status)  # OpenCompass's own lines (and report) before the stop
            tried = counted(len(status), 'task')
            what = f'Every task of the {stage} stage failed ({tried}), leaving no {output}'
            stop_all_failed(what, causes, tasks[0]['work_dir'])
        return status
