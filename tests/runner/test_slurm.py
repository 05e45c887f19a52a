"""Dispatch through a real one-node Slurm cluster (tools/slurm_cluster.sh: slurmctld, slurmd and
munge on this machine, partitions cpu and gpu, four GPUs as GRES), with the runner settings of
configs/eval_lveval_slurm.py and CPU baselines standing in for GPU models."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from runs import KEEP, REPO, derived_config, load_config, results, run_opencompass

from opencompass_lveval.lveval.synthetic import write_synthetic

pytestmark = [pytest.mark.slow, pytest.mark.slurm]
SCRIPT = REPO / 'tools' / 'slurm_cluster.sh'
BASELINE = 'opencompass_lveval.models.baselines.'
OPT_IN = 'LVEVAL_TEST_SLURM'


@pytest.fixture(scope='module')
def cluster():
    """The cluster's folder (its step log); opt-in, skipped with the reason otherwise."""
    if not (os.environ.get('CI') or os.environ.get(OPT_IN)):
        pytest.skip(
            f'the real Slurm cluster is opt-in ({OPT_IN}=1; CI sets CI=true): starting it installs '
            'slurm and munge with apt, writes /etc/munge/munge.key and starts daemons'
        )
    if os.geteuid() != 0:
        pytest.skip('starting a Slurm cluster needs root (tools/slurm_cluster.sh up)')
    done = subprocess.run(['bash', str(SCRIPT), 'up'], capture_output=True, text=True, timeout=900)
    if done.returncode:
        pytest.skip(f'no Slurm cluster here: {(done.stderr or done.stdout).strip()[-300:]}')
    yield Path(os.environ.get('SLURM_CLUSTER_DIR', '/tmp/lveval-slurm'))
    subprocess.run(['bash', str(SCRIPT), 'down'], capture_output=True, timeout=120)


def model(kind: str, abbr: str, gpus: int) -> dict:
    return dict(
        type=BASELINE + kind, abbr=abbr, batch_size=8, max_out_len=64, run_cfg=dict(num_gpus=gpus)
    )


def jobs() -> dict[str, dict]:
    """Finished and running jobs as scontrol shows them: id -> fields."""
    text = subprocess.run(
        ['scontrol', 'show', 'job', '--oneliner'], capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for line in text.splitlines():
        fields = dict(part.split('=', 1) for part in line.split() if '=' in part)
        if 'JobId' in fields:
            found[fields['JobId']] = fields
    return found


def test_jobs_run_on_their_partitions_with_their_gpus(tmp_path, cluster):
    data = tmp_path / 'data' / 'demo'
    write_synthetic(data, count=3, levels=['16k'])
    datasets = [
        d for d in load_config('datasets/lveval/lveval_gen.py').lveval_datasets if d['abbr'] in KEEP
    ]
    for dataset in datasets:
        dataset['path'] = str(data)
    models = [
        model('ExtractiveBaseline', 'extractive-1gpu', 1),
        model('RandomGuessBaseline', 'random-4gpu', 4),
        model('ExtractiveBaseline', 'needs-8-gpus', 8),
    ]
    slurm = load_config('eval_lveval_slurm.py')
    slurm.infer.partitioner.num_worker = 1  # one task per model: fewer jobs, same runner
    config = derived_config(
        tmp_path,
        'eval_lveval_slurm.py',
        name='slurm.py',
        datasets=datasets,
        models=models,
        infer=slurm.infer,
    )
    steps_log = cluster / 'steps.log'
    seen = len(steps_log.read_text().splitlines()) if steps_log.exists() else 0
    run_opencompass(config, tmp_path, {}, work='slurm')

    steps = [
        dict(part.split('=', 1) for part in line.split(' ', 4))
        for line in steps_log.read_text().splitlines()[seen:]
    ]
    by_name = {}  # 'OpenICLInfer[model' -> its steps (job names are task names)
    for step in steps:
        by_name.setdefault(step['name'].split('/')[0], []).append(step)
    infer_1 = by_name['OpenICLInfer[extractive-1gpu']
    infer_4 = by_name['OpenICLInfer[random-4gpu']
    assert [(s['partition'], s['cuda']) for s in infer_1] == [('gpu', '0')]
    assert [(s['partition'], s['cuda']) for s in infer_4] == [('gpu', '0,1,2,3')]
    evaluations = [
        s for name, found in by_name.items() if name.startswith('OpenICLEval') for s in found
    ]
    assert evaluations and all((s['partition'], s['cuda']) == ('cpu', 'unset') for s in evaluations)
    assert not any('needs-8-gpus' in name for name in by_name if name.startswith('OpenICLInfer'))
    shown = jobs()
    assert shown[infer_1[0]['job']]['Partition'] == 'gpu'
    assert shown[infer_1[0]['job']]['TresPerNode'] == 'gres:gpu:1'
    assert shown[infer_4[0]['job']]['TresPerNode'] == 'gres:gpu:4'
    assert 'TresPerNode' not in shown[evaluations[0]['job']]

    # The same models on this machine, without Slurm: the same scores.
    local_models = [dict(m, run_cfg=dict(num_gpus=0)) for m in models[:2]]
    local = derived_config(
        tmp_path,
        'eval_demo.py',
        name='local.py',
        datasets=datasets,
        models=local_models,
        summarizer=dict(),
    )
    run_opencompass(local, tmp_path, {}, work='local')
    for abbr in ('extractive-1gpu', 'random-4gpu'):
        on_slurm, here = results(tmp_path, abbr, 'slurm'), results(tmp_path, abbr, 'local')
        assert sorted(on_slurm) == sorted(KEEP)
        assert {d: r['score'] for d, r in on_slurm.items()} == {
            d: r['score'] for d, r in here.items()
        }

    # The task the partition cannot run was refused before submission, and is reported.
    from opencompass_lveval.cli import main

    board = tmp_path / 'board'
    assert main(['leaderboard', str(tmp_path / 'slurm'), '--out', str(board), '--strict']) == 1
    text = (board / 'leaderboard.md').read_text()
    assert 'GPURequestError' in text and 'asks for 8 GPUs' in text and 'offer at most 4' in text
