"""A Ray head of a test's own on this machine, safe beside other users' Ray sessions.

Ray's defaults are shared by everyone on a machine: ``/tmp/ray`` (where ``ray start`` writes
``ray_current_cluster``; another user's file there, which this user cannot write, kills the head
just after it starts) and fixed ports (6379, the client server's 10001, the agents'). Here the head
gets a temporary folder of its own (``--temp-dir``: its sessions, sockets, logs and address file)
and a free port for everything it listens on; it is ready only once ``ray start --block`` says it
blocks, and a head that exits before then, or does not get there in time, is an error quoting its
last log lines, not a hang. Afterwards it is stopped with its process group and its folder
removed."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

READY = 'This command will now block forever'  # what `ray start --block` prints once it is up
PORT_FLAGS = (
    '--port', '--ray-client-server-port', '--node-manager-port', '--object-manager-port',
    '--dashboard-agent-listen-port', '--dashboard-agent-grpc-port', '--metrics-export-port',
    '--runtime-env-agent-port',
)  # fmt: skip


class RayHeadError(RuntimeError):
    """The head exited, or was not ready in time; the message holds its last log lines."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports nothing listens on now."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for probe in sockets:
            probe.bind(('127.0.0.1', 0))
        return [probe.getsockname()[1] for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


def last_lines(folder: Path, count: int = 15) -> str:
    """The last lines of the head's own output and of the Ray logs that say why a head died."""
    logs = [folder / 'head.out']
    logs += sorted(folder.glob('session_*/logs/gcs_server.err'))
    logs += sorted(folder.glob('session_*/logs/raylet.err'))
    shown = []
    for log in logs:
        lines = log.read_text(errors='replace').splitlines() if log.is_file() else []
        kept = [line for line in lines if line.strip()][-count:]
        if kept:
            shown.append(f'--- {log.relative_to(folder)}:\n' + '\n'.join(kept))
    return '\n'.join(shown) or '(no log lines)'


@contextlib.contextmanager
def local_ray_head(
    num_cpus: int = 2,
    num_gpus: int = 0,
    env: Optional[dict] = None,
    ray: Optional[str] = None,
    start_timeout_s: float = 120.0,
) -> Iterator[str]:
    """A running head (``ray``: the ``ray`` command, default the one beside this Python; ``env``:
    its environment), yielding its address ``127.0.0.1:PORT``."""
    # Short, under /tmp: Ray's Unix sockets live in it and their paths hold at most 107 bytes.
    folder = Path(tempfile.mkdtemp(prefix='ray', dir='/tmp'))
    ports = free_ports(len(PORT_FLAGS))
    argv = [ray or str(Path(sys.executable).with_name('ray')), 'start', '--head', '--block',
            f'--temp-dir={folder}', '--node-ip-address=127.0.0.1', f'--num-cpus={num_cpus}',
            f'--num-gpus={num_gpus}', '--include-dashboard=false', '--disable-usage-stats',
            *(f'{flag}={port}' for flag, port in zip(PORT_FLAGS, ports))]  # fmt: skip
    with open(folder / 'head.out', 'w') as out:
        head = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + start_timeout_s
        while READY not in (folder / 'head.out').read_text(errors='replace'):
            if head.poll() is not None:
                raise RayHeadError(
                    f'the Ray head exited ({head.returncode}) before it was ready:\n'
                    + last_lines(folder)
                )
            if time.monotonic() > deadline:
                raise RayHeadError(
                    f'the Ray head was not ready in {start_timeout_s:g} s:\n' + last_lines(folder)
                )
            time.sleep(0.2)
        yield f'127.0.0.1:{ports[0]}'
        if head.poll() is not None:
            raise RayHeadError(
                f'the Ray head exited ({head.returncode}) during the test:\n' + last_lines(folder)
            )
    finally:
        head.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
