"""A task refused before it reaches a cluster, said where every run's reader looks: its log file
(``lveval leaderboard`` shows that line for the missing results) and the run's log."""

from __future__ import annotations

from typing import Any

from opencompass.utils import get_logger

from ..files.atomic import write_text


def refuse_gpu_request(task: Any, nodes: str, offered: int) -> int:
    """Refuse ``task``, which asks for more GPUs than any of ``nodes`` offers; returns the exit
    code the runner reports for it."""
    message = (
        f'{task.name} asks for {task.num_gpus} GPUs, but {nodes} offer at most {offered}; not '
        "submitted. Lower the model's run_cfg.num_gpus (tensor parallelism) or use nodes with more."
    )
    write_text(task.get_log_path(file_extension='out'), f'GPURequestError: {message}\n')
    get_logger().error(message)
    return 1
