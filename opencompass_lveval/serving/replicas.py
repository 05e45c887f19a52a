"""Engine replicas: what to start (``ReplicaSpec``), where (a ``Placement``), and their end.

A placement launches each spec's command with ``{host}`` and ``{port}`` filled with the address
it chose, and hands back ``Replica`` handles; readiness is a separate step (``wait_ready``:
``GET /health`` answers 200), so that all replicas load their weights at once. ``serving`` holds
them for a block and stops every one at its end, after a failure and on Ctrl-C, so a stage leaves
no engine behind. Placements are looked up by name (``PLACEMENTS``): 'local' here, 'ray' and
'slurm' in ``placement_ray.py`` and ``placement_slurm.py``; each is built as
``cls(log_dir=FOLDER, **placement_settings)``.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Protocol, runtime_checkable

from ..files.errors import ModelConfigError

PLACEMENTS = {
    'local': 'opencompass_lveval.serving.replicas:LocalPlacement',
    'ray': 'opencompass_lveval.serving.placement_ray:RayPlacement',
    'slurm': 'opencompass_lveval.serving.placement_slurm:SlurmPlacement',
}
LOG_TAIL_CHARS = 3000
_PR_SET_PDEATHSIG = 1


class ReplicaError(RuntimeError):
    """A replica that could not start or serve."""


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica to start: ``argv`` may hold ``{host}`` and ``{port}``, which the placement
    fills; ``gpus``: what it needs (its tensor-parallel size)."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    gpus: int = 0

    def command(self, host: str, port: int) -> list[str]:
        return [arg.replace('{host}', host).replace('{port}', str(port)) for arg in self.argv]


@runtime_checkable
class Replica(Protocol):
    name: str
    url: str  # base URL ending in /v1
    node: str

    def alive(self) -> bool: ...

    def stop(self) -> None: ...

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str: ...


@runtime_checkable
class Placement(Protocol):
    def start(self, specs: list[ReplicaSpec]) -> list[Replica]: ...

    def wait_ready(self, replicas: list[Replica], timeout_s: float) -> None: ...


def placement_class(name: str) -> type:
    """The placement of a name in ``PLACEMENTS``, or an error naming the known ones."""
    if name not in PLACEMENTS:
        raise ModelConfigError(
            f'placement must be one of {sorted(PLACEMENTS)}, not {name!r}: where replicas run '
            '(local processes, Ray actors, Slurm steps)'
        )
    module, _, attribute = PLACEMENTS[name].partition(':')
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ModelConfigError(
            f"placement {name!r} is not available here ({exc}); use placement='local'"
        ) from None


def healthy(replica: Replica, timeout_s: float) -> bool:
    """Whether ``GET /health`` answers 200 within ``timeout_s``."""
    base = replica.url.removesuffix('/v1')
    try:
        with urllib.request.urlopen(f'{base}/health', timeout=timeout_s) as reply:
            return reply.status == 200
    except (OSError, ValueError):
        return False


def wait_healthy(replicas: list[Replica], timeout_s: float) -> None:
    """Return once every replica answers ``/health``; a replica that exits first, or one still
    silent at the deadline, is an error naming it with the tail of its log."""
    waiting, deadline = list(replicas), time.monotonic() + timeout_s
    while waiting:
        for replica in list(waiting):
            if healthy(replica, 2.0):
                waiting.remove(replica)
            elif not replica.alive():
                raise ReplicaError(
                    f'replica {replica.name} on {replica.node} exited before it was ready; the '
                    f'end of its log:\n{replica.log_tail()}'
                )
        if waiting and time.monotonic() > deadline:
            names = ', '.join(f'{r.name} on {r.node}' for r in waiting)
            raise ReplicaError(
                f'replicas not ready after ready_timeout_s={timeout_s:g} s: {names}; raise '
                f"ready_timeout_s if loading takes longer; the end of the first one's log:\n"
                f'{waiting[0].log_tail()}'
            )
        if waiting:
            time.sleep(0.5)


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        with open(path, 'rb') as stream:
            stream.seek(max(0, stream.seek(0, os.SEEK_END) - chars))
            return stream.read().decode('utf-8', 'replace')
    except OSError as exc:
        return f'(its log {path} cannot be read: {exc})'


def free_port(host: str = '127.0.0.1') -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _die_with_parent() -> None:
    """In the replica's process: die with the process that started it (a killed dispatcher
    leaves no engine holding memory)."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class LocalReplica:
    """A replica process on this machine, in its own process group (its engine's workers too)."""

    def __init__(self, spec: ReplicaSpec, port: int, log: Path) -> None:
        self.spec, self.port, self.log = spec, port, log
        self.name, self.node = spec.name, socket.gethostname()
        self.url = f'http://127.0.0.1:{port}/v1'
        self.process: Optional[subprocess.Popen] = None
        self.launch()

    def launch(self) -> None:
        """Start (or start again, on the same port) its process, appending to its log."""
        with open(self.log, 'ab') as log:
            self.process = subprocess.Popen(
                self.spec.command('127.0.0.1', self.port),
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.spec.env},
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        return log_tail(self.log, chars)

    def stop(self, grace_s: float = 10.0) -> None:
        """End its whole process group: SIGTERM (and SIGCONT, for a stopped one), then SIGKILL
        after ``grace_s``; idempotent."""
        if self.process is None:
            return
        for signal_number in (signal.SIGTERM, signal.SIGCONT):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal_number)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError):  # its workers, whatever the leader did
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None


