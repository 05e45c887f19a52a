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
