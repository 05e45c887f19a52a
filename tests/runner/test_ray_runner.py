"""RayRunner's own logic: its settings, the Ray head it waits for, the checks a node makes before
a task and the keeper that ends what a task leaves behind; and, on a real one-machine Ray
cluster, what it does with a task that succeeds, fails by itself, passes its deadline, asks for
what no node has, needs a secret or runs from a folder whose name holds shell characters, and
with a node marked silent (the multi-node behaviour is in test_cluster.py)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import ray_heads
from ray_clusters import node_ids, refused_addresses, shell_log, shell_task
from ray_heads import RayHeadError, local_ray_head
from rigs import command_lines
from runs import logged

from opencompass_lveval.files.errors import ModelConfigError


def test_misspelled_and_impossible_settings_are_refused():
    from opencompass_lveval.runner.ray_runner import RayRunner

    task = dict(type='OpenICLInferTask')
    with pytest.raises(
        ModelConfigError, match="unknown setting 'deadline'; did you mean 'deadline_s'"
    ):
        RayRunner(task, deadline=60)
    with pytest.raises(ModelConfigError, match='max_num_workers must be a whole number from 1'):
        RayRunner(task, max_num_workers=0)
    for bad in (None, 0, -5, '60', True, math.inf, math.nan):
        with pytest.raises(ModelConfigError, match='deadline_s must be a finite number above 0'):
            RayRunner(task, deadline_s=bad)
    for name in ('num_cpus', 'memory', 'connect_timeout_s'):
        with pytest.raises(
            ModelConfigError, match=f'{name} must be a finite number above 0, found inf'
        ):
            RayRunner(task, **{name: math.inf})
    with pytest.raises(ModelConfigError, match='retry must be a whole number from 0'):
        RayRunner(task, retry=1.5)
    with pytest.raises(ModelConfigError, match=r"resources\['A100'\] must be a finite number"):
        RayRunner(task, resources={'A100': -1})
    with pytest.raises(ModelConfigError, match="resources names 'CPU', which has its own setting"):
        RayRunner(task, resources={'CPU': 4})
    with pytest.raises(ModelConfigError, match='task_env_from must be a list of variable names'):
        RayRunner(task, task_env_from='HF_TOKEN')
    with pytest.raises(
        ModelConfigError, match="task_env_from holds 'HF_TOKEN=hf_x', not a variable"
    ):
        RayRunner(task, task_env_from=['HF_TOKEN=hf_x'])


def test_no_cluster_address_stops_the_run_saying_how_to_give_one(monkeypatch, tmp_path):
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.delenv('RAY_ADDRESS', raising=False)
    monkeypatch.chdir(tmp_path)
    runner = RayRunner(dict(type='ShellTask'))
    with pytest.raises(SystemExit, match='export RAY_ADDRESS=HEAD:6379') as stop:
        runner.launch([shell_task(tmp_path / 'run', 'fine', 'true')])
    assert 'The run stopped: 1 task of this stage did not run' in str(stop.value)
    assert shell_log(tmp_path / 'run', 'fine').startswith('ClusterSetupError: RayRunner needs')


def test_a_variable_to_pass_that_is_not_set_stops_the_run_naming_it(monkeypatch, tmp_path):
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.delenv('LVEVAL_TEST_SECRET', raising=False)
    monkeypatch.chdir(tmp_path)
    runner = RayRunner(dict(type='ShellTask'), task_env_from=['LVEVAL_TEST_SECRET'])
    with pytest.raises(SystemExit, match='task_env_from names LVEVAL_TEST_SECRET, not set'):
        runner.launch([shell_task(tmp_path / 'run', 'fine', 'true')])


def test_an_address_where_no_ray_head_answers_is_refused_within_the_limit():
    refusals = refused_addresses(0.25)
    for address, refusal, seconds in refusals:
        assert seconds < 1.5, (address, seconds)
        assert f'RayRunner: no Ray cluster answers at {address}' in refusal
        assert 'connect_timeout_s' in refusal and 'asked for 0.25 s' in refusal
    closed, silent, http_server = (refusal for _, refusal, _ in refusals)
    assert 'Connection refused' in closed
    assert 'Deadline Exceeded' in silent
    assert 'Failed parsing HTTP/2' in http_server


def node_spec(tmp_path: Path, **changes) -> dict:
    from opencompass_lveval.runner.ray_runner import _installed_versions

    config = tmp_path / 'tmp' / 'task_params.py'
    config.parent.mkdir(exist_ok=True)
    config.write_text('')
    mark = tmp_path / 'work' / 'logs' / 'ray' / 'driver-mark'
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text('0123abcd')
    spec = dict(
        cwd=str(tmp_path), config=str(config), python=sys.executable,
        versions=_installed_versions(), work_dir=str(tmp_path / 'work'),
        work_mark={'path': str(mark), 'text': '0123abcd'},
    )  # fmt: skip
    return {**spec, **changes}


def test_a_node_without_the_folders_python_package_or_versions_says_which(tmp_path):
    from opencompass_lveval.runner.on_node import environment_problem

    host = os.uname().nodename
    assert environment_problem(node_spec(tmp_path)) is None
    missing = environment_problem(node_spec(tmp_path, cwd='/nowhere/run'))
    assert '/nowhere/run' in missing and 'same path on every node' in missing
    assert environment_problem(node_spec(tmp_path, python='/nowhere/bin/python')).startswith(
        f'{host}: /nowhere/bin/python is not on this node'
    )
    other = environment_problem(node_spec(tmp_path, versions=['0.5.4', '0.0.1']))
    assert 'the driver 0.5.4 0.0.1' in other and 'install the same versions' in other
    # The work folder as the node sees it: another run's folder at the same path, or none.
    for mark, seen in (('another', "holds another run's mark"), ('', 'is not there')):
        spec = node_spec(tmp_path)
        if mark:
            Path(spec['work_mark']['path']).write_text(mark)
        else:
            Path(spec['work_mark']['path']).unlink()
        problem = environment_problem(spec)
        assert problem.startswith(
            f"{host}: the work folder {tmp_path / 'work'} is not the driver's"
        )
        assert seen in problem and 'on a shared file system' in problem


def test_a_node_with_the_package_metadata_but_not_its_code_is_named(tmp_path):
    """The package's metadata is there (its version reads), its code is not importable."""
    from opencompass_lveval.runner.on_node import environment_problem

    shadow = tmp_path / 'shadow' / 'opencompass_lveval'
    shadow.mkdir(parents=True)
    (shadow / '__init__.py').write_text('import opencompass_lveval_code_that_is_missing\n')
    env = {**os.environ, 'PYTHONPATH': str(shadow.parent)}
    problem = environment_problem(node_spec(tmp_path), env)
    assert problem.startswith(f'{os.uname().nodename}: {sys.executable} cannot import')
    assert "No module named 'opencompass_lveval_code_that_is_missing'" in problem
    assert 'install the package' in problem


