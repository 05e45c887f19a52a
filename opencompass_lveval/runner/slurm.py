"""OpenCompass's Slurm runner, refusing before submission what the partition cannot give.

OpenCompass's ``SlurmRunner`` submits every task with ``srun --gres=gpu:N`` and retries a failed
one; a task asking for more GPUs than any node of its partition has fails at once in Slurm, and is
then retried, all of it visible only in a log file. Here the GPUs each node of the partition offers
are read once from ``sinfo`` (where it answers), and a task asking for more is not submitted: its
log file says why in one line (``lveval leaderboard`` shows that line for the missing results), and
the run's summary lists it as failed. With ``StageOutcomes`` (no evaluation without predictions,
the error line of each failed task in the terminal).
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Optional

from opencompass.registry import RUNNERS, TASKS
from opencompass.runners import SlurmRunner

from .outcomes import StageOutcomes
from .quoting import quoting
from .refusals import refuse_gpu_request
from .run_lock import hold_for

_GPUS = re.compile(r'gpu(?::[^:(,\s]+)?:(\d+)')


def gpus_per_node(sinfo_lines: str) -> Optional[int]:
    """The most GPUs one node offers, from ``sinfo -h -N -o '%N %G'`` lines (``node gpu:4``,
    ``node gpu:a100:8(S:0-1)``, ``node gpu:a100:4,gpu:v100:4`` = 8, ``node (null)``); None when
    sinfo listed no node."""
    counts = []
    for line in sinfo_lines.splitlines():
        if line.strip():
            counts.append(sum(int(n) for n in _GPUS.findall(line)))
    return max(counts) if counts else None


def partition_gpus(partition: Optional[str]) -> Optional[int]:
    """GPUs per node in ``partition`` as sinfo tells it, or None where sinfo cannot tell (not
    installed, no such partition, no controller)."""
    command = ['sinfo', '-h', '-N', '-o', '%N %G'] + (['-p', partition] if partition else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return gpus_per_node(done.stdout) if done.returncode == 0 else None


@RUNNERS.register_module()
class CheckedSlurmRunner(StageOutcomes, SlurmRunner):
    """``SlurmRunner`` (same settings) that does not submit a task whose ``run_cfg.num_gpus``
    exceeds what one node of the partition offers; with ``StageOutcomes``. Without a
    ``partition``, the one named by ``$LVEVAL_SLURM_PARTITION`` is used, else Slurm's default (read
    when the runner is built, on the machine that submits). One driver per run folder
    (``run_lock.py``); task commands quoted for the shell (``quoting.py``). Slurm passes the
    driver's environment to each task (``srun``'s default), so a task's secrets are read from it
    there, never written to a config."""

    def __init__(self, task, partition: Optional[str] = None, **settings) -> None:
        partition = partition or os.environ.get('LVEVAL_SLURM_PARTITION') or None
        super().__init__(task, partition=partition, **settings)
        self.task_cfg['type'] = quoting(self.task_cfg['type'])

    def launch(self, tasks: list) -> list:
        hold_for(tasks)
        return super().launch(tasks)

    def _launch(self, cfg, random_sleep: bool = True):
        task = TASKS.build(dict(cfg=cfg, type=self.task_cfg['type']))
        if not hasattr(self, '_partition_gpus'):
            self._partition_gpus = partition_gpus(self.partition)
        available = self._partition_gpus
        if available is None or task.num_gpus <= available:
            return super()._launch(cfg, random_sleep)
        nodes = f'the nodes of partition {self.partition or "(default)"}'
        return task.name, refuse_gpu_request(task, nodes, available)
