"""The Slurm runner's reading of sinfo, without a cluster (tests/runner/test_cluster.py uses a real one)."""

import pytest

from opencompass_lveval.runner.slurm import gpus_per_node


@pytest.mark.parametrize(
    'lines, gpus',
    [
        ('node1 gpu:4\nnode2 gpu:8(S:0-1)\n', 8),
        ('node1 gpu:a100:4,gpu:v100:4\n', 8),  # two kinds on one node: 8 GPUs, not 4
        ('node1 gpu:a100:2(S:0),mps:400\nnode2 (null)\n', 2),
        ('node1 (null)\n', 0),
        ('', None),
    ],
)
def test_gpus_per_node_counts_every_gpu_of_a_node(lines, gpus):
    assert gpus_per_node(lines) == gpus
