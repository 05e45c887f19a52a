"""The demo across several machines, for real: tools/rig.py's head node and three compute nodes
(network namespaces, each with its own address, host name and process table) running a Slurm
cluster and a Ray cluster, OpenCompass driven from the head as a user would run it there.

What a run leaves behind is compared byte for byte with a LocalRunner run of the same config:
predictions, results and the per-length report. Faults are real: a node's every process killed,
a node's cable pulled (its link to the bridge taken down)."""

from __future__ import annotations

import json
import os
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
from runs import OPENCOMPASS, REPO, derived_config

pytestmark = [pytest.mark.slow, pytest.mark.cluster]
RIG_DIR = Path(os.environ.get('LVEVAL_RIG_DIR') or '/tmp/lveval-rig')
FAULT_DATASETS = ('LVEval_loogle_SD_mixup_16k', 'LVEval_factrecall_zh_16k', 'AdaLEval_tsort_2k')


@pytest.fixture(scope='module')
def cluster():
    """A head and three compute nodes with Ray (and Slurm, see ``slurm_wanted``); ``fresh()``
    brings them back after a test harmed one. Skipped, saying why, where the rig cannot start;
    in CI that fails instead. Torn down at the end, whatever happened."""
    skip_unless_possible(unavailable())

    class Cluster:
        harmed = True
        slurm = slurm_wanted()

        def fresh(self) -> None:
            if self.harmed:
                services = ['--ray', '--slurm'] if self.slurm else ['--ray']
                rig('up', '--nodes', '3', '--gpus', '2', *services, timeout=900)
                self.harmed = False

        def need_slurm(self) -> None:
            if not self.slurm:
                pytest.skip(SLURM_NOT_WANTED)

    found = Cluster()
    try:
        yield found
    finally:
        rig('down', check=False)


@pytest.fixture(scope='module')
def demo(tmp_path_factory) -> Path:
    """A folder holding the demo's data where its configs look: data/demo."""
    from opencompass_lveval.cli import main

    folder = tmp_path_factory.mktemp('cluster_demo')
    assert main(['data', 'synth', str(folder / 'data' / 'demo')]) == 0
    return folder


