"""Replicas inside a Slurm allocation: one job step per replica, spread over the job's nodes.

Run from within the job (an ``sbatch`` script, or ``salloc``): each replica is
``srun --overlap -w NODE -N1 -n1 python -m opencompass_lveval.serving.placement.node_launch``,
a step beside the others on the nodes the job holds. Submit the job with ``--no-kill``: without
it Slurm ends the whole job when one of its nodes is lost, and every replica with it; with it
only that node's replica ends, and its requests go to the others.

GPUs: under ``--overlap`` Slurm 22.05 gives every step asking ``--gres=gpu:1`` the same GPU 0
of its node (seen on tools/rig.py: two such steps both got ``CUDA_VISIBLE_DEVICES=0``). So a
step asks for no GPUs of its own, sees all the GPUs the job holds on its node, and the replica
keeps only its share: the placement hands each replica on a node GPUs no other replica there
holds, ``gpus`` (its tensor-parallel size) of them.

Stopping a replica sends SIGTERM through its ``srun`` to the server, then cancels the step
(``scancel JOB.STEP``, which ends every process of the step); ``srun`` is started so that it
gets SIGTERM when the driver dies, which ends its step all the same.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from contextlib import suppress
from pathlib import Path
from typing import IO, Any, Optional

from ...files.errors import ClusterSetupError
from ...runner.processes import die_with_parent
from . import LOG_TAIL_CHARS, ReplicaSpec
from .node_launch import READY_MARK

_STOP_GRACE_S = 10.0
_NODE_GRES = re.compile(r'^\s*Nodes=(\S+)\s.*?GRES=(\S*)', re.MULTILINE)
_GPU_COUNT = re.compile(r'gpu(?::[^:(,\s]+)?:(\d+)')
_NUM_CPUS = re.compile(r'\bNumCPUs=(\d+)')


def _scontrol(*argv: str) -> str:
    done = subprocess.run(['scontrol', *argv], capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise ClusterSetupError(f'scontrol {" ".join(argv)}: {done.stderr.strip()[-300:]}')
    return done.stdout


def allocation() -> tuple[str, list[str]]:
    """This process's Slurm job and its nodes, or a refusal saying how to get an allocation."""
    job, nodelist = os.environ.get('SLURM_JOB_ID'), os.environ.get('SLURM_JOB_NODELIST')
    if not job or not nodelist:
        raise ClusterSetupError(
            'SlurmPlacement runs inside a Slurm allocation, but SLURM_JOB_ID and '
            'SLURM_JOB_NODELIST are not set: start the run in a job submitted with '
            '`sbatch --no-kill` (or from `salloc --no-kill`), so that a lost node ends only its '
            'replica; see docs/serving.md'
        )
    return job, _scontrol('show', 'hostnames', nodelist).split()


def job_gpus(job_detail: str, expand) -> dict[str, int]:
    """GPUs the job holds on each node, from ``scontrol show job -d`` (its ``Nodes=... GRES=``
    lines); ``expand`` turns a node list into names."""
    held: dict[str, int] = {}
    for nodes, gres in _NODE_GRES.findall(job_detail):
        count = sum(int(n) for n in _GPU_COUNT.findall(gres))
        for node in expand(nodes):
            held[node] = count
    return held


def assign(specs: list, nodes: list[str], gpus: dict[str, int]) -> list[tuple[str, list[int]]]:
    """For each spec, a node and the positions of its GPUs there: the replicas spread over the
    nodes (the fewest replicas first), none sharing a GPU, the largest placed first so that they
    find room; a refusal where they do not fit."""
    free = {node: deque(range(gpus.get(node, 0))) for node in nodes}
    placed = dict.fromkeys(nodes, 0)
    chosen: dict[int, tuple[str, list[int]]] = {}
    for index in sorted(range(len(specs)), key=lambda i: -specs[i].gpus):
        spec = specs[index]
        fits = [n for n in nodes if len(free[n]) >= spec.gpus]
        if not fits:
            raise ClusterSetupError(
                f'SlurmPlacement: replica {spec.name} needs {spec.gpus} GPUs on one node, and '
                f'no node of the job has that many left ({_describe(gpus, nodes)}) beside the '
                'other replicas: submit the job with more nodes or --gres=gpu:N, or ask for '
                'fewer replicas'
            )
        node = min(fits, key=lambda n: (placed[n], -len(free[n])))
        placed[node] += 1
        chosen[index] = (node, [free[node].popleft() for _ in range(spec.gpus)])
    return [chosen[index] for index in range(len(specs))]


