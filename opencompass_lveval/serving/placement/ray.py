"""Replicas on a Ray cluster: each one a Ray actor holding the replica's GPUs on some node.

The actor asks Ray for ``num_gpus`` = the spec's ``gpus`` (the tensor-parallel size), so Ray
hands it ``CUDA_VISIBLE_DEVICES`` and never gives those GPUs to another replica; actors are
spread over the nodes. On its node the actor starts the server as a process of its own group,
with the node's address as ``{host}`` and a port free there as ``{port}``, and reports the URL.
Stopping a replica ends that process group; the process also dies with the actor's worker
(``PR_SET_PDEATHSIG``), and Ray ends a driver's actors when the driver goes, so neither a lost
driver nor a killed actor leaves a server running.

The cluster is found as the Ray runner finds it (``processes.connect_ray``): ``address``, else
``$RAY_ADDRESS``. Replicas the cluster cannot hold (more GPUs or CPUs in all than its live nodes
offer, or more GPUs for one than any node has) are refused before any actor starts. Each
server's output is ``{log_dir}/{name}.log``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

from ...files.errors import ClusterSetupError
from ...runner.processes import connect_ray, die_with_parent, end_group, free_port
from . import LOG_TAIL_CHARS, ReplicaSpec, log_tail
from .node_launch import resolve_argv

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

    def __init__(self, name: str, actor: Any, where: dict, log: Optional[Path]) -> None:
        self.name, self.actor, self.where, self.log = name, actor, where, log
        self.url, self.node = where['url'] + '/v1', where['host']
        self.stopped = False
        self.lost = False  # its actor died or went silent: not asked again
        self.code: Any = None

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        if self.log is None:
            return '(no log_dir: its output is in the Ray logs of its node)'
        return log_tail(self.log, chars)

    def alive(self) -> bool:
        """The server process runs, as its actor says within a few seconds; an actor that died
        or did not answer is lost for good (asking again would wait again)."""
        import ray

        if self.stopped or self.lost:
            return False
        try:
            self.code = ray.get(self.actor.returncode.remote(), timeout=_ASK_S)
        except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
            self.lost, self.code = True, 'lost'
            return False
        return self.code is None

    def stop(self) -> Any:
        """The server ended through its actor (its code), or 'lost'; the actor killed."""
        import ray

        if self.stopped:
            return self.code
        self.stopped = True
        code: Any = 'lost'  # its node is gone or silent: the server went with it, or the actor
        if not self.lost:
            with contextlib.suppress(ray.exceptions.RayError, ray.exceptions.GetTimeoutError):
                code = ray.get(self.actor.stop.remote(), timeout=_STOP_GRACE_S + _ASK_S)
        ray.kill(self.actor)
        self.code = code
        return code

    def __repr__(self) -> str:
        return f'RayReplica({self.name!r}, {self.url}, on {self.node})'


class RayPlacement:
    """Starts replicas as Ray actors, ``num_cpus`` CPUs and the spec's GPUs each, spread over
    the nodes; ``start_timeout_s`` bounds the wait for Ray to place and start one."""

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
        self.connected = False  # by this placement: it disconnects when closed
        self.lock = threading.Lock()

    def _ray(self) -> Any:
        import ray

        with self.lock:
            if not ray.is_initialized():
                connect_ray(self.address, 'RayPlacement', 'the placement address')
                self.connected = True
        return ray

    def prepare(self, specs: list[ReplicaSpec]) -> list[ReplicaSpec]:
        ray = self._ray()
        try:
            refuse_what_the_cluster_cannot_hold(ray.nodes(), specs, self.num_cpus)
        except BaseException:
            self.close()
            raise
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        return specs

    def launch(self, spec: ReplicaSpec) -> RayReplica:
        ray = self._ray()
        actor = (
            ray.remote(ServerActor)
            .options(
                num_gpus=spec.gpus,
                num_cpus=self.num_cpus,
                max_restarts=0,
                scheduling_strategy='SPREAD',
            )
            .remote(spec.gpus)
        )
        log = self.log_dir / f'{spec.name}.log' if self.log_dir else None
        try:
            where = ray.get(
                actor.start.remote(list(spec.argv), dict(spec.env), str(log) if log else None),
                timeout=self.start_timeout_s,
            )
        except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as exc:
            ray.kill(actor)
            raise ClusterSetupError(
                f'RayPlacement: replica {spec.name} was not started within '
                f'{self.start_timeout_s:.0f} s ({type(exc).__name__}): the cluster lacks the '
                'GPUs or CPUs it asks for now, or a node failed; raise start_timeout_s if Ray '
                'needs longer to place it'
            ) from exc
        return RayReplica(spec.name, actor, where, log)

    def close(self) -> None:
        """Disconnect from Ray where this placement connected, so that a runner after it
        (``RayRunner`` for the prediction files) connects afresh."""
        import ray

        with self.lock:
            if self.connected:
                ray.shutdown()
                self.connected = False


def refuse_what_the_cluster_cannot_hold(nodes: list[dict], specs: list, num_cpus: float) -> None:
    """Replicas that would wait for ever for resources no live node offers: refused here."""
    alive = [node['Resources'] for node in nodes if node.get('Alive')]
    most = max((node.get('GPU', 0) for node in alive), default=0)
    for spec in specs:
        if spec.gpus > most:
            raise ClusterSetupError(
                f'RayPlacement: replica {spec.name} asks for {spec.gpus} GPUs (its tensor-'
                f'parallel size), but the nodes of the Ray cluster offer at most {most:g}'
            )
    wide = max((spec.gpus for spec in specs), default=0)
    if wide:
        room = sum(int(node.get('GPU', 0) // wide) for node in alive)
        asking = sum(1 for spec in specs if spec.gpus)
        if asking > room:
            raise ClusterSetupError(
                f'RayPlacement: {asking} replicas of {wide} GPUs each, and the live nodes of the '
                f'Ray cluster hold {room} such replicas: lower replicas to at most {room}'
            )
    cpus = sum(node.get('CPU', 0) for node in alive)
    if len(specs) * num_cpus > cpus:
        raise ClusterSetupError(
            f'RayPlacement: {len(specs)} replicas of {num_cpus:g} CPUs each, and the live nodes '
            f'of the Ray cluster offer {cpus:g} CPUs: lower replicas to at most '
            f'{int(cpus // num_cpus)} (or num_cpus in placement_settings)'
        )
