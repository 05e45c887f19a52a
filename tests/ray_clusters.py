"""Real Ray clusters on this one machine for the runner's tests, and a task whose command is
whatever shell line its model names.

``ray_head`` is ``ray_heads.local_ray_head`` at this suite's usual size; ``shared_ray`` keeps one
such head for the life of the test process (the reliability cases that need one share it). ``ShellTask`` is an OpenCompass task whose command runs its
model's ``shell`` after checking that its config path reached the shell as one word, as
OpenCompass's own commands pass it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ray_heads import local_ray_head


@contextlib.contextmanager
def ray_head(num_cpus: int = 2, num_gpus: int = 2, env: dict | None = None) -> Iterator[str]:
    """The address of a one-node Ray cluster of ``num_cpus`` CPUs and ``num_gpus`` fake GPUs,
    its processes given ``env`` beside this process's environment: a head of its own
    (``ray_heads.local_ray_head``: its own folder and ports), stopped, all of it, afterwards."""
    pytest.importorskip('ray', reason='pip install "opencompass_lveval[ray]"')
    with local_ray_head(num_cpus, num_gpus, env={**os.environ, **(env or {})}) as address:
        yield address


_SHARED: dict[str, str] = {}


def shared_ray() -> str:
    """One ``ray_head()`` for the rest of this process, started at the first call."""
    if 'address' not in _SHARED:
        context = ray_head()
        _SHARED['address'] = context.__enter__()
        atexit.register(context.__exit__, None, None, None)
    return _SHARED['address']


def node_ids(address: str) -> list[str]:
    """The ids of the live nodes of the cluster at ``address`` (connects, then disconnects)."""
    import ray

    ray.init(address=address, logging_level='WARNING', log_to_driver=False)
    try:
        return [node['NodeID'] for node in ray.nodes() if node['Alive']]
    finally:
        ray.shutdown()


def refused_addresses(timeout_s: float) -> list[tuple[str, str, float]]:
    """(address, the refusal, seconds it took) for a port nothing listens on, a port that never
    answers and an HTTP server, each asked by ``connect_ray`` for ``timeout_s``."""
    from servers import HostileServer, SilentPort, free_port

    from opencompass_lveval.files.errors import ClusterSetupError
    from opencompass_lveval.runner.ray_runner import connect_ray

    found = []
    closed = contextlib.nullcontext(f'127.0.0.1:{free_port()}')
    silent = SilentPort()
    http = HostileServer(lambda handler, body: handler.send_error(404))
    for server, address in ((closed, closed.enter_result), (silent, silent.address),
                            (http, http.url.split('/')[2])):  # fmt: skip
        with server:
            start = time.monotonic()
            with pytest.raises(ClusterSetupError) as refused:
                connect_ray(address, 'RayRunner', 'address=', timeout_s)
            found.append((address, str(refused.value), time.monotonic() - start))
    return found


def _register_shell_task():
    from opencompass.registry import TASKS
    from opencompass.tasks.base import BaseTask

    @TASKS.register_module(force=True)
    class ShellTask(BaseTask):
        name_prefix, log_subdir, output_subdir = 'Shell', 'logs/shell', 'shell'

        def __init__(self, cfg):
            super().__init__(cfg)
            self.num_gpus = self.model_cfgs[0].get('run_cfg', {}).get('num_gpus', 0)

        def get_command(self, cfg_path, template):
            shell = self.model_cfgs[0]['shell']
            return template.format(task_cmd=f'test -f {cfg_path} && ({shell})')

        def run(self):  # pragma: no cover - only its command runs
            raise NotImplementedError

    return ShellTask


ShellTask = _register_shell_task()


def shell_task(work: Path, abbr: str, shell: str, num_gpus: int = 0):
    """The config of one ``ShellTask`` (``Shell[abbr/d]``) writing under ``work``."""
    from mmengine.config import Config

    model = dict(abbr=abbr, shell=shell, run_cfg=dict(num_gpus=num_gpus))
    return Config(dict(models=[model], datasets=[[dict(abbr='d')]], work_dir=str(work)))


def shell_log(work: Path, abbr: str) -> str:
    return (work / 'logs' / 'shell' / abbr / 'd.out').read_text()
