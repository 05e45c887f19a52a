"""Processes the package starts and must not leave behind, and the Ray cluster they may run on.

Standard library only (Ray is imported by ``connect_ray`` when called), so that a Ray worker or a
Slurm step that loads it imports nothing heavy.

- ``die_with_parent``: in a child before it runs, the signal it gets when the thread that started
  it ends (``PR_SET_PDEATHSIG``): a killed driver, Ray worker or ``srun`` leaves no server behind.
- ``end_group``: a child started in a process group of its own (``start_new_session``) is ended
  with everything it started there: SIGTERM (and SIGCONT, so that a stopped one hears it), then
  SIGKILL to the group after a grace period.
- ``free_port`` and ``node_address``: where a server on this machine can listen, and the address
  another machine reaches it at.
- ``connect_ray``: the cluster at a setting's address or ``$RAY_ADDRESS`` once its head answers
  within a limit, or an error naming the address and the setting.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
from contextlib import suppress
from typing import Any, Optional

_PR_SET_PDEATHSIG = 1
CONNECT_TIMEOUT_S = 30.0  # how long connect_ray asks a Ray head before it gives up


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child before it runs (``preexec_fn``): receive ``sig`` when the thread that started
    it ends."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, sig)


def end_group(process: subprocess.Popen, grace_s: float) -> int:
    """End a process started in a group of its own, and whatever it started there: SIGTERM and
    SIGCONT, then SIGKILL to the group after ``grace_s``; returns its exit code."""
    for signal_number in (signal.SIGTERM, signal.SIGCONT):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal_number)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)
    with suppress(ProcessLookupError):  # its workers, whatever the leader did
        os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


def free_port(host: str = '127.0.0.1') -> int:
    """A port nothing listens on at ``host`` now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def node_address(toward: Optional[str] = None) -> str:
    """This machine's address as seen from ``toward`` (the machine that launched a server here):
    the source address of a route to it, else the address the host name resolves to."""
    if toward:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.connect((toward, 9))  # a UDP connect sends nothing; it picks the route
            return probe.getsockname()[0]
        except OSError:
            pass
        finally:
            probe.close()
    return socket.gethostbyname(socket.gethostname())


def connect_ray(
    address: Optional[str], who: str, setting: str, timeout_s: float = CONNECT_TIMEOUT_S
) -> Any:
    """Ray, connected to the cluster at ``address`` or else ``$RAY_ADDRESS``; ``who`` and
    ``setting`` (where the address is set) name the fix where neither is given, or where no
    Ray head answers there within ``timeout_s`` seconds (``ray.init`` has no limit of its own)."""
    from ..files.errors import ClusterSetupError
    from .ray_cluster import head_problem

    address = address or os.environ.get('RAY_ADDRESS')
    if not address:
        raise ClusterSetupError(
            f'{who} needs a Ray cluster: export RAY_ADDRESS=HEAD:6379 (the head that '
            f'`ray start --head` started), or set {setting}'
        )
    problem = head_problem(address, timeout_s)
    if problem:
        raise ClusterSetupError(
            f'{who}: no Ray cluster answers at {address} ({problem}): check the address '
            f'(RAY_ADDRESS, or {setting}), that its head runs and that this machine reaches it '
            f"(`ray status --address {address}`), or give it longer with {who}'s connect_timeout_s"
        )
    import ray

    ray.init(address=address, logging_level='WARNING', log_to_driver=False)
    return ray
