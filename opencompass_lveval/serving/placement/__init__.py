"""Where engine replicas run: what to start (``ReplicaSpec``), a ``Placement`` that starts them,
and the ``Replica`` handle the supervisor and the dispatcher hold.

A placement first ``prepare``s the specs of a stage (refusing, before anything starts, replicas
it cannot hold: more GPUs or CPUs than there are, and giving each its GPUs), then ``launch``es
one spec at a time (the supervisor launches them in parallel, and again when one exits),
filling ``{host}`` and ``{port}`` of its command with the address it chose. Readiness is the
supervisor's (``GET /health`` answers 200). Placements are looked up by name (``PLACEMENTS``):
'local', 'ray' and 'slurm', each built as ``cls(log_dir=FOLDER, **placement_settings)``; each
server's output goes to ``{log_dir}/{name}.log``.
"""

from __future__ import annotations

import importlib
import os
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Protocol, runtime_checkable

from ...files.errors import ModelConfigError

PLACEMENTS = {
    'local': 'opencompass_lveval.serving.placement.local:LocalPlacement',
    'ray': 'opencompass_lveval.serving.placement.ray:RayPlacement',
    'slurm': 'opencompass_lveval.serving.placement.slurm:SlurmPlacement',
}
LOG_TAIL_CHARS = 3000


class ReplicaError(RuntimeError):
    """A replica that could not start or serve."""


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica to start: ``argv`` may hold ``{host}`` and ``{port}``, which the placement
    fills; ``gpus``: what it needs (its tensor-parallel size); ``env``: its environment on top
    of the driver's."""

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
    where: dict  # what the journal records of it: host, GPUs, URL, process or step

    def alive(self) -> bool: ...

    def stop(self) -> object: ...  # its exit code, or how it ended ('lost')

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str: ...


@runtime_checkable
class Placement(Protocol):
    log_dir: Optional[Path]

    def prepare(self, specs: list[ReplicaSpec]) -> list[ReplicaSpec]: ...

    def launch(self, spec: ReplicaSpec) -> Replica: ...

    def close(self) -> None: ...


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


def healthy(url: str, timeout_s: float) -> bool:
    """Whether ``GET /health`` of a replica's base URL answers 200 within ``timeout_s``."""
    base = url.removesuffix('/v1')
    try:
        with urllib.request.urlopen(f'{base}/health', timeout=timeout_s) as reply:
            return reply.status == 200
    except (OSError, ValueError):
        return False


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    """The end of a log file, as text whatever its bytes."""
    try:
        with open(path, 'rb') as stream:
            stream.seek(max(0, stream.seek(0, os.SEEK_END) - chars))
            return stream.read().decode('utf-8', 'replace')
    except OSError as exc:
        return f'(its log {path} cannot be read: {exc})'
