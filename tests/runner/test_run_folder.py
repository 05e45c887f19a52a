"""What the package's runners guard in a run folder: one driver at a time, and task commands the
shell reads as the words they were built from, whatever the folder's name."""

from __future__ import annotations

import errno
import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ray_clusters import shell_log, shell_task
from runs import logged

HOLD = """
import sys, time
from opencompass_lveval.runner.run_lock import hold_run_folder
hold_run_folder(sys.argv[1])
print('held', flush=True)
time.sleep(float(sys.argv[2]))
"""


def holding(work: Path) -> subprocess.Popen:
    """Another driver, in a process of its own, holding ``work``."""
    driver = subprocess.Popen(
        [sys.executable, '-c', HOLD, str(work), '60'], stdout=subprocess.PIPE, text=True
    )
    assert driver.stdout.readline() == 'held\n'
    return driver


def test_a_second_driver_is_refused_naming_the_first_and_a_dead_ones_lock_is_taken(
    tmp_path, monkeypatch
):
    from opencompass_lveval.runner import run_lock

    work = tmp_path / 'run'
    driver = holding(work)
    try:
        with pytest.raises(SystemExit) as refused:
            run_lock.hold_for([dict(work_dir=str(work))])
        said = str(refused.value)
        assert said.startswith(f'RunFolderInUseError: {work} is in use by another driver')
        assert f'host {socket.gethostname()} pid {driver.pid} since' in said
        assert 'two drivers on one run folder run every task twice' in said
    finally:
        driver.kill()  # as a crash would: its name stays in the file
        driver.wait()
    lock = run_lock.lock_path(work)
    assert f'pid {driver.pid}' in lock.read_text()
    with logged() as said:
        run_lock.hold_run_folder(work)  # the kernel let the dead driver's lock go
    taken = f'{lock}: taken over from a driver that ended (host {socket.gethostname()} pid '
    assert [line[: len(taken)] for line in said] == [taken] and f'pid {driver.pid} since' in said[0]

    ended = tmp_path / 'ended'  # a driver that ends leaves no name behind
    subprocess.run([sys.executable, '-c', HOLD, str(ended), '0'], check=True, capture_output=True)
    assert run_lock.lock_path(ended).read_text() == ''
    run_lock.hold_run_folder(work)  # again, in the same driver: nothing to do
    assert lock.read_text().startswith(f'host {socket.gethostname()} pid {os.getpid()} since')


def test_without_file_locks_the_holders_pid_decides(tmp_path, monkeypatch):
    """A file system that keeps no locks (NFS mounted nolock): a live holder on this host
    refuses, a dead one's lock is taken, another host's refuses."""
    from opencompass_lveval.runner import run_lock

    def no_locks(descriptor, operation):
        raise OSError(errno.ENOLCK, 'No locks available')

    monkeypatch.setattr(run_lock.fcntl, 'flock', no_locks)
    host = socket.gethostname()
    sleeper = subprocess.Popen(['sleep', '60'])
    try:
        for index, (holder, refused) in enumerate(
            [
                (f'host {host} pid {sleeper.pid} since 2026-01-01T00:00:00', True),
                ('host elsewhere pid 1 since 2026-01-01T00:00:00', True),
                (f'host {host} pid 999999999 since 2026-01-01T00:00:00', False),
            ]
        ):
            work = tmp_path / f'run{index}'
            lock = run_lock.lock_path(work)
            lock.parent.mkdir(parents=True)
            lock.write_text(holder + '\n')
            if refused:
                with pytest.raises(run_lock.RunFolderInUseError, match=holder):
                    run_lock.hold_run_folder(work)
            else:
                run_lock.hold_run_folder(work)
                assert f'pid {os.getpid()}' in lock.read_text()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_paths_are_quoted_only_where_the_shell_would_split_them():
    from opencompass_lveval.runner.quoting import quote_paths, quoting

    python, other = '/envs/my env/bin/python', '/envs/plain/bin/python'
    command = f'CUDA_VISIBLE_DEVICES=0 {python} /x/task.py tmp/1_params.py'
    assert quote_paths(command, (python,)) == (
        "CUDA_VISIBLE_DEVICES=0 '/envs/my env/bin/python' /x/task.py tmp/1_params.py"
    )
    plain = f'{other} /x/task.py tmp/1_params.py'
    assert quote_paths(plain, (other,)) == plain
    assert quote_paths(f'{other}3 x', (other + ' ',)) == f'{other}3 x'

    from opencompass.tasks import OpenICLEvalTask

    quoted = quoting('OpenICLEvalTask')
    assert issubclass(quoted, OpenICLEvalTask) and quoting(quoted) is quoted
    assert pickle.loads(pickle.dumps(quoted)) is quoted  # SlurmRunner's process pool pickles it
    task = quoted(shell_task(Path('/w'), 'm', 'true'))
    cfg = '/runs/r$(touch INJECTED)x y/tmp/1_params.py'
    assert task.get_command(cfg, '{task_cmd}').endswith(f" '{cfg}'")


def test_a_local_run_from_a_folder_named_with_shell_characters(tmp_path, monkeypatch):
    """OpenCompass's LocalRunner puts the folder the run started in into its task command; from
    ``r$(touch INJECTED)x y`` the task still gets its config, nothing is injected; a second
    driver on the same run folder meanwhile is refused."""
    from opencompass_lveval.runner.local import CheckedLocalRunner

    folder = tmp_path / 'r$(touch INJECTED)x y'
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '')
    work = folder / 'run'
    runner = CheckedLocalRunner(task=dict(type='ShellTask'), max_num_workers=1)
    assert runner.launch([shell_task(work, 'fine', 'echo ran')]) == [('Shell[fine/d]', 0)]
    assert 'ran\n' in shell_log(work, 'fine')
    assert not list(tmp_path.rglob('INJECTED'))

    other = holding(tmp_path / 'other')
    try:
        start = time.monotonic()
        with pytest.raises(SystemExit, match=f'pid {other.pid}'):
            runner.launch([shell_task(tmp_path / 'other', 'twice', 'echo ran')])
        assert time.monotonic() - start < 5
        assert not (tmp_path / 'other' / 'logs' / 'shell').exists()
    finally:
        other.kill()
        other.wait()
