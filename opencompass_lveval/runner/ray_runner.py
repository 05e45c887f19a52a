"""An OpenCompass runner that runs each task on a node of a Ray cluster.

OpenCompass 0.5.4 has no Ray runner. This one launches every task of a stage on the Ray cluster at
``address`` (default ``$RAY_ADDRESS``): each task as one Ray task holding its model's
``run_cfg.num_gpus`` GPUs (Ray gives it ``CUDA_VISIBLE_DEVICES``), at most ``max_num_workers`` in
flight, spread over the nodes. Like Slurm, it needs the same Python environment and the run's
folder at the same path on every node; every attempt checks both on its node before its task
starts, and stops the run with the node's name if either is missing.

Every attempt has a wall-clock deadline (``deadline_s``, counted from its start on the node): a
node cut off from the network leaves its calls hanging for ever, so the node stops the task at the
deadline by its own clock, and the driver gives up on it a little later and runs it again on
another node. A node that dies, or a deadline passed, costs a retry on another node (``retry``
more attempts); a task that fails by itself (exit code not 0) is not retried. When retries run
out, the task's log file and the run's log name every attempt's node and cause.

Where each attempt ran (host name, Ray node id, GPUs), how long and how it ended is logged and
kept in the run folder as ``logs/ray_runner.jsonl``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmengine.config import ConfigDict
from opencompass.registry import RUNNERS, TASKS
from opencompass.runners.base import BaseRunner
from opencompass.utils import get_logger
from tqdm import tqdm

from ..files.atomic import write_text
from ..files.errors import ClusterSetupError, ModelConfigError
from ..models.settings import unknown_key_message
from .on_node import run_task
from .outcomes import StageOutcomes
from .processes import connect_ray
from .refusals import refuse_gpu_request

# After an attempt's deadline the driver waits this long for the node's own answer before it
# gives the attempt up: the node stops the task at the deadline by its clock, so the next
# attempt never overlaps it.
_GRACE_S = 15.0
_POLL_S = 1.0
_SETTINGS = frozenset(
    {'address', 'max_num_workers', 'retry', 'deadline_s', 'num_cpus', 'debug', 'lark_bot_url',
     'keep_tmp_file'}
)  # fmt: skip


def _installed_versions() -> list[str]:
    from importlib.metadata import version

    return [version('opencompass'), version('opencompass_lveval')]


@dataclass
class _Task:
    """One OpenCompass task and its attempts so far."""

    task: Any
    config: str
    attempts: list[dict] = field(default_factory=list)
    record: str = ''  # the current attempt's start record, which its node writes
    submitted: float = 0.0
    _where: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.task.name

    def submit(self, record: str) -> None:
        self.record, self.submitted, self._where = record, time.time(), {}

    def where(self) -> dict:
        """Where the current attempt ran, from its start record (empty until it started); the
        record is read until it is there, then kept."""
        if not self._where:
            try:
                self._where = json.loads(Path(self.record).read_text())
            except (OSError, ValueError):
                return {}
        return self._where

    def started(self) -> float:
        """When the current attempt started on its node, else when it was submitted: a task
        that waits longer than its deadline to start counts as failed too."""
        return self.where().get('started', self.submitted)


class _RayLauncher(BaseRunner):
    """The launching of ``RayRunner``, before ``StageOutcomes`` wraps it."""

    def __init__(self, task: ConfigDict, **settings) -> None:
        unknown = sorted(set(settings) - _SETTINGS)
        if unknown:
            raise ModelConfigError(f'RayRunner: {unknown_key_message(unknown[0], _SETTINGS)}')
        super().__init__(
            task=task, debug=settings.get('debug', False), lark_bot_url=settings.get('lark_bot_url')
        )
        self.address = settings.get('address')
        self.max_num_workers = _whole(settings.get('max_num_workers', 16), 'max_num_workers', 1)
        self.retry = _whole(settings.get('retry', 2), 'retry', 0)
        self.deadline_s = _positive(settings.get('deadline_s', 86400), 'deadline_s')
        self.num_cpus = _positive(settings.get('num_cpus', 1), 'num_cpus')
        self.keep_tmp_file = bool(settings.get('keep_tmp_file', False))

    def launch(self, tasks: list[dict]) -> list[tuple[str, int]]:
        if not tasks:
            return []
        ray = connect_ray(self.address, 'RayRunner', 'address= in the runner config')
        try:
            return _Dispatch(self, ray, tasks).run()
        finally:
            ray.shutdown()


@RUNNERS.register_module()
class RayRunner(StageOutcomes, _RayLauncher):
    """Runs OpenCompass tasks on a Ray cluster; see the module's docstring. With
    ``StageOutcomes``: no evaluation task for a dataset without predictions.

    Args:
        task: the task type, as for every OpenCompass runner.
        address: the Ray cluster (``head:6379``); default ``$RAY_ADDRESS``.
        max_num_workers: tasks in flight at most; keep it at what the cluster can run at once.
        retry: further attempts after a node died or a deadline passed.
        deadline_s: the most one attempt may run (default a day).
        num_cpus: CPUs each task holds on its node.
    """


class _Dispatch:
    """The driver's side of one ``launch``: submits, watches deadlines, retries, records."""

    def __init__(self, runner: RayRunner, ray: Any, tasks: list[dict]) -> None:
        self.runner, self.ray = runner, ray
        self.logger = get_logger()
        self.work_dir = Path(tasks[0]['work_dir']).resolve()  # nodes start elsewhere
        self.journal = self.work_dir / 'logs' / 'ray_runner.jsonl'
        self.records = _read_journal(self.journal)
        self.attempts_dir = self.work_dir / 'logs' / 'ray'
        self.attempts_dir.mkdir(parents=True, exist_ok=True)
        Path('tmp').mkdir(exist_ok=True)
        self.tasks = [self._prepare(cfg) for cfg in tasks]
        # Nodes that went silent (an attempt passed its deadline unanswered), in any stage so far.
        self.avoid = {r['node_id'] for r in self.records if r.get('lost') and r.get('node_id')}
        self.node_gpus = max(
            (node['Resources'].get('GPU', 0) for node in ray.nodes() if node['Alive']), default=0
        )
        self.spec = {
            'python': sys.executable,
            'versions': _installed_versions(),
            'cwd': os.getcwd(),
        }

    def _prepare(self, cfg: dict) -> _Task:
        task = TASKS.build(dict(cfg=cfg, type=self.runner.task_cfg['type']))
        config = os.path.abspath(f'tmp/{uuid.uuid4()}_params.py')
        task.cfg.dump(config)
        return _Task(task=task, config=config)

    def run(self) -> list[tuple[str, int]]:
        status: dict[str, int] = {}
        waiting = deque()
        for item in self.tasks:
            if item.task.num_gpus > self.node_gpus:
                status[item.name] = refuse_gpu_request(
                    item.task, 'the nodes of the Ray cluster', int(self.node_gpus)
                )
            else:
                waiting.append(item)
        running: dict[Any, _Task] = {}
        progress = tqdm(total=len(waiting), desc='tasks on Ray', unit='task')
        try:
            while waiting or running:
                while waiting and len(running) < self.runner.max_num_workers:
                    item = waiting.popleft()
                    running[self._submit(item)] = item
                ready, _ = self.ray.wait(list(running), num_returns=1, timeout=_POLL_S)
                for ref in ready:
                    self._settle(running.pop(ref), self._result(ref), waiting, status, progress)
                for ref, item in list(running.items()):
                    if time.time() > item.started() + self.runner.deadline_s + _GRACE_S:
                        self.ray.cancel(ref, force=True)
                        outcome = {**item.where(), 'outcome': 'deadline', 'lost': True}
                        self._settle(running.pop(ref), outcome, waiting, status, progress)
        finally:
            for ref in running:  # Ctrl-C or a setup error: nothing is left running
                self.ray.cancel(ref, force=True)
            progress.close()
            if not self.runner.keep_tmp_file:
                for item in self.tasks:
                    Path(item.config).unlink(missing_ok=True)
        return [(item.name, status[item.name]) for item in self.tasks]

    def _submit(self, item: _Task) -> Any:
        item.submit(str(self.attempts_dir / f'{uuid.uuid4().hex}.json'))
        options = dict(
            num_gpus=item.task.num_gpus,
            num_cpus=self.runner.num_cpus,
            max_retries=0,
            name=item.name[:200],
            scheduling_strategy='SPREAD',
        )
        if self.avoid:
            options['label_selector'] = {'ray.io/node-id': f'!in({",".join(sorted(self.avoid))})'}
        log = os.path.abspath(item.task.get_log_path(file_extension='out'))
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        spec = {
            **self.spec,
            'command': item.task.get_command(cfg_path=item.config, template='{task_cmd}'),
            'config': item.config,
            'log': log,
            'record': item.record,
            'attempt': len(item.attempts) + 1,
            'num_gpus': item.task.num_gpus,
            'deadline_s': self.runner.deadline_s,
        }
        return self.ray.remote(run_task).options(**options).remote(spec)

    def _result(self, ref: Any) -> dict:
        from ray.exceptions import RayTaskError

        try:
            return self.ray.get(ref)
        except RayTaskError as exc:  # run_task itself raised: a fault of this node's setup
            return {'outcome': 'error', 'error': str(exc).strip().splitlines()[-1]}
        except self.ray.exceptions.RayError as exc:  # the node or its worker died
            cause = type(exc).__name__
            return {'outcome': 'node lost', 'error': f'{cause}: {str(exc).splitlines()[0]}'}

    def _settle(self, item: _Task, outcome: dict, waiting, status, progress) -> None:
        if outcome['outcome'] in ('node lost', 'error'):
            outcome = {**item.where(), **outcome}
        outcome = {'task': item.name, 'attempt': len(item.attempts) + 1, **outcome}
        item.attempts.append(outcome)
        self._record(outcome)
        kind = outcome['outcome']
        if kind == 'environment':
            raise ClusterSetupError(outcome['error'])
        if outcome.get('lost') and outcome.get('node_id'):
            self.avoid.add(outcome['node_id'])
        if kind in ('deadline', 'node lost') and len(item.attempts) <= self.runner.retry:
            waiting.append(item)
            return
        code = outcome.get('code', 1) if kind == 'exit' else 1
        if code:
            self._explain_failure(item)
        status[item.name] = code
        progress.update()

    def _record(self, outcome: dict) -> None:
        node = outcome.get('host', 'a node it never reached')
        gpus = outcome.get('gpus') or 'none'
        took = f' in {outcome["seconds"]:.1f} s' if 'seconds' in outcome else ''
        self.logger.info(
            f'{outcome["task"]} attempt {outcome["attempt"]} on {node} '
            f'(Ray node {str(outcome.get("node_id", "?"))[:12]}, GPUs {gpus}){took}: '
            + _describe(outcome)
        )
        self.records.append(outcome)
        write_text(self.journal, ''.join(json.dumps(r) + '\n' for r in self.records))

    def _explain_failure(self, item: _Task) -> None:
        last = item.attempts[-1]
        if last['outcome'] == 'exit':
            self.logger.error(f'task {item.name} fail, see\n{item.task.get_log_path("out")}')
            return
        causes = '; '.join(
            f'attempt {a["attempt"]} on {a.get("host", "no node")}: {_describe(a)}'
            for a in item.attempts
        )
        message = (
            f'{item.name} failed on the Ray cluster after {len(item.attempts)} attempts: {causes}'
        )
        self.logger.error(message)
        with open(item.task.get_log_path('out'), 'a', encoding='utf-8') as log:
            log.write(f'RayTaskLost: {message}\n')


def _describe(outcome: dict) -> str:
    kind = outcome['outcome']
    if kind == 'exit':
        return f'exit {outcome["code"]}'
    if kind == 'deadline':
        late = ' (no answer from its node)' if outcome.get('lost') else ''
        return f"passed its deadline{late}; raise the runner's deadline_s if it needs longer"
    return f'{kind}: {outcome.get("error", "")}'


def _read_journal(path: Path) -> list[dict]:
    """The records of earlier stages of this run (a cut last line is dropped)."""
    records = []
    if path.is_file():
        for line in path.read_text(encoding='utf-8').splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def _whole(value: Any, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ModelConfigError(
            f'RayRunner: {name} must be a whole number from {least}, found {value!r}'
        )
    return value


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ModelConfigError(f'RayRunner: {name} must be a number above 0, found {value!r}')
    return float(value)
