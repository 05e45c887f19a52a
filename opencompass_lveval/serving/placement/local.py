"""Replicas as processes of this machine, each on a free port of 127.0.0.1.

A replica asking for GPUs gets the next ones of ``devices`` (default: those
``CUDA_VISIBLE_DEVICES`` names, else all torch sees) as its ``CUDA_VISIBLE_DEVICES``; one that
asks for none holds ``num_cpus`` of this machine's cores (1 by default: a CPU engine spreads over
every core it is given, and a stage asking more replicas than the cores hold is refused before
any starts). Each runs in a process group of its own (its engine's workers too), dies with the
thread that started it, and is ended whole.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Optional

from ...runner.processes import die_with_parent, end_group, free_port
from . import LOG_TAIL_CHARS, ReplicaError, ReplicaSpec, log_tail

STOP_GRACE_S = 10.0


class LocalReplica:
    """A replica process on this machine."""

    def __init__(self, spec: ReplicaSpec, port: int, log: Path) -> None:
        self.spec, self.port, self.log = spec, port, log
        self.name, self.node = spec.name, socket.gethostname()
        self.url = f'http://127.0.0.1:{port}/v1'
        self.process: Optional[subprocess.Popen] = None
        self.code: Optional[int] = None
        self.launch()
        self.where = {
            'url': self.url,
            'host': self.node,
            'pid': self.process.pid,
            'gpus': spec.env.get('CUDA_VISIBLE_DEVICES', ''),
        }

    def launch(self) -> None:
        """Start (or start again, on the same port) its process, appending to its log."""
        with open(self.log, 'ab') as log:
            self.process = subprocess.Popen(
                self.spec.command('127.0.0.1', self.port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.spec.env},
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        self.code = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        return log_tail(self.log, chars)

    def stop(self, grace_s: float = STOP_GRACE_S) -> Optional[int]:
        """End its whole process group; idempotent; its exit code."""
        if self.process is not None:
            self.code = end_group(self.process, grace_s)
            self.process = None
        return self.code

    def __repr__(self) -> str:
        return f'LocalReplica({self.name!r}, {self.url})'


class LocalPlacement:
    """Replicas as processes of this machine, logging to ``{log_dir}/{name}.log``."""

    def __init__(
        self,
        log_dir: str | os.PathLike,
        devices: Optional[list[str]] = None,
        num_cpus: float = 1,
    ) -> None:
        self.log_dir, self.devices, self.num_cpus = Path(log_dir), devices, num_cpus
        if not isinstance(num_cpus, (int, float)) or isinstance(num_cpus, bool) or num_cpus <= 0:
            raise ReplicaError(
                f'LocalPlacement: num_cpus must be a number > 0 (cores each CPU replica holds), '
                f'not {num_cpus!r}'
            )

    def _visible(self) -> list[str]:
        if self.devices is not None:
            return [str(device) for device in self.devices]
        named = os.environ.get('CUDA_VISIBLE_DEVICES')
        if named is not None:
            return [device for device in named.split(',') if device.strip()]
        import torch

        return [str(index) for index in range(torch.cuda.device_count())]

    def prepare(self, specs: list[ReplicaSpec]) -> list[ReplicaSpec]:
        """Each spec asking for GPUs with its own ones; a refusal where this machine has too
        few GPUs, or too few cores for the CPU replicas."""
        on_cpu = [spec for spec in specs if not spec.gpus]
        cores = os.cpu_count() or 1
        if on_cpu and len(on_cpu) * self.num_cpus > cores:
            raise ReplicaError(
                f'{len(on_cpu)} CPU replicas of {self.num_cpus:g} cores each need '
                f'{len(on_cpu) * self.num_cpus:g} cores, and this machine has {cores}: lower '
                f'replicas to at most {int(cores // self.num_cpus)} (or num_cpus in '
                'placement_settings, for servers lighter than an engine)'
            )
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

    def launch(self, spec: ReplicaSpec) -> LocalReplica:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return LocalReplica(spec, free_port(), self.log_dir / f'{spec.name}.log')

    def close(self) -> None:
        pass