def _describe(gpus: dict[str, int], nodes: list[str]) -> str:
    return ', '.join(f'{node}: {gpus.get(node, 0)} GPUs' for node in nodes)


class SlurmReplica:
    """A replica served by one job step; ``srun`` runs on the driver's machine.

    The step's output is read as bytes and written to the replica's log as it comes: a byte that
    is not UTF-8 is shown as U+FFFD, and a log that cannot be written (a full disk) is left
    aside while the output is still read, so that the server never blocks on a full pipe."""

    def __init__(self, name: str, job: str, node: str, srun: subprocess.Popen, log: IO) -> None:
        self.name, self.job, self.node, self.srun = name, job, node, srun
        self.url, self.where = '', {}
        self.ready = threading.Event()
        self.tail: deque[str] = deque(maxlen=200)
        self.log_problem: Optional[str] = None
        self.stopped = False
        self.code: Any = None
        self.reader = threading.Thread(target=self._read, args=(log,), daemon=True)
        self.reader.start()

    def _read(self, log: IO) -> None:
        """The step's output: the ready line, then the server's output to its log."""
        try:
            for raw in self.srun.stdout:
                line = raw.decode('utf-8', 'replace')
                if not self.ready.is_set() and line.startswith(READY_MARK):
                    self._ready(line[len(READY_MARK) :])
                    continue
                self.tail.append(line)
                self._write(log, line)
        finally:
            with suppress(OSError):
                log.close()

    def _ready(self, text: str) -> None:
        try:
            self.where = json.loads(text)
            self.url = self.where['url'] + '/v1'
        except (ValueError, KeyError, TypeError):
            self.tail.append(f'(a ready line that is not what node_launch prints: {text[:200]})')
            return
        self.ready.set()

    def _write(self, log: IO, line: str) -> None:
        if self.log_problem is not None:
            return
        try:
            log.write(line)
            log.flush()
        except OSError as exc:  # the rest is still read (and kept in the tail)
            self.log_problem = f'its log could not be written ({exc}); its last lines:'

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        text = ''.join(self.tail)[-chars:]
        return f'{self.log_problem}\n{text}' if self.log_problem else text

    def alive(self) -> bool:
        return not self.stopped and self.srun.poll() is None

    def stop(self) -> Any:
        """SIGTERM to the server itself (an engine then frees its shared memory), then the step
        cancelled, then ``srun`` killed, each after a grace period; its exit code."""
        if self.stopped:
            return self.code
        self.stopped = True
        step = f'{self.job}.{self.where["step"]}' if self.where.get('step') else None
        if step:
            self._scancel('--signal=TERM', step)  # to the step's tasks; srun then ends
        else:  # no ready line yet: srun passes SIGTERM on, then ends the step
            with suppress(ProcessLookupError):
                self.srun.terminate()
        for last_resort in (lambda: step and self._scancel(step), self.srun.kill):
            try:
                self.srun.wait(timeout=_STOP_GRACE_S)
                break
            except subprocess.TimeoutExpired:
                last_resort()
        self.code = self.srun.wait()
        return self.code

    @staticmethod
    def _scancel(*argv: str) -> None:
        subprocess.run(['scancel', *argv], capture_output=True, timeout=60)

    def __repr__(self) -> str:
        return f'SlurmReplica({self.name!r}, {self.url or "starting"}, on {self.node})'