def processes_running(start: str) -> list[str]:
    """Command lines of the processes on this machine that begin with ``start``."""
    return [line for line in command_lines() if line.startswith(start)]


def test_the_keeper_ends_what_a_task_leaves_behind_and_keeps_its_exit_code():
    """``cmd &`` and ``setsid nohup cmd &`` (a new session, out of the task's process group):
    both gone once the task's shell exits; its code is the keeper's."""
    from opencompass_lveval.runner.on_node import _KEEPER

    command = (
        'sleep 3141.1 & setsid nohup sleep 3141.2 >/dev/null 2>&1 & '
        '(setsid sleep 3141.3 &); sleep 0.2; exit 3'
    )
    done = subprocess.run([sys.executable, '-I', '-S', '-c', _KEEPER, command], timeout=30)
    assert done.returncode == 3
    assert processes_running('sleep 3141.') == []


def test_a_stopped_keeper_ends_the_tree_too():
    """SIGTERM (the deadline, or the Ray worker's death through PDEATHSIG): nothing is left."""
    from opencompass_lveval.runner.on_node import _KEEPER

    mark = f'sleep 2718.{os.getpid()}'
    keeper = subprocess.Popen(
        [sys.executable, '-I', '-S', '-c', _KEEPER, f'setsid {mark}1 & {mark}2']
    )
    try:
        deadline = time.monotonic() + 10
        while len(processes_running(mark)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(processes_running(mark)) == 2
    finally:
        keeper.send_signal(signal.SIGTERM)
    assert keeper.wait(timeout=10) == 128 + signal.SIGTERM
    assert processes_running(mark) == []


def test_journal_lines_that_are_no_records_are_named_and_skipped(tmp_path):
    from opencompass_lveval.files.jsonl import journal_records

    journal = tmp_path / 'ray_runner.jsonl'
    journal.write_text('{"task": "a", "outcome": "exit"}\n[1, 2]\n\n"lost"\n{"task": "b", "outc')
    records, skipped = journal_records(journal)
    assert records == [{'task': 'a', 'outcome': 'exit'}]
    assert skipped[0] == f'{journal}, line 2: a JSON list, not an object'
    assert skipped[1] == f'{journal}, line 4: a JSON str, not an object'
    assert skipped[2].startswith(f'{journal}, line 5: not a JSON line (Unterminated string')
    assert journal_records(tmp_path / 'none.jsonl') == ([], [])


def node_id(index: int) -> str:
    return f'{index + 1:056x}'  # Ray's form: 28 bytes in hex


def cluster_nodes(*offers: dict) -> list[dict]:
    return [
        {'NodeID': node_id(i), 'Alive': True, 'NodeManagerHostname': f'host{i}', 'Resources': o}
        for i, o in enumerate(offers)
    ]


def test_what_no_node_offers_is_named_with_what_they_do():
    from opencompass_lveval.runner.ray_cluster import unmet

    nodes = cluster_nodes({'CPU': 2.0, 'GPU': 2.0, 'memory': 2**31}, {'CPU': 8.0})
    assert unmet({'CPU': 8, 'GPU': 0}, nodes) is None
    assert unmet({'CPU': 64}, nodes) == 'the most any node offers is 8 CPUs'
    assert unmet({'CPU': 4, 'GPU': 1}, nodes) == (
        'no single node offers all of it (the most any offers: 8 CPUs, 2 GPUs)'
    )
    assert unmet({'A100': 1, 'memory': 2**32}, nodes) == (
        'the most any node offers is 0 A100, 2 GiB of memory'
    )
    assert unmet({'CPU': 1}, [{**nodes[1], 'Alive': False}]) == 'the most any node offers is 0 CPUs'


def test_a_task_keeps_off_avoided_nodes_and_waits_while_every_node_is_avoided():
    """Nothing avoided: Ray spreads. A node avoided: pinned to the least busy node that offers
    what the task asks for. Every such node avoided: the task waits (None)."""
    from collections import Counter

    from opencompass_lveval.runner.ray_cluster import NodeWatch

    class FakeRay:
        def nodes(self):
            return cluster_nodes({'CPU': 2.0, 'GPU': 2.0}, {'CPU': 2.0, 'GPU': 2.0}, {'CPU': 2.0})

    watch = NodeWatch(FakeRay(), {}, print)
    assert watch.place({'CPU': 1}, Counter()) == {'scheduling_strategy': 'SPREAD'}
    watch.avoid(node_id(0), 'host0')
    pinned = watch.place({'CPU': 1}, Counter({node_id(1): 2}))['scheduling_strategy']
    assert (pinned.node_id, pinned.soft) == (node_id(2), False)
    assert watch.place({'CPU': 1, 'GPU': 1}, Counter())['scheduling_strategy'].node_id == node_id(1)
    watch.avoid(node_id(1), 'host1')
    assert watch.place({'CPU': 1, 'GPU': 1}, Counter()) is None
    assert watch.place({'CPU': 16}, Counter()) == {'scheduling_strategy': 'SPREAD'}


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


def journal(work: Path) -> list[dict]:
    return [json.loads(line) for line in (work / 'logs' / 'ray_runner.jsonl').open()]


@pytest.mark.slow
def test_success_failure_and_deadline_on_a_real_ray(tmp_path, monkeypatch, local_ray):
    """Three tasks: one that succeeds runs once; one that exits 3 by itself is not retried; one
    that sleeps past its deadline is stopped on its node, tried ``retry`` more times, and then
    fails with every attempt's cause in its log file."""
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.chdir(tmp_path)
    work = tmp_path / 'run'
    runner = RayRunner(dict(type='ShellTask'), address=local_ray, retry=1, deadline_s=3)
    status = dict(
        runner.launch(
            [
                shell_task(work, 'fine', 'echo "sees $CUDA_VISIBLE_DEVICES"', num_gpus=1),
                shell_task(work, 'broken', 'exit 3', num_gpus=1),
                shell_task(work, 'slow', 'sleep 60', num_gpus=1),
            ]
        )
    )
    assert status == {'Shell[fine/d]': 0, 'Shell[broken/d]': 3, 'Shell[slow/d]': 1}
    by_task = {}
    for record in journal(work):
        by_task.setdefault(record['task'], []).append(record['outcome'])
    assert by_task == {
        'Shell[fine/d]': ['exit'],
        'Shell[broken/d]': ['exit'],
        'Shell[slow/d]': ['deadline', 'deadline'],
    }
    slow = [r for r in journal(work) if r['task'] == 'Shell[slow/d]']
    assert all(3 <= r['seconds'] < 10 and not r.get('lost') for r in slow)
    gpu = next(r['gpus'] for r in journal(work) if r['task'] == 'Shell[fine/d]')
    assert gpu in ('0', '1') and f'sees {gpu}\n' in shell_log(work, 'fine')
    log = shell_log(work, 'slow')
    assert log.count('--- attempt') == 2
    assert 'RayTaskLostError: Shell[slow/d] failed on the Ray cluster after 2 attempts' in log
    assert "raise the runner's deadline_s" in log
    assert not list(Path('tmp').glob('*_params.py'))  # the task configs are removed

    from opencompass_lveval.leaderboard.runs import first_error

    assert first_error(work / 'logs' / 'shell' / 'slow' / 'd.out').startswith('RayTaskLostError')


@pytest.mark.slow
def test_a_folder_with_shell_characters_a_secret_and_what_a_task_leaves_behind(
    tmp_path, monkeypatch, local_ray
):
    """From a folder named ``r$(touch INJECTED)x y``: the task's config path reaches its
    command as one word and nothing is injected; a variable passed by name reaches the task and
    no file; the processes the task left behind (``cmd &``, ``setsid nohup cmd &``) are gone
    when it ends."""
    from opencompass_lveval.runner.ray_runner import RayRunner

    folder = tmp_path / 'r$(touch INJECTED)x y'
    folder.mkdir()
    monkeypatch.chdir(folder)
    secret = 'sk-lveval-' + os.urandom(8).hex()
    monkeypatch.setenv('LVEVAL_TEST_SECRET', secret)  # the driver's, not the Ray node's
    work = folder / 'run'
    leaves = 'sleep 1618.1 & setsid nohup sleep 1618.2 >/dev/null 2>&1 & echo left'
    secret_seen = 'printf %s "$LVEVAL_TEST_SECRET" | sha256sum'
    runner = RayRunner(
        dict(type='ShellTask'), address=local_ray, task_env_from=['LVEVAL_TEST_SECRET']
    )
    status = runner.launch(
        [shell_task(work, 'leaves', leaves), shell_task(work, 'key', secret_seen)]
    )
    assert status == [('Shell[leaves/d]', 0), ('Shell[key/d]', 0)]
    assert 'left\n' in shell_log(work, 'leaves')
    assert processes_running('sleep 1618.') == []
    assert hashlib.sha256(secret.encode()).hexdigest() in shell_log(work, 'key')
    assert not list(tmp_path.rglob('INJECTED'))
    written = [p for p in tmp_path.rglob('*') if p.is_file() and secret.encode() in p.read_bytes()]
    assert written == []


@pytest.mark.slow
def test_what_no_node_offers_is_refused_before_submission(tmp_path, monkeypatch, local_ray):
    """``num_cpus=64`` on a cluster of 2 CPUs, a custom resource no node has: each task's log
    says why at once, and nothing reaches the cluster."""
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.chdir(tmp_path)
    work = tmp_path / 'run'
    start = time.monotonic()
    for settings, abbr in ((dict(num_cpus=64), 'cpus'), (dict(resources={'A100': 1}), 'a100')):
        runner = RayRunner(dict(type='ShellTask'), address=local_ray, **settings)
        with pytest.raises(SystemExit, match='Every task of the inference stage failed'):
            runner.launch([shell_task(work, abbr, 'true')])
    assert time.monotonic() - start < 30
    assert shell_log(work, 'cpus') == (
        'ResourceRequestError: Shell[cpus/d] asks for 64 CPUs (num_cpus, memory and resources: '
        "the runner's settings; GPUs: the model's run_cfg.num_gpus), but the most any node "
        'offers is 2 CPUs; not submitted. Lower what the runner asks for, or add nodes that have '
        'it.\n'
    )
    assert 'asks for 1 CPU, 1 A100' in shell_log(work, 'a100')
    assert not (work / 'logs' / 'ray_runner.jsonl').exists()


@pytest.mark.slow
def test_a_rerun_whose_journal_marks_the_only_node_lost_runs_at_once(
    tmp_path, monkeypatch, local_ray
):
    """The journal of an earlier stage says the only node went silent; it answers now: the task
    runs on it within seconds, not after a deadline. Bad journal lines are named and skipped."""
    from opencompass_lveval.runner.ray_runner import RayRunner

    monkeypatch.chdir(tmp_path)
    work = tmp_path / 'run'
    (node,) = node_ids(local_ray)
    earlier = {'task': 'Shell[x/d]', 'attempt': 1, 'host': 'lvnode9', 'node_id': node,
               'outcome': 'deadline', 'lost': True}  # fmt: skip
    path = work / 'logs' / 'ray_runner.jsonl'
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(earlier) + '\n[1]\n{"task": "Shell[x/d]", "att')
    runner = RayRunner(dict(type='ShellTask'), address=local_ray, deadline_s=60)
    start = time.monotonic()
    with logged() as said:
        assert runner.launch([shell_task(work, 'fine', 'true')]) == [('Shell[fine/d]', 0)]
    assert time.monotonic() - start < 40
    said = '\n'.join(said)
    assert f'lvnode9 (Ray node {node[:12]}) answers again' in said
    assert f'{path}, line 2: a JSON list, not an object' in said
    assert f'{path}, line 3: not a JSON line' in said
    assert [r['task'] for r in journal(work)] == ['Shell[x/d]', 'Shell[fine/d]']


