"""A task refused before it reaches a cluster, said where every run's reader looks: its log file
(``lveval leaderboard`` shows that line for the missing results) and the run's log."""

from __future__ import annotations

from typing import Any

from opencompass.utils import get_logger

from ..files.atomic import write_text


def refuse(task: Any, error: str, message: str) -> int:
    """Refuse ``task``: its log file becomes the line ``{error}: {message}``, which the run's log
    shows too; returns the exit code the runner reports for it."""
    write_text(task.get_log_path(file_extension='out'), f'{error}: {message}\n')
    get_logger().error(message)
    return 1


def refuse_gpu_request(task: Any, nodes: str, offered: int) -> int:
    """Refuse ``task``, which asks for more GPUs than any of ``nodes`` offers."""
    return refuse(
        task,
        'GPURequestError',
        f'{task.name} asks for {task.num_gpus} GPUs, but {nodes} offer at most {offered}; not '
        "submitted. Lower the model's run_cfg.num_gpus (tensor parallelism) or use nodes with more.",
    )