class LocalPlacement:
    """Replicas as processes of this machine, each on a free port of 127.0.0.1, logging to
    ``{log_dir}/{name}.log``; a spec asking for GPUs gets the next ones of ``devices`` (default:
    those ``CUDA_VISIBLE_DEVICES`` names, else all torch sees) as its ``CUDA_VISIBLE_DEVICES``."""

    def __init__(self, log_dir: str | os.PathLike, devices: Optional[list[str]] = None) -> None:
        self.log_dir, self.devices = Path(log_dir), devices

    def _visible(self) -> list[str]:
        if self.devices is not None:
            return [str(device) for device in self.devices]
        named = os.environ.get('CUDA_VISIBLE_DEVICES')
        if named is not None:
            return [device for device in named.split(',') if device.strip()]
        import torch

        return [str(index) for index in range(torch.cuda.device_count())]

    def _with_devices(self, specs: list[ReplicaSpec]) -> list[ReplicaSpec]:
        """Each spec asking for GPUs with its own ones, or an error where too few are here."""
        wanted = sum(spec.gpus for spec in specs)
        if not wanted:
            return specs
        devices = self._visible()
        if wanted > len(devices):
            raise ReplicaError(
                f'{len(specs)} replicas ask for {wanted} GPUs in all and this machine has '
                f'{len(devices)} ({devices}): lower replicas, or the tensor-parallel size'
            )
        placed, at = [], 0
        for spec in specs:
            env = {**spec.env, 'CUDA_VISIBLE_DEVICES': ','.join(devices[at : at + spec.gpus])}
            placed.append(ReplicaSpec(spec.name, spec.argv, env, spec.gpus))
            at += spec.gpus
        return placed

    def start(self, specs: list[ReplicaSpec]) -> list[LocalReplica]:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        started: list[LocalReplica] = []
        try:
            for spec in self._with_devices(specs):
                started.append(LocalReplica(spec, free_port(), self.log_dir / f'{spec.name}.log'))
        except BaseException:
            for replica in started:
                replica.stop()
            raise
        return started

    def wait_ready(self, replicas: list[Replica], timeout_s: float) -> None:
        wait_healthy(replicas, timeout_s)


@contextlib.contextmanager
def serving(
    placement: Placement, specs: list[ReplicaSpec], ready_timeout_s: float
) -> Iterator[list[Replica]]:
    """The replicas of ``specs``, ready, for the block; all stopped at its end, after a failure
    and on Ctrl-C."""
    replicas: list[Replica] = []
    try:
        replicas = placement.start(specs)
        placement.wait_ready(replicas, ready_timeout_s)
        yield replicas
    finally:
        for replica in replicas:
            replica.stop()


def _flag(name: str, value) -> list[str]:
    """An engine argument as vLLM's server takes it on its command line."""
    option = '--' + name.replace('_', '-')
    if value is True:
        return [option]
    if value is False:
        return [f'--no-{name.replace("_", "-")}']
    if isinstance(value, (dict, list)):
        return [option, json.dumps(value)]
    return [option, str(value)]


def vllm_server_argv(model_cfg: dict, served_name: Optional[str] = None) -> list[str]:
    """vLLM's OpenAI-compatible server for a ``LongContextVLLM`` config, with the engine settings
    the wrapper would give ``LLM(...)`` (``engine_kwargs``: the window, prefix caching, chunked
    prefill for long windows, RoPE scaling as ``hf_overrides``, the config's ``model_kwargs``
    such as dtype and tensor_parallel_size). Sampling defaults are vLLM's own, not the model's
    generation_config.json, as ``SamplingParams`` in process. ``served_name``: the model's name
    in requests (default: ``plan.served_model_name`` of its identity)."""
    from ..models.vllm import engine_kwargs, installed_vllm_version
    from .plan import model_identity, served_model_name

    served_name = served_name or served_model_name(model_identity(model_cfg))

    settings = engine_kwargs(
        model_cfg['path'],
        model_cfg['max_seq_len'],
        dict(model_cfg.get('model_kwargs') or {}),
        model_cfg.get('rope_scaling'),
        bool(model_cfg.get('trust_remote_code', False)),
        installed_vllm_version(),
    )
    argv = [sys.executable, '-m', 'vllm.entrypoints.openai.api_server']
    argv += ['--model', os.path.expanduser(model_cfg['path']), '--served-model-name', served_name]
    argv += ['--host', '{host}', '--port', '{port}', '--generation-config', 'vllm']
    for name, value in settings.items():
        argv += _flag(name, value)
    return argv


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
    another server's command in place of vLLM's (a stand-in such as ``paced_server``), with
    ``{model}`` (the model folder), ``{host}`` and ``{port}`` filled."""
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
            metrics = reply.read().decode('utf-8', 'replace')
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
