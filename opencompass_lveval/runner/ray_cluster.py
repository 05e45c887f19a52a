"""What the driver asks of a Ray cluster before and while it hands it tasks: does its head answer,
can any node hold what a task asks for, and which nodes to keep tasks off.

``ray.init`` has no time limit of its own: an address where nothing listens, a port that never
answers or a server of another kind (HTTP) held it for minutes. ``head_problem`` asks the head
(its GCS) one question over gRPC first, within a limit, and says what it found instead.

A node that went silent (an attempt passed its deadline unanswered) is avoided, but not for the
rest of the run: ``NodeWatch`` sends it a probe, a zero-CPU task pinned to it, and takes it back
once the probe runs. Avoidance pins a task to a chosen node (``NodeAffinitySchedulingStrategy``,
in every Ray from 2.40 on; Ray's label selectors came later), the least busy node that offers
what the task asks for.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

# Any answer to this request proves a Ray head (its GCS) listens; it exists in every Ray the
# package allows. A ``ray://`` address (Ray Client) answers with UNIMPLEMENTED, which also counts.
_GCS_METHOD = '/ray.rpc.NodeInfoGcsService/GetClusterId'
_RETRY_S = 0.5
PROBE_AGAIN_S = 10.0  # between probes of a silent node whose last probe failed
REFRESH_S = 5.0  # how old the driver's list of live nodes may be


def head_target(address: str) -> str | None:
    """``host:port`` of a Ray address (``HEAD:6379``, ``ray://HEAD:10001``), or None for the
    forms Ray resolves itself (``auto``, ``local``)."""
    bare = address.split('://', 1)[-1]
    host, colon, port = bare.rpartition(':')
    return bare if colon and host and port.isdigit() else None


def head_problem(address: str, timeout_s: float) -> str | None:
    """None once the Ray head at ``address`` answers, else, after ``timeout_s`` seconds of
    asking (every half second, so a head that is still starting is waited for), why not."""
    import grpc

    target = head_target(address)
    if target is None:
        return None
    end = time.monotonic() + timeout_s
    while True:
        channel = grpc.insecure_channel(target)
        try:
            ask = channel.unary_unary(
                _GCS_METHOD, request_serializer=bytes, response_deserializer=bytes
            )
            ask(b'', timeout=max(end - time.monotonic(), 0.05))
            return None
        except grpc.RpcError as exc:
            code = exc.code()
            if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                if code == grpc.StatusCode.UNIMPLEMENTED and '://' in address:
                    return None
                return f'{target} answers, but not as a Ray head ({code.name}: {exc.details()})'
            found = exc.details() or code.name
        finally:
            channel.close()
        if time.monotonic() + _RETRY_S >= end:
            return f'{found}; asked for {timeout_s:g} s'
        time.sleep(_RETRY_S)


def positive_finite(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _amount(name: str, value: float) -> str:
    if name == 'memory':
        return f'{value / 2**30:.3g} GiB of memory'
    plural = 's' if name in ('CPU', 'GPU') and value != 1 else ''
    return f'{value:g} {name}{plural}'


def describe(request: dict[str, float]) -> str:
    return ', '.join(_amount(name, value) for name, value in request.items())


def fits(request: dict[str, float], node: dict) -> bool:
    offers = node['Resources']
    return all(offers.get(name, 0) >= value for name, value in request.items())


def unmet(request: dict[str, float], nodes: list[dict]) -> str | None:
    """None where a live node offers all of ``request`` (Ray resource name -> amount), else what
    the nodes offer at most, resource by resource."""
    alive = [node for node in nodes if node['Alive']]
    if any(fits(request, node) for node in alive):
        return None
    most = {
        name: max((node['Resources'].get(name, 0) for node in alive), default=0) for name in request
    }
    if all(most[name] >= value for name, value in request.items()):
        return f'no single node offers all of it (the most any offers: {describe(most)})'
    return f'the most any node offers is {describe(most)}'


class NodeWatch:
    """Nodes kept free of tasks after a silence (node id -> host), probed until they answer."""

    def __init__(self, ray: Any, avoided: dict[str, str], say: Callable[[str], None]) -> None:
        self.ray, self.say = ray, say
        self.avoided = dict(avoided)
        self.probes: dict[Any, str] = {}  # probe -> node id
        self.next_probe: dict[str, float] = {}
        self.nodes: list[dict] = []
        self.refreshed = -math.inf

    def alive(self) -> dict[str, dict]:
        """The live nodes by id, at most ``REFRESH_S`` old."""
        if time.monotonic() - self.refreshed > REFRESH_S:
            self.nodes = self.ray.nodes()
            self.refreshed = time.monotonic()
        return {node['NodeID']: node for node in self.nodes if node['Alive']}

    def avoid(self, node_id: str, host: str) -> None:
        self.avoided[node_id] = host
        self.next_probe[node_id] = time.monotonic()

    def poll(self) -> None:
        """Probe each avoided live node that has no probe in flight; take back those whose
        probe ran."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from .on_node import node_answers

        now, alive, probing = time.monotonic(), self.alive(), set(self.probes.values())
        for node_id in self.avoided:
            if (
                node_id in alive
                and node_id not in probing
                and now >= self.next_probe.get(node_id, 0)
            ):
                pinned = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
                probe = self.ray.remote(node_answers).options(
                    num_cpus=0, max_retries=0, scheduling_strategy=pinned
                )
                self.probes[probe.remote()] = node_id
        if not self.probes:
            return
        ready, _ = self.ray.wait(list(self.probes), num_returns=len(self.probes), timeout=0)
        for probe in ready:
            node_id = self.probes.pop(probe)
            try:
                self.ray.get(probe)
            except self.ray.exceptions.RayError:  # dead, or its worker failed: later again
                self.next_probe[node_id] = time.monotonic() + PROBE_AGAIN_S
                continue
            host = self.avoided.pop(node_id)
            self.say(f'{host} (Ray node {node_id[:12]}) answers again: tasks may run there again')

    def place(self, request: dict[str, float], load: Counter) -> dict | None:
        """Ray options that place a task asking for ``request``: Ray's own spreading while no
        node is avoided; else pinned to the live node, not avoided, that offers it and runs the
        fewest of this run's tasks (``load``); None while every node that offers it is avoided
        (the task waits for one to answer again)."""
        if not self.avoided:
            return {'scheduling_strategy': 'SPREAD'}
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        offering = [n for n in self.alive().values() if fits(request, n)]
        free = sorted(
            (load[n['NodeID']], n['NodeID']) for n in offering if n['NodeID'] not in self.avoided
        )
        if free:
            return {'scheduling_strategy': NodeAffinitySchedulingStrategy(free[0][1], soft=False)}
        return None if offering else {'scheduling_strategy': 'SPREAD'}

    def close(self) -> None:
        for probe in self.probes:
            self.ray.cancel(probe, force=True)
        self.probes.clear()
