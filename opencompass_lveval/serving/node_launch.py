"""What starts a replica's server on its node, for the Ray and Slurm placements.

Only there is it known which address the driver reaches the node at and which port is free, so
the server's argv is completed on the node: ``{host}`` becomes the node's address, ``{port}`` a
port free on it. Standard library only, so that a Ray worker or a Slurm step loading it imports
nothing heavy.

In a Slurm step it runs as ``python -m opencompass_lveval.serving.node_launch --gpus 0,1 --
ARGV...``: it narrows the GPUs the step sees to the replica's own, prints one line
``LVEVAL-REPLICA {json}`` (url, host, step, gpus) for the driver, and then becomes the server
(``exec``), so that the step's task is the server itself and ending the step ends it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import suppress
from typing import Optional

READY_MARK = 'LVEVAL-REPLICA '
_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child before it runs: receive ``sig`` when the thread that started it ends (a killed
    Ray worker or driver leaves no server behind)."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, sig)


def end_group(process: subprocess.Popen, grace_s: float) -> int:
    """End a server started in a process group of its own, and whatever it started there:
    SIGTERM, then SIGKILL to the group after ``grace_s``; returns its exit code."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace_s)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    return process.wait()


def node_address(toward: Optional[str] = None) -> str:
    """This node's address as seen from ``toward`` (the address of the machine that launched the
    replica): the source address of a route to it, else the address the host name resolves to."""
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


def free_port(host: str) -> int:
    """A port nothing listens on at ``host`` now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def resolve_argv(argv: list[str], host: str, port: int) -> list[str]:
    """``argv`` with ``{host}`` and ``{port}`` filled in (nothing else is read as a field)."""
    return [part.replace('{host}', host).replace('{port}', str(port)) for part in argv]


def narrow_gpus(visible: Optional[str], positions: list[int]) -> str:
    """The ``CUDA_VISIBLE_DEVICES`` of a replica holding ``positions`` of the GPUs the step sees
    (``visible``); '' for a replica that holds none."""
    if not positions:
        return ''
    seen = [part for part in (visible or '').split(',') if part]
    if max(positions) >= len(seen):
        raise SystemExit(
            f'{socket.gethostname()}: the replica needs GPUs at positions {positions}, but the '
            f'Slurm step sees CUDA_VISIBLE_DEVICES={visible or "(none)"}: submit the job with '
            "--gres=gpu:N (N the GPUs of a node) so that every step sees the node's GPUs"
        )
    return ','.join(seen[p] for p in positions)


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description='Start a replica server in a Slurm step.')
    parser.add_argument('--gpus', default='', help='positions of the GPUs the step sees, 0,1')
    parser.add_argument('server', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    server = args.server[1:] if args.server[:1] == ['--'] else args.server
    positions = [int(p) for p in args.gpus.split(',') if p]
    gpus = narrow_gpus(os.environ.get('CUDA_VISIBLE_DEVICES'), positions)
    host = node_address(os.environ.get('SLURM_LAUNCH_NODE_IPADDR'))
    port = free_port(host)
    where = {
        'url': f'http://{host}:{port}',
        'host': socket.gethostname(),
        'step': os.environ.get('SLURM_STEP_ID', ''),
        'gpus': gpus,
        'pid': os.getpid(),
    }
    print(READY_MARK + json.dumps(where), flush=True)
    os.execvpe(
        server[0], resolve_argv(server, host, port), {**os.environ, 'CUDA_VISIBLE_DEVICES': gpus}
    )


if __name__ == '__main__':
    sys.exit(main())
