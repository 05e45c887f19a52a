"""Replicas placed by Ray and by Slurm on the compute nodes of tools/rig.py, for real: each a
paced server (``serving/paced_server.py``) started on its node, answering ``/health`` from the
head, fed by the dispatcher; a node killed mid-dispatch; the driver stopped by Ctrl-C and by
SIGKILL. No replica process may be left on any node.

The driver (``placement_driver.py``) runs on the head as a user would run a stage there, inside
``salloc --no-kill`` for Slurm. The checkout under test reaches every node through PYTHONPATH
(the rig's Ray workers and Slurm steps inherit it), as a shared environment would on a cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from rigs import (
    COMPUTE,
    HEAD,
    RIG,
    SLURM_NOT_WANTED,
    rig,
    skip_unless_possible,
    slurm_wanted,
    unavailable,
    wait_for,
)
from runs import REPO

pytestmark = [pytest.mark.slow, pytest.mark.cluster]
DRIVER = Path(__file__).with_name('placement_driver.py')
ENV = {**os.environ, 'PYTHONPATH': str(REPO)}


def unavailable_with_slurm() -> str | None:
    """Why the rig, Slurm included, cannot start here, or None."""
    return unavailable() or (None if slurm_wanted() else SLURM_NOT_WANTED)


@pytest.fixture(scope='module')
def cluster():
    """A head and three compute nodes, two fake GPUs each, with Slurm and Ray; down at the end."""
    skip_unless_possible(unavailable_with_slurm())
    try:
        rig('up', '--nodes', '3', '--gpus', '2', '--slurm', '--ray', env=ENV, timeout=900)
        yield
    finally:
        rig('down', env=ENV, timeout=120, check=False)


def drive(placement: str, folder: Path, replicas: int, mode: str) -> subprocess.Popen:
    """The driver on the head: ``replicas`` one-GPU replicas, in a session of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(DRIVER), placement, str(folder), str(replicas), '1', mode]
    if placement == 'slurm':
        command = ['salloc', '--no-kill', '-N3', '--gres=gpu:2', *command]
    return subprocess.Popen(
        [sys.executable, str(RIG), 'run', HEAD, '--', *command],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=heed_ctrl_c,
    )  # fmt: skip