class SlurmPlacement:
    """Starts replicas as job steps of the allocation it runs in; ``start_timeout_s`` bounds the
    wait for a step to report its URL; each server's output goes to ``{log_dir}/{name}.log``."""

    def __init__(
        self,
        log_dir: Optional[str] = None,
        start_timeout_s: float = 600,
        python: str = sys.executable,
    ) -> None:
        self.log_dir = Path(log_dir).resolve() if log_dir else None
        self.start_timeout_s = start_timeout_s
        self.python = python
        self.job = ''
        self.places: dict[str, tuple[str, list[int]]] = {}

    def prepare(self, specs: list[ReplicaSpec]) -> list[ReplicaSpec]:
        """Each replica's node and GPUs in the job; a refusal where they do not fit."""
        self.job, nodes = allocation()
        detail = _scontrol('show', 'job', '-d', self.job)
        cpus = job_cpus(detail)
        on_cpu = sum(1 for spec in specs if not spec.gpus)
        if cpus and on_cpu > cpus:
            raise ClusterSetupError(
                f'SlurmPlacement: {on_cpu} CPU replicas, and the job holds {cpus} CPUs: lower '
                f'replicas to at most {cpus}, or submit the job with more CPUs'
            )
        places = assign(specs, nodes, job_gpus(detail, _expand))
        self.places = {spec.name: place for spec, place in zip(specs, places)}
        return specs

    def launch(self, spec: ReplicaSpec) -> SlurmReplica:
        """Its step started and its URL reported; a step that ends or stays silent is stopped
        and named with its output."""
        node, positions = self.places[spec.name]
        replica = self._launch(spec, node, positions)
        try:
            _await_ready(replica, self.start_timeout_s)
        except BaseException:
            replica.stop()
            raise
        replica.where = {'job': self.job, **replica.where}
        return replica

    def close(self) -> None:
        pass

    def _launch(self, spec: ReplicaSpec, node: str, positions: list[int]) -> SlurmReplica:
        command = [
            'srun', '--overlap', f'--jobid={self.job}', '-w', node, '-N1', '-n1',
            f'--job-name=replica-{spec.name}', '--unbuffered',
            self.python, '-m', 'opencompass_lveval.serving.placement.node_launch',
            '--gpus', ','.join(map(str, positions)), '--', *spec.argv,
        ]  # fmt: skip
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f'{spec.name}.log', 'a', encoding='utf-8')  # noqa: SIM115
        else:
            log = open(os.devnull, 'w')  # noqa: SIM115 (the reader thread closes it)
        try:
            srun = subprocess.Popen(
                command,
                env={**os.environ, **spec.env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches the driver, which stops the replicas
                preexec_fn=_end_with_the_driver,
            )
        except BaseException:
            log.close()
            raise
        return SlurmReplica(spec.name, self.job, node, srun, log)


def _end_with_the_driver() -> None:
    """In ``srun``: SIGTERM when the driver dies, on which srun ends its step and exits."""
    die_with_parent(signal.SIGTERM)


def job_cpus(job_detail: str) -> int:
    """CPUs the job holds (``NumCPUs=`` of ``scontrol show job``), 0 where it does not say."""
    found = _NUM_CPUS.search(job_detail)
    return int(found[1]) if found else 0


def _await_ready(replica: SlurmReplica, timeout_s: float) -> None:
    """Wait for the step's ready line; its last output in the error where it never comes."""
    deadline = timeout_s
    while not replica.ready.wait(timeout=min(1.0, deadline)):
        deadline -= 1.0
        ended = replica.srun.poll() is not None
        if ended or deadline <= 0:
            replica.reader.join(timeout=2)  # the last of its output
            what = (
                f'ended ({replica.srun.returncode})'
                if ended
                else f'gave no URL in {timeout_s:.0f} s'
            )
            raise ClusterSetupError(
                f'SlurmPlacement: the step of replica {replica.name} on {replica.node} {what}: '
                + (replica.log_tail(600).strip() or 'no output')
            )


def _expand(nodelist: str) -> list[str]:
    return _scontrol('show', 'hostnames', nodelist).split()
