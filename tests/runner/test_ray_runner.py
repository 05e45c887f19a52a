"""RayRunner's own logic: its settings, the checks a node makes before a task, and, on a real
one-machine Ray cluster, what it does with a task that succeeds, fails by itself or passes its
deadline (the multi-node behaviour is in test_cluster.py)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import ray_heads
from ray_heads import RayHeadError, local_ray_head

from opencompass_lveval.files.errors import ClusterSetupError, ModelConfigError


def test_misspelled_and_impossible_settings_are_refused():
    from opencompass_lveval.runner.ray_runner import RayRunner

    task = dict(type='OpenICLInferTask')
    with pytest.raises(
        ModelConfigError, match="unknown setting 'deadline'; did you mean 'deadline_s'"
    ):
        RayRunner(task, deadline=60)
    with pytest.raises(ModelConfigError, match='max_num_workers must be a whole number from 1'):
        RayRunner(task, max_num_workers=0)
    for bad in (None, 0, -5, '60', True):
        with pytest.raises(ModelConfigError, match='deadline_s must be a number above 0'):
            RayRunner(task, deadline_s=bad)
    with pytest.raises(ModelConfigError, match='retry must be a whole number from 0'):
        RayRunner(task, retry=1.5)


def test_no_cluster_address_says_how_to_give_one(monkeypatch):
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.delenv('RAY_ADDRESS', raising=False)
    runner = RayRunner(dict(type='OpenICLInferTask'))
    with pytest.raises(ClusterSetupError, match='export RAY_ADDRESS=HEAD:6379'):
        runner.launch([dict(work_dir='x', models=[], datasets=[])])


def node_spec(tmp_path: Path, **changes) -> dict:
    from opencompass_lveval.runner.ray_runner import _installed_versions

    config = tmp_path / 'tmp' / 'task_params.py'
    config.parent.mkdir(exist_ok=True)
    config.write_text('')
    spec = dict(
        cwd=str(tmp_path), config=str(config), python=sys.executable, versions=_installed_versions()
    )
    return {**spec, **changes}


def test_a_node_without_the_run_folder_python_or_versions_says_which(tmp_path):
    from opencompass_lveval.runner.on_node import environment_problem

    assert environment_problem(node_spec(tmp_path)) is None
    missing = environment_problem(node_spec(tmp_path, cwd='/nowhere/run'))
    assert '/nowhere/run' in missing and 'same path on every node' in missing
    assert environment_problem(node_spec(tmp_path, python='/nowhere/bin/python')).startswith(
        f'{os.uname().nodename}: /nowhere/bin/python is not on this node'
    )
    other = environment_problem(node_spec(tmp_path, versions=['0.5.4', '0.0.1']))
    assert 'the driver 0.5.4 0.0.1' in other and 'install the same versions' in other


@pytest.fixture(scope='module')
def local_ray(tmp_path_factory):
    """A real Ray cluster of this one machine (two CPUs, two fake GPUs): a head of its own
    (tests/ray_heads.py: its own folder and ports, an error with its last log lines if it dies),
    started where another user's session has left a `ray_current_cluster` this user cannot write
    in the default folder (here `RAY_TMPDIR`'s, a directory of that name: unwritable even as
    root), which killed the head that used the default."""
    pytest.importorskip('ray', reason='pip install "opencompass_lveval[ray]"')
    default = tmp_path_factory.mktemp('default_tmp')
    (default / 'ray' / 'ray_current_cluster').mkdir(parents=True)
    with local_ray_head(
        num_cpus=2, num_gpus=2, env={**os.environ, 'RAY_TMPDIR': str(default)}
    ) as address:
        yield address


def fake_ray(folder: Path, body: str) -> str:
    ray = folder / 'ray'
    ray.write_text(f'#!/bin/sh\n{body}\n')
    ray.chmod(0o755)
    return str(ray)


def test_a_head_that_dies_is_an_error_with_its_last_lines_not_a_hang(tmp_path, monkeypatch):
    """What the head printed before it died (here, as Ray says it when the address file is not
    writable), within seconds; one that never gets ready, at the time limit; both folders
    removed."""
    made = []
    mkdtemp = ray_heads.tempfile.mkdtemp
    monkeypatch.setattr(
        ray_heads.tempfile, 'mkdtemp', lambda **kw: made.append(mkdtemp(**kw)) or made[-1]
    )
    said = "Ray runtime started.\nPermissionError: [Errno 13] Permission denied: '/tmp/ray/ray_current_cluster'"
    dies = fake_ray(tmp_path, f"cat <<'SAID'\n{said}\nSAID\nexit 1")
    started = time.monotonic()
    with pytest.raises(RayHeadError) as error, local_ray_head(ray=dies):
        pass
    assert time.monotonic() - started < 5
    assert str(error.value).splitlines() == [
        'the Ray head exited (1) before it was ready:',
        '--- head.out:',
        *said.splitlines(),
    ]
    never = fake_ray(tmp_path, 'exec sleep 30')
    late = pytest.raises(RayHeadError, match=r'not ready in 0.3 s:\n\(no log lines\)')
    with late, local_ray_head(ray=never, start_timeout_s=0.3):
        pass
    assert len(made) == 2 and not any(Path(folder).exists() for folder in made)


@pytest.mark.slow
def test_success_failure_and_deadline_on_a_real_ray(tmp_path, monkeypatch, local_ray):
    """Three tasks: one that succeeds runs once; one that exits 3 by itself is not retried; one
    that sleeps past its deadline is stopped on its node, tried ``retry`` more times, and then
    fails with every attempt's cause in its log file."""
    from mmengine.config import Config
    from opencompass.registry import TASKS
    from opencompass.tasks.base import BaseTask

    from opencompass_lveval.runner.ray_runner import RayRunner

    @TASKS.register_module(force=True)
    class ShellTask(BaseTask):  # an OpenCompass task whose command is its model's `shell`
        name_prefix, log_subdir, output_subdir = 'Shell', 'logs/shell', 'shell'

        def __init__(self, cfg):
            super().__init__(cfg)
            self.num_gpus = self.model_cfgs[0].get('run_cfg', {}).get('num_gpus', 0)

        def get_command(self, cfg_path, template):
            return template.format(task_cmd=self.model_cfgs[0]['shell'])

        def run(self):  # pragma: no cover - only its command runs
            raise NotImplementedError

    monkeypatch.chdir(tmp_path)
    work = tmp_path / 'run'

    def task(abbr: str, shell: str) -> dict:
        model = dict(abbr=abbr, shell=shell, run_cfg=dict(num_gpus=1))
        return Config(dict(models=[model], datasets=[[dict(abbr='d')]], work_dir=str(work)))

    runner = RayRunner(dict(type='ShellTask'), address=local_ray, retry=1, deadline_s=3)
    status = dict(
        runner.launch(
            [
                task('fine', 'echo "sees $CUDA_VISIBLE_DEVICES"'),
                task('broken', 'exit 3'),
                task('slow', 'sleep 60'),
            ]
        )
    )
    assert status == {'Shell[fine/d]': 0, 'Shell[broken/d]': 3, 'Shell[slow/d]': 1}
    journal = [json.loads(line) for line in (work / 'logs' / 'ray_runner.jsonl').open()]
    by_task = {}
    for record in journal:
        by_task.setdefault(record['task'], []).append(record['outcome'])
    assert by_task == {
        'Shell[fine/d]': ['exit'],
        'Shell[broken/d]': ['exit'],
        'Shell[slow/d]': ['deadline', 'deadline'],
    }
    slow = [r for r in journal if r['task'] == 'Shell[slow/d]']
    assert all(3 <= r['seconds'] < 10 and not r.get('lost') for r in slow)
    fine = (work / 'logs' / 'shell' / 'fine' / 'd.out').read_text()
    gpu = next(r['gpus'] for r in journal if r['task'] == 'Shell[fine/d]')
    assert gpu in ('0', '1') and f'sees {gpu}\n' in fine
    log = (work / 'logs' / 'shell' / 'slow' / 'd.out').read_text()
    assert log.count('--- attempt') == 2
    assert 'RayTaskLost: Shell[slow/d] failed on the Ray cluster after 2 attempts' in log
    assert "raise the runner's deadline_s" in log
    assert not list(Path('tmp').glob('*_params.py'))  # the task configs are removed