def heed_ctrl_c() -> None:
    """SIGINT as a terminal gives it, whatever this process inherited: a suite started in the
    background (``cmd &`` without job control) ignores SIGINT, and so would every driver it
    starts, turning the Ctrl-C test into a hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def placed(folder: Path, process: subprocess.Popen) -> list[dict]:
    """The replicas as the driver saw them once all were ready."""

    def read():
        path = folder / 'replicas.json'
        return json.loads(path.read_text()) if path.is_file() else None

    return wait_for(read, 120, 'replicas ready', process)['replicas']


def replica_processes(folder: Path, servers_only: bool = False) -> list[str]:
    """Command lines of the paced servers of ``folder`` and of the sruns that started them, on
    any node (this machine sees every node's process table)."""
    found = []
    for cmdline in Path('/proc').glob('[0-9]*/cmdline'):
        try:
            text = cmdline.read_bytes().replace(b'\0', b' ').decode()
        except OSError:
            continue
        ours = 'paced_server' in text and str(folder) in text
        if ours and not (servers_only and text.startswith('srun ')):
            found.append(text)
    return found


def none_left(folder: Path, process: subprocess.Popen, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while replica_processes(folder) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert replica_processes(folder) == []


def check_placed(replicas: list[dict], count: int) -> None:
    """Each replica answered /health from the head, on a compute node, with one GPU of its own."""
    assert len(replicas) == count and all(r['health'] for r in replicas), replicas
    assert {r['node'] for r in replicas} <= set(COMPUTE)
    assert len({r['node'] for r in replicas}) == min(count, 3), replicas  # spread
    assert all(len(r['gpus'].split(',')) == 1 for r in replicas)
    held = [(r['node'], r['gpus']) for r in replicas]
    assert len(set(held)) == len(held), held  # no GPU given to two replicas


@pytest.mark.parametrize('placement', ['ray', 'slurm'])
def test_ctrl_c_and_a_killed_driver_leave_no_replica(cluster, tmp_path, placement):
    """Four replicas on three nodes (two share a node, not a GPU), ready and answering from the
    head; Ctrl-C (SIGINT to the driver's process group) stops them all; so does the driver's
    death by SIGKILL, through the actors' owner (Ray) or srun's parent-death signal (Slurm)."""
    folder = tmp_path / 'interrupted'
    process = drive(placement, folder, 4, 'hold')
    check_placed(placed(folder, process), 4)
    assert len(replica_processes(folder, servers_only=True)) == 4
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)
    none_left(folder, process)

    folder = tmp_path / 'killed'
    process = drive(placement, folder, 4, 'hold')
    driver = wait_for(
        lambda: (folder / 'replicas.json').is_file() and json.loads(
            (folder / 'replicas.json').read_text()), 120, 'replicas ready', process
    )['driver']  # fmt: skip
    assert len(replica_processes(folder, servers_only=True)) == 4
    rig('run', HEAD, '--', 'kill', '-KILL', str(driver), env=ENV)
    none_left(folder, process)
    process.kill()
    process.wait()


def received(folder: Path) -> dict[str, list[dict]]:
    """Each replica's log lines, by replica name."""
    logs = {}
    for path in folder.glob('requests-*.jsonl'):
        lines = path.read_text().splitlines()
        logs[path.stem.removeprefix('requests-')] = [json.loads(line) for line in lines]
    return logs


def test_a_node_killed_mid_dispatch_its_requests_go_to_the_others(cluster, tmp_path):
    """Ray and Slurm replicas dispatching at once, three each, one per node; the node of Ray's
    r0 is killed (every process of it) mid-dispatch, taking a replica of each. Both dispatches
    answer every request once, the lost replicas' unanswered ones on the other nodes; the Slurm
    job outlives its node (--no-kill); no replica process is left."""
    folders = {name: tmp_path / name for name in ('ray', 'slurm')}
    processes = {name: drive(name, folder, 3, 'dispatch') for name, folder in folders.items()}
    seen = {name: placed(folders[name], processes[name]) for name in folders}
    for replicas in seen.values():
        check_placed(replicas, 3)
    victim = seen['ray'][0]['node']
    for name in folders:
        wait_for(
            lambda n=name: (folders[n] / 'progress').is_file(), 120, 'progress', processes[name]
        )
    rig('kill', victim, env=ENV)
    for name, process in processes.items():
        out, _ = process.communicate(timeout=180)
        assert process.returncode == 0, out[-3000:]
        report = json.loads((folders[name] / 'report.json').read_text())
        assert report['answered'] == report['planned'] == 60, report
        lost = next(r['name'] for r in seen[name] if r['node'] == victim)
        logs = received(folders[name])
        answered = Counter(
            e['key'] for log in logs.values() for e in log if e['event'] == 'answered'
        )
        assert len(answered) == 60 and max(answered.values()) == 1, name
        cut = {e['key'] for e in logs[lost] if e['event'] == 'received'} - {
            e['key'] for e in logs[lost] if e['event'] == 'answered'
        }
        assert cut, f'{name}: the killed replica held no request when its node died'
        others = {e['key'] for n, log in logs.items() if n != lost for e in log
                  if e['event'] == 'answered'}  # fmt: skip
        assert cut <= others
        asked = Counter(e['key'] for log in logs.values() for e in log if e['event'] == 'received')
        assert {key for key, n in asked.items() if n > 1} <= cut  # only what was in flight
        assert report['requeued'] >= len(cut)
        none_left(folders[name], process)
        # The placement let Ray go with its last replica (a RayRunner after it connects afresh).
        assert json.loads((folders[name] / 'stopped').read_text()) == {'ray_connected': False}