def opencompass(config: Path, folder: Path, work: str, node: str | None = HEAD, *extra: str):
    """``opencompass CONFIG -w work`` in ``folder``, on ``node`` (None: on this machine)."""
    command = OPENCOMPASS + [str(config), '-w', work, *extra]
    if node:
        command = [sys.executable, str(RIG), 'run', node, '--', *command]
    return subprocess.Popen(
        command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def finished(process: subprocess.Popen, timeout: float = 600) -> str:
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, out[-4000:]
    return out


def run_folder(folder: Path, work: str) -> Path:
    return next((folder / work).iterdir())


def outputs(run: Path) -> dict[str, bytes]:
    """Predictions, results and the per-length report of a run folder, by path (OpenCompass's
    own summary files carry the run's time stamp in their names and are left out)."""
    found = {}
    for part in ('predictions', 'results', 'summary'):
        for path in sorted((run / part).rglob('*')):
            if path.is_file() and not path.name.startswith('summary_'):
                found[str(path.relative_to(run))] = path.read_bytes()
    return found


def attempts(run: Path) -> list[dict]:
    lines = (run / 'logs' / 'ray_runner.jsonl').read_text().splitlines()
    return [json.loads(line) for line in lines]


def slurm_steps() -> list[dict]:
    """The Slurm job steps the rig's task prolog logged: job, step, node, cuda, name."""
    text = (RIG_DIR / 'slurm' / 'steps.log').read_text()
    return [dict(part.split('=', 1) for part in line.split(' ', 4)) for line in text.splitlines()]


def ray_attempt_on(run_root: Path, nodes: tuple[str, ...]) -> dict | None:
    """A started Ray attempt on one of ``nodes`` (its start record), if any."""
    for path in run_root.glob('*/logs/ray/*.json'):
        try:
            record = json.loads(path.read_text())
        except ValueError:
            continue
        if record['host'] in nodes:
            return record
    return None


def fault_config(folder: Path, base: str, name: str, **runner) -> Path:
    """``base`` with the three datasets of the fault tests and ``runner`` settings."""
    from runs import load_config

    cfg = load_config(base)
    for stage in (cfg.infer, cfg.eval):
        stage.runner.update(runner)
    return derived_config(
        folder, base, keep=FAULT_DATASETS, name=name, infer=cfg.infer, eval=cfg.eval
    )


@pytest.fixture(scope='module')
def local(demo):
    """What LocalRunner makes of the demo ('local') and of the fault tests' datasets
    ('local_fault'): both runs start at once, in the background; ``local(work)`` awaits one."""
    fault = fault_config(demo, 'eval_demo.py', 'local_fault.py')
    processes = {
        'local': opencompass(REPO / 'configs' / 'eval_demo.py', demo, 'local', None),
        'local_fault': opencompass(fault, demo, 'local_fault', None),
    }
    done: dict[str, dict] = {}

    def outputs_of(work: str) -> dict[str, bytes]:
        if work not in done:
            finished(processes[work])
            done[work] = outputs(run_folder(demo, work))
        return done[work]

    yield outputs_of
    for process in processes.values():
        process.kill()
        process.communicate()


def test_demo_is_identical_on_local_slurm_and_ray(cluster, demo, local):
    """The shipped demo configs, run at the same time on this machine, on Slurm and on Ray: the
    same files, and the cluster runs spread their tasks over nodes."""
    cluster.fresh()
    runs = {'ray': opencompass(REPO / 'configs' / 'eval_demo_ray.py', demo, 'ray')}
    if cluster.slurm:  # else only Ray: test_slurm_node_killed_mid_run says why Slurm is missing
        runs['slurm'] = opencompass(REPO / 'configs' / 'eval_demo_slurm.py', demo, 'slurm')
    for process in runs.values():
        finished(process)
    expected = local('local')
    assert any(name.startswith('summary/long_context_report') for name in expected)
    assert len([n for n in expected if n.startswith('predictions/')]) == 2 * 59
    for work in runs:
        found = outputs(run_folder(demo, work))
        assert sorted(found) == sorted(expected)
        assert [n for n in expected if found[n] != expected[n]] == []

    tries = attempts(run_folder(demo, 'ray'))
    assert all(a['outcome'] == 'exit' and a['code'] == 0 for a in tries)
    assert len(tries) == 4  # two inference and two evaluation tasks, each run once
    ray_nodes = {a['host'] for a in tries}
    assert len(ray_nodes) >= 2 and HEAD not in ray_nodes, ray_nodes
    if cluster.slurm:
        slurm_nodes = {s['node'] for s in slurm_steps() if s['name'].startswith('OpenICL')}
        assert len(slurm_nodes) >= 2 and HEAD not in slurm_nodes, slurm_nodes


def task_model(attempt: dict) -> str:
    """The model of a task named ``OpenICLInfer[model/dataset,...]``."""
    return attempt['task'].split('[', 1)[1].split('/', 1)[0]


def test_ray_hands_each_task_its_own_gpu(cluster, demo):
    """Four one-GPU tasks on three nodes of two GPUs: each task's own process sees exactly one
    CUDA_VISIBLE_DEVICES entry, never the one of a task running beside it on its node; a task
    asking for more GPUs than a node has is refused before it reaches the cluster."""
    from runs import load_config

    cluster.fresh()
    baseline = 'opencompass_lveval.models.baselines.RandomGuessBaseline'
    models = [
        dict(type=baseline, abbr=f'gpu-task-{i}', seed=i, batch_size=8, max_out_len=32,
             run_cfg=dict(num_gpus=1))
        for i in range(4)
    ] + [dict(type=baseline, abbr='needs-8-gpus', batch_size=8, max_out_len=32,
              run_cfg=dict(num_gpus=8))]  # fmt: skip
    infer = load_config('eval_demo_ray.py').infer
    config = derived_config(
        demo,
        'eval_demo_ray.py',
        keep=FAULT_DATASETS[:1],
        name='gpus.py',
        models=models,
        infer=infer,
    )
    finished(opencompass(config, demo, 'gpus', HEAD, '-m', 'infer'))

    run = run_folder(demo, 'gpus')
    tries = attempts(run)
    assert sorted(task_model(a) for a in tries) == [f'gpu-task-{i}' for i in range(4)]
    for attempt in tries:
        logs = (run / 'logs' / 'infer' / task_model(attempt)).glob('*.out')
        seen = [
            line for path in logs for line in path.read_text().splitlines() if 'GPUs seen' in line
        ]
        assert len(seen) == 1 and seen[0].endswith(f'CUDA_VISIBLE_DEVICES={attempt["gpus"]}')
        assert attempt['gpus'] in ('0', '1')
    pairs = [
        (a, b) for a in tries for b in tries
        if a is not b and a['host'] == b['host']
        and b['started'] < a['started'] + a['seconds']
        and a['started'] < b['started'] + b['seconds']
    ]  # fmt: skip
    assert pairs, 'no two tasks ran beside each other on a node: nothing was checked'
    assert all(a['gpus'] != b['gpus'] for a, b in pairs)
    refused = next((run / 'logs' / 'infer' / 'needs-8-gpus').glob('*.out')).read_text()
    assert refused.startswith('GPURequestError:') and 'offer at most 2' in refused


def task_processes(folder: Path) -> list[str]:
    """Command lines of the processes (on any node: this machine sees every process table) that
    run a task of a config in ``folder``/tmp: named there, or relative to ``folder`` where the
    process runs (RayRunner's commands name ``tmp/..._params.py`` and run in the run folder)."""
    found = []
    for proc in Path('/proc').glob('[0-9]*'):
        try:
            line = (proc / 'cmdline').read_bytes().replace(b'\0', b' ').decode()
            where = os.readlink(proc / 'cwd')
        except OSError:
            continue
        if '_params.py' in line and (str(folder / 'tmp') in line or where == str(folder)):
            found.append(line)
    return found


def test_ctrl_c_leaves_nothing_running(cluster, demo):
    """Ctrl-C in the terminal of a Ray run (SIGINT to its process group): the driver stops and no
    task process is left on any node."""
    import signal

    cluster.fresh()
    config = fault_config(demo, 'eval_demo_ray.py', 'ctrl_c.py')
    command = [
        sys.executable,
        str(RIG),
        'run',
        HEAD,
        '--',
        *OPENCOMPASS,
        str(config),
        '-w',
        'ctrl_c',
    ]
    process = subprocess.Popen(
        command, cwd=demo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    wait_for(lambda: ray_attempt_on(demo / 'ctrl_c', COMPUTE), 180, 'a task started')
    # the attempt's record is written before its node check, the task's process after it
    wait_for(lambda: task_processes(demo), 60, 'the started task among the processes')
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)
    wait_for(lambda: not task_processes(demo), 30, 'every task process gone')


def test_slurm_node_killed_mid_run(cluster, demo, local):
    """The GPU cluster settings of configs/eval_lveval_slurm.py (inference on partition gpu with
    the model's GPUs, evaluation on cpu): a node's every process killed while it runs an
    inference job. That job is submitted again and lands on another node, no other job runs
    twice, the outputs are LocalRunner's; a model asking for 8 GPUs is refused before submission
    and named by `lveval leaderboard --strict`."""
    from runs import load_config

    from opencompass_lveval.cli import main

    cluster.need_slurm()
    cluster.fresh()
    slurm = load_config('eval_lveval_slurm.py')
    slurm.infer.partitioner.num_worker = 1  # one task per model
    baselines = 'opencompass_lveval.models.baselines.'
    models = [  # configs/models/cpu_baselines.py's, asking for GPUs
        dict(type=baselines + 'ExtractiveBaseline', abbr='extractive-bm25', batch_size=64,
             max_out_len=64, run_cfg=dict(num_gpus=1)),
        dict(type=baselines + 'RandomGuessBaseline', abbr='random-guess', seed=0, batch_size=64,
             max_out_len=64, run_cfg=dict(num_gpus=2)),
        dict(type=baselines + 'ExtractiveBaseline', abbr='needs-8-gpus', batch_size=64,
             max_out_len=64, run_cfg=dict(num_gpus=8)),
    ]  # fmt: skip
    config = derived_config(
        demo, 'eval_demo.py', keep=FAULT_DATASETS, name='slurm_kill.py', models=models,
        infer=slurm.infer, eval=slurm.eval,
    )  # fmt: skip
    seen = len(slurm_steps())  # steps of earlier runs on this cluster
    process = opencompass(config, demo, 'slurm_kill')

    def first_inference():
        return next((s for s in slurm_steps()[seen:] if s['name'].startswith('OpenICLInfer')), None)

    victim = wait_for(first_inference, 180, 'an inference job started')
    time.sleep(2)  # inside the task, which spends seconds on its imports
    rig('kill', victim['node'])
    cluster.harmed = True
    finished(process)

    run = run_folder(demo, 'slurm_kill')
    expected = local('local_fault')
    for name in (n for n in expected if not n.startswith('summary/')):
        assert (run / name).read_bytes() == expected[name], name
    every = [s for s in slurm_steps()[seen:] if s['name'].startswith('OpenICL')]
    steps = [s for s in every if 'needs-8-gpus' not in s['name']]
    counts = Counter(s['name'] for s in steps)
    assert {name for name, n in counts.items() if n > 1} == {victim['name']}
    again = [s for s in steps if s['name'] == victim['name']]
    assert again[0]['node'] == victim['node'] and again[-1]['node'] != victim['node']
    cuda = {
        (s['name'].split('[')[0], s['name'].split('[')[1].split('/')[0]): s['cuda'] for s in steps
    }
    assert cuda['OpenICLInfer', 'extractive-bm25'] == '0'
    assert cuda['OpenICLInfer', 'random-guess'] == '0,1'
    assert cuda['OpenICLEval', 'extractive-bm25'] == cuda['OpenICLEval', 'random-guess'] == 'unset'
    assert not any('needs-8-gpus' in s['name'] for s in every)  # nor its evaluation
    board = demo / 'board'
    assert main(['leaderboard', str(demo / 'slurm_kill'), '--out', str(board), '--strict']) == 1
    text = (board / 'leaderboard.md').read_text()
    assert 'GPURequestError' in text and 'asks for 8 GPUs' in text and 'offer at most 2' in text


def test_ray_nodes_killed_and_cut_off_mid_run(cluster, demo, local):
    """Two inference tasks on two nodes: one node's every process killed, the other's cable
    pulled. The killed node's task runs again at once; Ray never answers for the cut one, so its
    deadline fires and it runs again elsewhere; no other task runs twice, the evaluation stage
    keeps off the silent node, and the outputs are LocalRunner's."""
    cluster.fresh()
    config = fault_config(demo, 'eval_demo_ray.py', 'ray_faults.py', deadline_s=45)
    process = opencompass(config, demo, 'ray_faults')

    def two_started():
        records = [json.loads(p.read_text()) for p in demo.glob('ray_faults/*/logs/ray/*.json')]
        hosts = sorted({r['host'] for r in records})
        return hosts if len(hosts) == 2 else None

    killed, cut = wait_for(two_started, 180, 'two tasks started on two nodes')
    time.sleep(2)
    rig('kill', killed)
    rig('cut', cut)
    cluster.harmed = True
    out = finished(process)

    run = run_folder(demo, 'ray_faults')
    same_as_local(run, local)
    tries = attempts(run)
    on_killed = [a for a in tries if a['host'] == killed]
    on_cut = [a for a in tries if a['host'] == cut]
    assert [a['outcome'] for a in on_killed] == ['node lost']
    assert 'NodeDiedError' in on_killed[0]['error']
    assert [(a['outcome'], a['lost']) for a in on_cut] == [('deadline', True)]
    assert 'passed its deadline (no answer from its node)' in out
    counts = Counter(a['task'] for a in tries)
    assert {task for task, n in counts.items() if n > 1} == {
        on_killed[0]['task'],
        on_cut[0]['task'],
    }
    last = {a['task']: a for a in tries}
    assert all(a['outcome'] == 'exit' and a['code'] == 0 for a in last.values())
    assert all(a['host'] not in (killed, cut) for a in last.values())


def same_as_local(run: Path, local) -> None:
    found, expected = outputs(run), local('local_fault')
    assert sorted(found) == sorted(expected)
    assert [name for name in expected if found[name] != expected[name]] == []


def test_ray_nodes_without_the_work_folder_stop_the_run(cluster, demo):
    """The work folder (``-w``) hidden on every compute node (a tmpfs over it in each node's own
    mounts, as a folder that is not shared would be): the first attempt stops the run naming
    its node, exit 1, where every task once failed on its own and the run exited 0."""
    cluster.fresh()
    hidden = demo / 'hidden'
    hidden.mkdir()
    for node in COMPUTE:
        rig('run', node, '--', 'mount', '-t', 'tmpfs', 'tmpfs', str(hidden))
    try:
        process = opencompass(fault_config(demo, 'eval_demo_ray.py', 'hidden.py'), demo, 'hidden')
        out, _ = process.communicate(timeout=600)
    finally:
        for node in COMPUTE:
            rig('run', node, '--', 'umount', str(hidden))
    run = run_folder(demo, 'hidden')
    stop = f"the work folder {run} is not the driver's on this node"
    assert any(f'ClusterSetupError: {node}: {stop}' in out for node in COMPUTE), out[-3000:]
    assert process.returncode == 1 and 'The run stopped:' in out
    assert not (run / 'predictions').exists()
