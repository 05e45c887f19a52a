"""The parts of the Ray and Slurm placements that need no cluster: the refusals before one is
reached, how replicas are shared out over a Slurm job's nodes and GPUs, and the node-side launch
(a real process: its ready line, then the server it became). On a cluster:
test_placement_cluster.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from opencompass_lveval.files.errors import ClusterSetupError
from opencompass_lveval.serving.placement import ReplicaSpec
from opencompass_lveval.serving.placement.node_launch import READY_MARK, narrow_gpus
from opencompass_lveval.serving.placement.slurm import SlurmPlacement, assign, job_gpus

# `scontrol show job -d` of a three-node job with two GPUs a node, as Slurm 22.05 prints it.
JOB_DETAIL = """JobId=4 JobName=interactive
   NumNodes=3 NumCPUs=3 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   JOB_GRES=gpu:6
     Nodes=lvnode[1-2] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)
     Nodes=lvnode3 CPU_IDs=0-7 Mem=0 GRES=gpu:a100:4(IDX:0-3)
   TresPerNode=gres:gpu:2
"""


def expand(nodelist: str) -> list[str]:
    return {'lvnode[1-2]': ['lvnode1', 'lvnode2'], 'lvnode3': ['lvnode3']}[nodelist]


def specs(*gpus: int) -> list[ReplicaSpec]:
    return [ReplicaSpec(f'r{i}', ['serve'], {}, g) for i, g in enumerate(gpus)]


def test_slurm_placement_outside_an_allocation_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.delenv('SLURM_JOB_ID', raising=False)
    monkeypatch.delenv('SLURM_JOB_NODELIST', raising=False)
    with pytest.raises(ClusterSetupError) as caught:
        SlurmPlacement(log_dir=str(tmp_path)).prepare(specs(1))
    assert 'SLURM_JOB_ID' in str(caught.value) and 'sbatch --no-kill' in str(caught.value)


def test_ray_placement_without_a_cluster_says_where_to_point_it(monkeypatch, tmp_path):
    pytest.importorskip('ray', reason='pip install "opencompass_lveval[ray]"')
    import ray

    from opencompass_lveval.serving.placement.ray import RayPlacement

    monkeypatch.delenv('RAY_ADDRESS', raising=False)
    assert not ray.is_initialized()
    with pytest.raises(ClusterSetupError, match='export RAY_ADDRESS=HEAD:6379'):
        RayPlacement(log_dir=str(tmp_path)).prepare(specs(1))


def test_the_gpus_the_job_holds_on_each_node():
    held = job_gpus(JOB_DETAIL, expand)
    assert held == {'lvnode1': 2, 'lvnode2': 2, 'lvnode3': 4}


def test_replicas_spread_over_the_nodes_and_never_share_a_gpu():
    nodes, held = ['lvnode1', 'lvnode2', 'lvnode3'], {'lvnode1': 2, 'lvnode2': 2, 'lvnode3': 4}
    assert sorted(node for node, _ in assign(specs(1, 1, 1), nodes, held)) == nodes
    places = assign(specs(1, 1, 1, 1, 2, 2), nodes, held)
    taken = [(node, gpu) for node, gpus in places for gpu in gpus]
    assert len(taken) == len(set(taken)) == 8  # every GPU of the job, each once
    assert all(len(gpus) == s.gpus for (_, gpus), s in zip(places, specs(1, 1, 1, 1, 2, 2)))


def test_a_replica_no_node_has_room_for_is_refused_naming_the_nodes():
    with pytest.raises(ClusterSetupError) as caught:
        assign(specs(1, 2, 2), ['lvnode1', 'lvnode2'], {'lvnode1': 2, 'lvnode2': 2})
    assert 'replica r0 needs 1 GPUs' in str(caught.value)
    assert 'lvnode1: 2 GPUs, lvnode2: 2 GPUs' in str(caught.value)


def test_a_replica_keeps_its_share_of_the_gpus_the_step_sees():
    assert narrow_gpus('3,5,7', [1, 2]) == '5,7'
    assert narrow_gpus('3,5,7', []) == ''
    with pytest.raises(SystemExit, match='--gres=gpu:N'):
        narrow_gpus('0', [1])


def test_node_launch_reports_its_url_then_becomes_the_server():
    """In a real process: the ready line names the address toward the launcher and a port free
    on it; the server it then becomes has them in its argv, its GPUs narrowed, and the pid."""
    server = [sys.executable, '-c', 'import os, sys; print(os.getpid(), sys.argv[1:], '
              'os.environ["CUDA_VISIBLE_DEVICES"])', '--host', '{host}', '--port', '{port}']  # fmt: skip
    env = {**os.environ, 'CUDA_VISIBLE_DEVICES': '4,6', 'SLURM_LAUNCH_NODE_IPADDR': '127.0.0.1'}
    done = subprocess.run(
        [sys.executable, '-m', 'opencompass_lveval.serving.placement.node_launch', '--gpus', '1', '--',
         *server],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ready, output = done.stdout.splitlines()
    assert ready.startswith(READY_MARK)
    where = json.loads(ready[len(READY_MARK) :])
    port = where['url'].rsplit(':', 1)[1]
    assert where['url'] == f'http://127.0.0.1:{port}' and where['gpus'] == '6'
    assert output == f"{where['pid']} ['--host', '127.0.0.1', '--port', '{port}'] 6"


def fake_srun(folder, script: str) -> str:
    """A PATH whose ``srun`` runs ``script`` (Python) whatever it is asked: what a step prints,
    as the driver reads it."""
    import stat

    srun = folder / 'srun'
    srun.write_text(f'#!{sys.executable}\n{script}')
    srun.chmod(srun.stat().st_mode | stat.S_IEXEC)
    return f'{folder}{os.pathsep}{os.environ["PATH"]}'


def launched(placement: SlurmPlacement, name: str = 'r0'):
    placement.job, placement.places = '7', {name: ('lvnode1', [])}
    return placement.launch(ReplicaSpec(name, ['serve'], {}, 0))


NOT_UTF8 = (
    'import json, sys\n'
    'print("LVEVAL-REPLICA " + json.dumps({"url": "http://127.0.0.1:9", "step": "3"}), flush=True)\n'
    'sys.stdout.buffer.write(b"loading \\xff\\xfe weights\\n" * 20000)\n'
    'sys.stdout.buffer.write(b"done\\n")\n'
)


def test_a_step_that_prints_bytes_not_utf8_is_read_to_its_end(tmp_path, monkeypatch):
    """The step's output is read whatever its bytes (the reader died on one that is not UTF-8,
    and the server then blocked on its full pipe)."""
    monkeypatch.setenv('PATH', fake_srun(tmp_path, NOT_UTF8))
    replica = launched(SlurmPlacement(log_dir=str(tmp_path / 'logs')))
    assert replica.srun.wait(timeout=30) == 0  # never blocked on a full pipe
    replica.reader.join(timeout=10)
    log = (tmp_path / 'logs' / 'r0.log').read_text()
    assert log.count('loading \ufffd\ufffd weights') == 20000 and log.endswith('done\n')
    assert replica.url == 'http://127.0.0.1:9/v1'


class FullDisk:
    """A log file on a full disk."""

    def write(self, text: str) -> None:
        raise OSError(28, 'No space left on device')

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_log_that_cannot_be_written_leaves_the_step_read(tmp_path):
    import subprocess

    from opencompass_lveval.serving.placement.slurm import SlurmReplica

    step = subprocess.Popen([sys.executable, '-c', NOT_UTF8], stdout=subprocess.PIPE)
    replica = SlurmReplica('r0', '7', 'lvnode1', step, FullDisk())
    assert step.wait(timeout=30) == 0
    replica.reader.join(timeout=10)
    assert replica.log_tail().startswith('its log could not be written')
    assert replica.log_tail().endswith('done\n')


def test_a_step_that_ends_before_its_url_is_named_and_stopped(tmp_path, monkeypatch):
    script = 'print("srun: error: Unable to create step for job 7: Node failure")\nexit(1)\n'
    monkeypatch.setenv('PATH', fake_srun(tmp_path, script))
    with pytest.raises(ClusterSetupError, match=r'replica r0 on lvnode1 ended \(1\): srun: error'):
        launched(SlurmPlacement(log_dir=str(tmp_path / 'logs')))


def test_replicas_past_what_the_placement_holds_are_refused_before_any_starts(tmp_path):
    from opencompass_lveval.serving.placement import ReplicaError
    from opencompass_lveval.serving.placement.local import LocalPlacement
    from opencompass_lveval.serving.placement.ray import refuse_what_the_cluster_cannot_hold
    from opencompass_lveval.serving.placement.slurm import job_cpus

    cores = os.cpu_count()
    with pytest.raises(ReplicaError, match=f'this machine has {cores}: lower replicas to at most'):
        LocalPlacement(log_dir=tmp_path).prepare(specs(*[0] * 300))
    nodes = [
        {'Alive': True, 'Resources': {'CPU': 8.0, 'GPU': 2.0}},
        {'Alive': True, 'Resources': {'CPU': 8.0, 'GPU': 3.0}},
        {'Alive': False, 'Resources': {'CPU': 64.0, 'GPU': 8.0}},  # a lost node holds nothing
    ]
    refuse_what_the_cluster_cannot_hold(nodes, specs(2, 2), 1)
    with pytest.raises(
        ClusterSetupError, match='hold 2 such replicas: lower replicas to at most 2'
    ):
        refuse_what_the_cluster_cannot_hold(nodes, specs(2, 2, 2), 1)
    with pytest.raises(ClusterSetupError, match='offer 16 CPUs: lower replicas to at most 16'):
        refuse_what_the_cluster_cannot_hold(nodes, specs(*[0] * 300), 1)
    assert job_cpus(JOB_DETAIL) == 3


def test_a_journal_cut_midway_is_read_line_by_line(tmp_path, caplog):
    from opencompass_lveval.serving.journal import ReplicaJournal

    (tmp_path / 'replicas.jsonl').write_text(
        '{"replica": "r0", "event": "started"}\n[1, 2]\n{"replica": "r0", "event": "sto'
    )
    journal = ReplicaJournal(tmp_path)
    assert journal.records == [{'replica': 'r0', 'event': 'started'}]
    assert 'replicas.jsonl, line 2: a JSON list, not an object; skipped' in caplog.text
    assert 'replicas.jsonl, line 3: not a JSON line' in caplog.text
    journal.note('r1', 'started')  # and it goes on
    assert [r['replica'] for r in journal.records] == ['r0', 'r1']
