"""What the Ray runner runs on a node: one OpenCompass task as a subprocess, within a deadline.

Standard library only, and sent to the node by value (``RayRunner`` registers this module with
Ray's pickler): a Ray worker runs it without importing the package, so a node whose package is
missing or broken is found by the check below and named, instead of failing each task in the
worker's import. The task's command is OpenCompass's own, run in the folder the run was started
in, with the GPUs Ray gave this task as ``CUDA_VISIBLE_DEVICES`` (none for a task that asked for
none, as OpenCompass's LocalRunner does) and the variables the runner passes by name.

The deadline is kept here, on the node's own clock, from the moment the attempt starts (its
checks included), so a task on a node cut off from the network is stopped all the same before
the driver, which counts from no earlier, runs it again elsewhere: two copies of a task never
write the same files. The task runs under a small keeper process that adopts whatever the task
leaves behind (``cmd &``, ``setsid nohup cmd &``: Linux's child subreaper) and ends all of it
when the task ends, exits, passes its deadline or is cancelled.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_STOP_WAIT_S = 10.0
_CHECK = (
    'import importlib.metadata as m, opencompass, opencompass_lveval.runner.on_node; '
    'print(m.version("opencompass"), m.version("opencompass_lveval"), end="")'
)

# The keeper: ``python -I -S -c _KEEPER COMMAND``. It becomes the child subreaper of the task's
# tree, runs COMMAND in a shell, and once the shell ends (or on SIGTERM) kills every process left
# below it until none is, then exits with the shell's code.
_KEEPER = r"""
import ctypes, os, signal, subprocess, sys, time
libc = ctypes.CDLL(None)
libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER


def below():
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat', 'rb') as stat:
                    parent = int(stat.read().rsplit(b')', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, queue = [], [os.getpid()]
    while queue:
        for child in children.get(queue.pop(), ()):
            found.append(child)
            queue.append(child)
    return found


def end_tree():
    while True:
        found = below()
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not found:
            return
        time.sleep(0.01)


def stop(signum, frame):
    end_tree()
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, stop)
task = subprocess.Popen(sys.argv[1], shell=True, preexec_fn=lambda: libc.prctl(1, 9))
code = task.wait()
end_tree()
sys.exit(code if code >= 0 else 128 - code)
"""


def _term_with_parent() -> None:
    """In the keeper's process, before it runs: SIGTERM (the keeper then ends the task's tree)
    when the Ray worker that started it dies, as a cancelled attempt's worker does."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def node_answers() -> str:
    """The driver's liveness probe of a node it stopped using: its host name, once it runs."""
    return socket.gethostname()


def _work_folder_problem(spec: dict, host: str) -> str | None:
    """Why this node does not see the driver's work folder (``-w``): the mark the driver wrote
    there for this run must read back the same here, and the folder must take writes."""
    work, mark = spec['work_dir'], spec['work_mark']
    try:
        found = Path(mark['path']).read_text(encoding='utf-8')
    except (OSError, ValueError):
        found = None
    if found != mark['text']:
        seen = 'is not there' if found is None else "holds another run's mark"
        return (
            f"{host}: the work folder {work} is not the driver's on this node (the file "
            f'{mark["path"]} that the driver wrote {seen}): RayRunner needs the work folder '
            '(-w) on a shared file system at the same path on every node'
        )
    if not os.access(work, os.W_OK):
        return f'{host}: the work folder {work} cannot be written on this node: check its rights'
    return None


def environment_problem(spec: dict, env: dict | None = None) -> str | None:
    """Why this node cannot run the task as the driver would, or None: the run's folder, the
    task's config file and the work folder must be the driver's, the driver's Python must import
    opencompass and opencompass_lveval as the task will (in its folder, with its environment
    ``env``), and their versions must be the driver's."""
    host = socket.gethostname()
    if not os.path.isdir(spec['cwd']) or not os.path.isfile(spec['config']):
        return (
            f'{host}: the run folder {spec["cwd"]} (and its task config {spec["config"]}) is not '
            'on this node: RayRunner needs the folder OpenCompass runs in at the same path on '
            'every node, on a shared file system, as Slurm does'
        )
    problem = _work_folder_problem(spec, host)
    if problem:
        return problem
    python = spec['python']
    if not os.access(python, os.X_OK):
        return (
            f"{host}: {python} is not on this node: RayRunner runs each task with the driver's "
            'Python, so every node needs the same environment at the same path'
        )
    done = subprocess.run(
        [python, '-c', _CHECK], cwd=spec['cwd'], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    if done.returncode:
        said = (done.stderr.strip().splitlines() or ['(nothing on stderr)'])[-1]
        return (
            f'{host}: {python} cannot import opencompass and opencompass_lveval ({said}): '
            'install the package (the same version as the driver) in that environment'
        )
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


def _stop(keeper: subprocess.Popen) -> None:
    """End a keeper that still runs: SIGTERM (it ends the task's tree), then SIGKILL."""
    keeper.terminate()
    try:
        keeper.wait(timeout=_STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(keeper.pid, signal.SIGKILL)
        keeper.wait()


def run_task(spec: dict) -> dict:
    """Run one attempt of a task; returns where it ran, how long and how it ended (``exit`` with
    the code, ``deadline``, or ``environment`` with the problem). Before anything else, the same
    facts go to ``spec['record']`` on the shared disk, so the driver knows where a task it can no
    longer hear from was running."""
    import ray

    clock = time.monotonic()
    gpus = os.environ.get('CUDA_VISIBLE_DEVICES', '') if spec['num_gpus'] else ''
    where = {
        'host': socket.gethostname(),
        'node_id': ray.get_runtime_context().get_node_id(),
        'gpus': gpus,
        'started': time.time(),
    }
    with contextlib.suppress(OSError):  # a work folder this node lacks: the check names it
        _write_json(spec['record'], where)
    env = {**os.environ, **spec['env'], 'CUDA_VISIBLE_DEVICES': gpus}
    problem = environment_problem(spec, env)
    if problem:
        return {**where, 'outcome': 'environment', 'error': problem}
    left = spec['deadline_s'] - (time.monotonic() - clock)
    outcome = {'outcome': 'deadline'}
    if left > 0:
        with open(spec['log'], 'a', encoding='utf-8') as log:
            log.write(f'--- attempt {spec["attempt"]} on {where["host"]} (GPUs {gpus or "none"})\n')
            log.flush()
            keeper = subprocess.Popen(
                [spec['python'], '-I', '-S', '-c', _KEEPER, spec['command']],
                cwd=spec['cwd'],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_term_with_parent,
            )
            try:
                outcome = {'outcome': 'exit', 'code': keeper.wait(timeout=left)}
            except subprocess.TimeoutExpired:
                pass
            finally:
                if keeper.poll() is None:  # the deadline, or the attempt cancelled
                    _stop(keeper)
    return {**where, **outcome, 'seconds': round(time.monotonic() - clock, 3)}
