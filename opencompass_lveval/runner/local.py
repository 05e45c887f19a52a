"""OpenCompass's local runner, refusing before any task starts what this machine cannot give.

OpenCompass's ``LocalRunner`` meets a task asking for more GPUs than the machine has at a bare
``assert len(gpus) >= num_gpus`` (a traceback, nothing saying which config or what to run
instead), or, where ``CUDA_VISIBLE_DEVICES`` names fewer GPUs than its highest number, waits for
them for ever. Here the GPUs every task asks for are compared first with the GPUs the runner can
hand out, as it counts them; a shortfall stops the run with what was asked, what is here and the
config that runs on CPU. ``StageOutcomes`` adds the rest (no evaluation without predictions, the
error line of each failed task).
"""

from __future__ import annotations

import os
import os.path as osp
import re
from typing import Any

from opencompass.registry import RUNNERS, TASKS
from opencompass.runners import LocalRunner
from opencompass.utils import model_abbr_from_cfg

from ..report.rounding import counted
from .outcomes import StageOutcomes, task_class
from .quoting import quoting
from .run_lock import hold_for
from .stops import task_pairs, write_not_run

CPU_CONFIG = 'configs/eval_demo.py'


def local_gpus() -> tuple[int, str]:
    """How many GPUs ``LocalRunner`` can hand to tasks here, and where that count comes from:
    the devices the visible-devices variable names, else the devices torch sees."""
    import torch
    from mmengine.device import is_npu_available

    if is_npu_available():
        variable, seen, counter = 'ASCEND_RT_VISIBLE_DEVICES', torch.npu.device_count, 'torch.npu'
    else:
        variable, seen, counter = 'CUDA_VISIBLE_DEVICES', torch.cuda.device_count, 'torch.cuda'
    value = os.environ.get(variable)
    if value is not None:  # LocalRunner's reading of it: every number not after a minus sign
        return len(set(re.findall(r'(?<!-)\d+', value))), f'{variable}={value!r}'
    return seen(), f'{counter}.device_count(), {variable} unset'


def gpu_shortfall(tasks: list, task_type: Any, available: int, source: str) -> list[str]:
    """The lines saying which tasks ask for more than ``available`` GPUs (one per model and
    count), then what to do; empty when every task fits."""
    asks = {}
    for cfg in tasks:
        task = TASKS.build(dict(cfg=cfg, type=task_type))
        if task.num_gpus > available:
            models = ', '.join(model_abbr_from_cfg(m) for m in task.model_cfgs)
            asks.setdefault((models, task.num_gpus), []).append(task.name)
    if not asks:
        return []
    return [
        f'The run stopped before any task started: its tasks ask for more GPUs than this machine '
        f'has, {available} ({source}):',
        *(
            f'- {models}: {counted(gpus, "GPU")} (run_cfg.num_gpus), {counted(len(names), "task")}'
            for (models, gpus), names in asks.items()
        ),
        f'Run it on a machine with enough GPUs, or lower run_cfg.num_gpus (tensor parallelism) '
        f'where the model fits. {CPU_CONFIG} (in `lveval configs-dir`) runs on CPU: the '
        f'weightless baselines on demo data, `lveval data synth data/demo && opencompass '
        f'{CPU_CONFIG}`.',
    ]


def stop_for_gpus(tasks: list, task_type: Any) -> None:
    """Raise ``SystemExit`` (``gpu_shortfall``'s lines, exit 1) when a task asks for more GPUs
    than this machine has; every model x dataset of the tasks gets its log saying so."""
    available, source = local_gpus()
    lines = gpu_shortfall(tasks, task_type, available, source)
    if not lines:
        return
    line = 'GPURequestError: ' + ' '.join(lines)
    log_subdir = task_class(task_type).log_subdir
    for cfg in tasks:
        for model, dataset in task_pairs(cfg):
            write_not_run(osp.join(cfg['work_dir'], log_subdir), model, dataset, [line])
    raise SystemExit('\n'.join(lines))


def is_local_runner(runner_type: Any) -> bool:
    """Whether a runner config's type runs tasks on this machine (OpenCompass's LocalRunner)."""
    kind = RUNNERS.get(runner_type) if isinstance(runner_type, str) else runner_type
    return isinstance(kind, type) and issubclass(kind, LocalRunner)


@RUNNERS.register_module()
class CheckedLocalRunner(StageOutcomes, LocalRunner):
    """``LocalRunner`` (same settings) that stops the run before any task starts when a task
    asks for more GPUs than this machine has, naming the config that runs on CPU; each task of
    the stage gets a log saying so (``lveval leaderboard`` shows it). With ``StageOutcomes``; one
    driver per run folder (``run_lock.py``); task commands quoted for the shell
    (``quoting.py``: LocalRunner's holds the folder the run started in)."""

    def __init__(self, task, *args, **settings) -> None:
        super().__init__(task, *args, **settings)
        if not self.debug:  # debug mode reads the type as a name, and runs no shell for it
            self.task_cfg['type'] = quoting(self.task_cfg['type'])

    def launch(self, tasks: list) -> list:
        stop_for_gpus(tasks, self.task_cfg['type'])
        hold_for(tasks)
        return super().launch(tasks)
