"""The replicas of a model: their specs (vLLM's server, or a stand-in's command), their KV
capacity, and ``serving``, a block holding ready replicas for callers that dispatch to a fixed
set (tests, benches, a driver of its own).
"""

from __future__ import annotations

import contextlib
import re
import threading
import urllib.request
from collections.abc import Iterator
from typing import Optional

from .placement import Placement, Replica, ReplicaError, ReplicaSpec
from .supervisor import Listener, Supervisor
from .vllm_command import vllm_server_argv


def tensor_parallel_size(model_cfg: dict) -> int:
    return int((model_cfg.get('model_kwargs') or {}).get('tensor_parallel_size', 1))


def replica_specs(
    model_cfg: dict,
    served_name: str,
    count: int,
    env: dict,
    use_gpus: bool = True,
    server_argv: Optional[list[str]] = None,
) -> list[ReplicaSpec]:
    """``count`` replicas of a model, named ``{abbr}-r{i}``, each asking for its tensor-parallel
    size in GPUs (none where ``use_gpus`` is off: a CPU engine); ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``
    where a RoPE scaling covers the window, as the in-process wrapper sets it. ``server_argv``:
    another server's command in place of vLLM's (a stand-in such as ``testing/paced_server``),
    with ``{model}`` (the model folder), ``{host}`` and ``{port}`` filled."""
    from ..models.rope import scaled_window

    env = dict(env)
    scaling = model_cfg.get('rope_scaling')
    if scaling and model_cfg['max_seq_len'] <= scaled_window(scaling):
        env['VLLM_ALLOW_LONG_MAX_MODEL_LEN'] = '1'
    if server_argv:
        argv = [arg.replace('{model}', str(model_cfg['path'])) for arg in server_argv]
    else:
        argv = vllm_server_argv(model_cfg, served_name)
    gpus = tensor_parallel_size(model_cfg) if use_gpus else 0
    return [ReplicaSpec(f'{model_cfg["abbr"]}-r{i}', argv, env, gpus) for i in range(count)]


_KV_LOG = re.compile(r'KV cache size: ([\d,]+) tokens')
_INFO_LINE = re.compile(r'^vllm:cache_config_info\{(.*)\}', re.M)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def kv_capacity(replica: Replica) -> Optional[int]:
    """Tokens the replica's KV cache holds: from vLLM's ``/metrics`` (``cache_config_info``:
    ``kv_cache_size_tokens``, else ``num_gpu_blocks`` x ``block_size``), else the line vLLM logs
    at start (``GPU KV cache size: N tokens``; CPU alike); None where neither says."""
    base = replica.url.removesuffix('/v1')
    try:
        with urllib.request.urlopen(f'{base}/metrics', timeout=10) as reply:
            metrics = reply.read(2**20).decode('utf-8', 'replace')
    except (OSError, ValueError):
        metrics = ''
    for labels in _INFO_LINE.findall(metrics):
        found = dict(_LABEL.findall(labels))
        if found.get('kv_cache_size_tokens', '').isdigit():
            return int(found['kv_cache_size_tokens'])
        if found.get('num_gpu_blocks', '').isdigit() and found.get('block_size', '').isdigit():
            return int(found['num_gpu_blocks']) * int(found['block_size'])
    logged = _KV_LOG.findall(replica.log_tail(10**6))
    return int(logged[-1].replace(',', '')) if logged else None


@contextlib.contextmanager
def serving(
    placement: Placement, specs: list[ReplicaSpec], ready_timeout_s: float
) -> Iterator[list[Replica]]:
    """The replicas of ``specs``, all ready, for the block (in the order of ``specs``); all
    stopped at its end, after a failure and on Ctrl-C. A replica that fails to start is an error
    naming it with the end of its log. Nothing restarts them: the caller holds them as they are."""
    supervisor = Supervisor(placement, specs, ready_timeout_s, max_restarts=0, poll_s=None)
    ready: dict[str, Replica] = {}
    changed = threading.Condition()

    def joined(replica: Replica) -> None:
        with changed:
            ready[replica.name] = replica
            changed.notify_all()

    def failed(name: str, cause: str) -> None:
        with changed:
            changed.notify_all()

    with supervisor:
        supervisor.start(Listener(ready=joined, gave_up=failed))
        with changed:
            while len(ready) < len(specs) and not supervisor.given_up:
                changed.wait(0.5)
        if supervisor.given_up:
            raise ReplicaError(
                f'replicas that could not start: {", ".join(sorted(supervisor.given_up))}\n'
                + supervisor.describe_causes()
            )
        yield [ready[spec.name] for spec in specs]
