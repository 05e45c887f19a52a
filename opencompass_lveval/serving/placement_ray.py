"""Replicas on a Ray cluster: each one a Ray actor holding the replica's GPUs on some node.

The actor asks Ray for ``num_gpus`` = the spec's ``gpus`` (the tensor-parallel size), so Ray
hands it ``CUDA_VISIBLE_DEVICES`` and never gives those GPUs to another replica; actors are
spread over the nodes. On its node the actor starts the server as a process of its own group,
with the node's address as ``{host}`` and a port free there as ``{port}``, and reports the URL.
Stopping a replica ends that process group; the process also dies with the actor's worker
(``PR_SET_PDEATHSIG``), and Ray ends a driver's actors when the driver goes, so neither a lost
driver nor a killed actor leaves a server running.

The cluster is found as the Ray runner finds it: ``address``, else ``$RAY_ADDRESS``. Where each
replica ran (host, Ray node id, GPUs, URL) and when it stopped is a line of
``{log_dir}/replicas.jsonl``; each server's output is ``{log_dir}/{name}.log``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from pathlib import Path
from typing import Any, Optional

from ..files.errors import ClusterSetupError
from .journal import ReplicaJournal
from .node_launch import die_with_parent, end_group, free_port, resolve_argv
from .replicas import LOG_TAIL_CHARS, log_tail, wait_healthy

_ASK_S = 10.0  # how long a question to a replica's actor may take before it counts as lost
_STOP_GRACE_S = 10.0


class ServerActor:
    """Runs on the replica's node, in the Ray worker that holds its GPUs."""

    def __init__(self, gpus: int) -> None:
        self.gpus = gpus
        self.process: Optional[subprocess.Popen] = None

    def start(self, argv: list[str], env: dict, log: Optional[str]) -> dict:
        import ray

        host = ray.util.get_node_ip_address()
        port = free_port(host)
        gpus = os.environ.get('CUDA_VISIBLE_DEVICES', '') if self.gpus else ''
        out = open(log, 'a', encoding='utf-8') if log else None  # noqa: SIM115 (the child's)
        self.process = subprocess.Popen(
            resolve_argv(argv, host, port),
            env={**os.environ, **env, 'CUDA_VISIBLE_DEVICES': gpus},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if out else None,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        if out:
            out.close()
        return {
            'url': f'http://{host}:{port}',
            'host': socket.gethostname(),
            'node_id': ray.get_runtime_context().get_node_id(),
            'gpus': gpus,
            'pid': self.process.pid,
        }

    def returncode(self) -> Optional[int]:
        return self.process.poll() if self.process else None

    def stop(self) -> Optional[int]:
        return end_group(self.process, _STOP_GRACE_S) if self.process else None


class RayReplica:
    """A replica served by a ``ServerActor``."""

    def __init__(self, name: str, actor: Any, where: dict, journal: ReplicaJournal) -> None:
        self.name, self.actor, self.where, self.journal = name, actor, where, journal
        self.url, self.node = where['url'] + '/v1', where['host']
        self.log: Optional[Path] = None
        self.stopped = False
        self.lost = False  # its actor died or went silent: not asked again
        self.on_stop = lambda: None

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        if self.log is None:
            return '(no log_dir: its output is in the Ray logs of its node)'
        return log_tail(self.log, chars)

    def alive(self) -> bool:
        """The server process runs, as its actor says within a few seconds; an actor that died
        or did not answer is lost for good (a dispatcher asking again would wait again)."""
        import ray

        if self.stopped or self.lost:
            return False
        try:
            return ray.get(self.actor.returncode.remote(), timeout=_ASK_S) is None
        except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
            self.lost = True
            return False

    def stop(self) -> None:
        import ray

        if self.stopped:
            return
        self.stopped = True
        code: Any = 'lost'  # its node is gone or silent: the server went with it, or the actor
        if not self.lost:
            with contextlib.suppress(ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                code = ray.get(self.actor.stop.remote(), timeout=_STOP_GRACE_S + _ASK_S)
        ray.kill(self.actor)
        self.journal.note(self.name, 'stopped', code=code)
        self.on_stop()

    def __repr__(self) -> str:
        return f'RayReplica({self.name!r}, {self.url}, on {self.node})'


class RayPlacement:
    """Starts replicas as Ray actors, ``num_cpus`` CPUs and the spec's GPUs each, spread over
    the nodes; ``start_timeout_s`` bounds the wait for Ray to place them all."""

    def __init__(
        self,
        address: Optional[str] = None,
        log_dir: Optional[str] = None,
        num_cpus: float = 1,
        start_timeout_s: float = 600,
    ) -> None:
        self.address = address
        self.log_dir = Path(log_dir).resolve() if log_dir else None
        self.num_cpus = num_cpus
        self.start_timeout_s = start_timeout_s
        self.connected = False  # by this placement: it disconnects when its replicas are gone
        self.running: set[str] = set()

    def _connect(self) -> Any:
        import ray

        if not ray.is_initialized():
            from ..runner.ray_runner import connect_ray

            connect_ray(self.address, 'RayPlacement', 'the placement address')
            self.connected = True
        return ray

    def _stopped(self, name: str) -> None:
        """Once its last replica stopped, a placement that connected to Ray disconnects, so
        that a runner after it (``RayRunner`` for the prediction files) connects afresh."""
        import ray

        self.running.discard(name)
        if not self.running and self.connected:
            ray.shutdown()
            self.connected = False

    def start(self, specs: list) -> list[RayReplica]:
        ray = self._connect()
        try:
            return self._start(ray, specs)
        except BaseException:
            self._stopped('')  # nothing runs: disconnect
            raise

    def _start(self, ray: Any, specs: list) -> list[RayReplica]:
        _refuse_what_no_node_has(ray, specs)
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        journal = ReplicaJournal(self.log_dir)
        remote = ray.remote(ServerActor)
        actors, asked = [], []
        for spec in specs:
            actor = remote.options(
                num_gpus=spec.gpus,
                num_cpus=self.num_cpus,
                max_restarts=0,
                scheduling_strategy='SPREAD',
            ).remote(spec.gpus)
            log = str(self.log_dir / f'{spec.name}.log') if self.log_dir else None
            actors.append(actor)
            asked.append(actor.start.remote(list(spec.argv), dict(spec.env), log))
        try:
            places = ray.get(asked, timeout=self.start_timeout_s)
        except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as exc:
            for actor in actors:
                ray.kill(actor)
            raise ClusterSetupError(
                f'RayPlacement: {len(specs)} replicas were not all started within '
                f'{self.start_timeout_s:.0f} s ({type(exc).__name__}): the cluster lacks the '
                'GPUs or CPUs they ask for, or a node failed; raise start_timeout_s if Ray needs '
                'longer to place them'
            ) from exc
        replicas = []
        for spec, actor, where in zip(specs, actors, places):
            journal.note(spec.name, 'started', **where)
            replica = RayReplica(spec.name, actor, where, journal)
            replica.on_stop = lambda name=spec.name: self._stopped(name)
            self.running.add(spec.name)
            replica.log = self.log_dir / f'{spec.name}.log' if self.log_dir else None
            replicas.append(replica)
        return replicas

    def wait_ready(self, replicas: list, timeout_s: float) -> None:
        wait_healthy(replicas, timeout_s)


def _refuse_what_no_node_has(ray: Any, specs: list) -> None:
    """A replica asking for more GPUs than any node offers would wait for ever: refused here."""
    offered = max(
        (node['Resources'].get('GPU', 0) for node in ray.nodes() if node['Alive']), default=0
    )
    for spec in specs:
        if spec.gpus > offered:
            raise ClusterSetupError(
                f'RayPlacement: replica {spec.name} asks for {spec.gpus} GPUs (its tensor-'
                f'parallel size), but the nodes of the Ray cluster offer at most {offered:g}'
            )