@pytest.mark.slow
def test_a_node_that_cannot_import_the_package_stops_the_run_naming_it(
    tmp_path, monkeypatch, local_ray
):
    """The package's metadata is there, its code is not (a shadowing ``PYTHONPATH``, given to
    the tasks by name): the run stops at the first attempt, naming the node, and every task of
    the stage has a log saying why."""
    from opencompass_lveval.runner.ray_runner import RayRunner

    shadow = tmp_path / 'shadow' / 'opencompass_lveval'
    shadow.mkdir(parents=True)
    (shadow / '__init__.py').write_text('import opencompass_lveval_code_that_is_missing\n')
    monkeypatch.setenv('PYTHONPATH', str(shadow.parent))
    monkeypatch.chdir(tmp_path)
    work = tmp_path / 'run'
    runner = RayRunner(
        dict(type='ShellTask'), address=local_ray, max_num_workers=1, task_env_from=['PYTHONPATH']
    )
    with pytest.raises(SystemExit) as stop:
        runner.launch([shell_task(work, 'one', 'true'), shell_task(work, 'two', 'true')])
    said = str(stop.value)
    assert said.startswith(f'ClusterSetupError: {os.uname().nodename}: {sys.executable} cannot')
    assert "No module named 'opencompass_lveval_code_that_is_missing'" in said
    assert 'The run stopped: 2 tasks of this stage did not run' in said
    for abbr in ('one', 'two'):
        assert shell_log(work, abbr).endswith(said.splitlines()[0] + '\n')


