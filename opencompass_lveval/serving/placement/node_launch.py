"""What starts a replica's server on its node, for the Ray and Slurm placements.

Only there is it known which address the driver reaches the node at and which port is free, so
the server's argv is completed on the node: ``{host}`` becomes the node's address, ``{port}`` a
port free on it. Standard library only (and the package's ``processes``), so that a Ray worker
or a Slurm step loading it imports nothing heavy.

In a Slurm step it runs as
``python -m opencompass_lveval.serving.placement.node_launch --gpus 0,1 -- ARGV...``: it narrows the GPUs the step sees to the replica's own, prints one line
``LVEVAL-REPLICA {json}`` (url, host, step, gpus) for the driver, and then becomes the server
(``exec``), so that the step's task is the server itself and ending the step ends it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Optional

from ...runner.processes import free_port, node_address

READY_MARK = 'LVEVAL-REPLICA '


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
