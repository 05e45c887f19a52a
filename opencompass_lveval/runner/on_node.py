"""What the Ray runner runs on a node: one OpenCompass task as a subprocess, within a deadline.

Standard library only (and Ray, already loaded in the worker that runs it), so that a Ray worker
unpickling it imports nothing heavy. The task's command is OpenCompass's own, run in the folder
the run was started in, with the GPUs Ray gave this task as ``CUDA_VISIBLE_DEVICES`` (none for a
task that asked for none, as OpenCompass's LocalRunner does). The deadline is kept here, on the
node's own clock, so a task on a node cut off from the network is stopped all the same before the
driver runs it again elsewhere: two copies of a task never write the same files.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_VERSIONS = (
    'import importlib.metadata as m; '
    'print(m.version("opencompass"), m.version("opencompass_lveval"), end="")'
)


def _die_with_parent() -> None:
    """In the task's process, before it runs: die when the Ray worker that started it dies (a
    cancelled or killed worker leaves no task behind)."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def environment_problem(spec: dict) -> str | None:
    """Why this node cannot run the task as the driver would, or None: the run's folder, the
    task's config file, the Python and the package versions must be the driver's."""
    host = socket.gethostname()
    if not os.path.isdir(spec['cwd']) or not os.path.isfile(spec['config']):
        return (
            f'{host}: the run folder {spec["cwd"]} (and its task config {spec["config"]}) is not '
            'on this node: RayRunner needs the folder OpenCompass runs in at the same path on '
            'every node, on a shared file system, as Slurm does'
        )
    python = spec['python']
    if not os.access(python, os.X_OK):
        return (
            f"{host}: {python} is not on this node: RayRunner runs each task with the driver's "
            'Python, so every node needs the same environment at the same path'
        )
    done = subprocess.run([python, '-c', _VERSIONS], capture_output=True, text=True, timeout=120)
    found = done.stdout.split()
    if found != spec['versions']:
        return (
            f'{host}: {python} has opencompass and opencompass_lveval '
            f'{" ".join(found) or "(not installed)"}, the driver {" ".join(spec["versions"])}: '
            'install the same versions on every node'
        )
    return None


def _write_json(path: str, record: dict) -> None:
    part = f'{path}.part'
    Path(part).write_text(json.dumps(record), encoding='utf-8')
    os.replace(part, path)


def run_task(spec: dict) -> dict:
    """Run one attempt of a task; returns where it ran, how long and how it ended (``exit`` with
    the code, ``deadline``, or ``environment`` with the problem). Before the task starts, the same
    facts go to ``spec['record']`` on the shared disk, so the driver knows where a task it can no
    longer hear from was running."""
    import ray

    gpus = os.environ.get('CUDA_VISIBLE_DEVICES', '') if spec['num_gpus'] else ''
    where = {
        'host': socket.gethostname(),
        'node_id': ray.get_runtime_context().get_node_id(),
        'gpus': gpus,
        'started': time.time(),
    }
    problem = environment_problem(spec)
    _write_json(spec['record'], where)
    if problem:
        return {**where, 'outcome': 'environment', 'error': problem}
    with open(spec['log'], 'a', encoding='utf-8') as log:
        log.write(f'--- attempt {spec["attempt"]} on {where["host"]} (GPUs {gpus or "none"})\n')
        log.flush()
        task = subprocess.Popen(
            spec['command'],
            shell=True,
            cwd=spec['cwd'],
            env={**os.environ, 'CUDA_VISIBLE_DEVICES': gpus},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        try:
            code = task.wait(timeout=spec['deadline_s'])
            outcome = {'outcome': 'exit', 'code': code}
        except subprocess.TimeoutExpired:
            outcome = {'outcome': 'deadline'}
        finally:
            if task.poll() is None:  # the deadline, or the attempt cancelled
                os.killpg(task.pid, signal.SIGKILL)
                task.wait()
    return {**where, **outcome, 'seconds': round(time.time() - where['started'], 3)}