@pytest.mark.slow
def test_an_attempts_deadline_counts_its_checks(tmp_path, monkeypatch):
    """The node's checks take 1 s and the deadline is 1.5 s: the task is stopped 1.5 s after the
    attempt started, not 1.5 s after the checks (the driver counts from the start)."""
    import types

    from opencompass_lveval.runner import on_node

    slow_python = tmp_path / 'python'
    slow_python.write_text(
        f'#!/bin/sh\ncase "$2" in *importlib.metadata*) sleep 1;; esac\nexec {sys.executable} "$@"\n'
    )
    slow_python.chmod(0o755)
    context = types.SimpleNamespace(get_node_id=lambda: 'node0')
    monkeypatch.setitem(
        sys.modules, 'ray', types.SimpleNamespace(get_runtime_context=lambda: context)
    )
    spec = node_spec(
        tmp_path, python=str(slow_python), command='sleep 30', env={}, num_gpus=0, attempt=1,
        deadline_s=1.5, log=str(tmp_path / 'task.out'), record=str(tmp_path / 'record.json'),
    )  # fmt: skip
    outcome = on_node.run_task(spec)
    assert outcome['outcome'] == 'deadline'
    assert 1.5 <= outcome['seconds'] < 2.2
    assert json.loads(Path(spec['record']).read_text())['started'] == outcome['started']


@pytest.mark.slow
def test_tasks_keep_off_a_silent_node_on_every_ray_the_package_allows(tmp_path, monkeypatch):
    """Two worker nodes; the journal of an earlier stage marks one silent, and it is (its raylet
    stopped): its probe never answers, and both tasks run on the other node. The avoidance pins
    them there (Ray 2.40, the lowest the package allows, rejects ``label_selector``)."""
    ray = pytest.importorskip('ray', reason='pip install "opencompass_lveval[ray]"')
    from ray.cluster_utils import Cluster

    from opencompass_lveval.runner.ray_runner import RayRunner

    small = dict(object_store_memory=80_000_000)
    cluster = Cluster(
        initialize_head=True,
        head_node_args=dict(num_cpus=0, num_gpus=0, include_dashboard=False, **small),
    )
    silent, other = cluster.add_node(num_cpus=2, **small), cluster.add_node(num_cpus=2, **small)
    raylet = silent.all_processes['raylet'][0].process
    try:
        cluster.wait_for_nodes()
        monkeypatch.chdir(tmp_path)
        work = tmp_path / 'run'
        lost = {'task': 'Shell[x/d]', 'attempt': 1, 'host': 'lvnode9',
                'node_id': silent.node_id, 'outcome': 'deadline', 'lost': True}  # fmt: skip
        (work / 'logs').mkdir(parents=True)
        (work / 'logs' / 'ray_runner.jsonl').write_text(json.dumps(lost) + '\n')
        os.kill(raylet.pid, signal.SIGSTOP)
        runner = RayRunner(dict(type='ShellTask'), address=cluster.address, deadline_s=60)
        with logged() as said:
            status = runner.launch([shell_task(work, 'a', 'true'), shell_task(work, 'b', 'true')])
        assert status == [('Shell[a/d]', 0), ('Shell[b/d]', 0)]
        ran = [r['node_id'] for r in journal(work)[1:]]
        assert ran == [other.node_id, other.node_id], ray.__version__
        assert not any('answers again' in line for line in said)
    finally:
        os.kill(raylet.pid, signal.SIGCONT)
        cluster.shutdown()
