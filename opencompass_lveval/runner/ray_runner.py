"""An OpenCompass runner that runs each task on a node of a Ray cluster.

OpenCompass 0.5.4 has no Ray runner. This one launches every task of a stage on the Ray cluster at
``address`` (default ``$RAY_ADDRESS``; its head must answer within ``connect_timeout_s``): each
task as one Ray task holding its model's ``run_cfg.num_gpus`` GPUs (Ray gives it
``CUDA_VISIBLE_DEVICES``), ``num_cpus`` CPUs and the ``memory`` and custom ``resources`` set, at
most ``max_num_workers`` in flight, spread over the nodes. A task asking for more than any live
node offers is refused before submission, its log saying why. Like Slurm, it needs the same
Python environment and the run's folder and work folder at the same paths on every node; every
attempt checks them on its node before its task starts, and a node that fails stops the run with
its name and what is missing. One driver per run folder (``run_lock.py``).

Every attempt has a wall-clock deadline (``deadline_s``, counted from its start on the node): a
node cut off from the network leaves its calls hanging for ever, so the node stops the task at the
deadline by its own clock, and the driver, counting on its own clock from when it first saw the
attempt start, gives up on it a little later and runs it again on another node. A node that dies,
or a deadline passed, costs a retry on another node (``retry`` more attempts); a task that fails
by itself (exit code not 0) is not retried. When retries run out, the task's log file and the
run's log name every attempt's node and cause. A node that went silent is kept free of tasks
until it answers a probe (``ray_cluster.NodeWatch``).

Variables named in ``task_env_from`` (an API key, ``HF_TOKEN``) are read from the driver's
environment at launch and given to each task's process; only their names are in the config.

Where each attempt ran (host name, Ray node id, GPUs), how long and how it ended is logged and
kept in the run folder as ``logs/ray_runner.jsonl``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from collections import Counter
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
from ..files.jsonl import journal_records
from ..models.settings import unknown_key_message
from . import on_node
from .outcomes import StageOutcomes
from .processes import CONNECT_TIMEOUT_S, connect_ray
from .quoting import quoting
from .ray_cluster import NodeWatch, describe, positive_finite, unmet
from .refusals import refuse, refuse_gpu_request
from .run_lock import hold_for

# After an attempt's deadline the driver waits this long for the node's own answer before it
# gives the attempt up: the node stops the task at the deadline by its clock, so the next
# attempt never overlaps it.
_GRACE_S = 15.0
_POLL_S = 1.0
_SETTINGS = frozenset(
    {'address', 'max_num_workers', 'retry', 'deadline_s', 'num_cpus', 'memory', 'resources',
     'connect_timeout_s', 'task_env_from', 'debug', 'lark_bot_url', 'keep_tmp_file'}
)  # fmt: skip
_ENV_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')
_RAY_OWN = ('CPU', 'GPU', 'memory', 'object_store_memory')


def _installed_versions() -> list[str]:
    from importlib.metadata import version

    return [version('opencompass'), version('opencompass_lveval')]


@dataclass
class _Task:
    """One OpenCompass task and its attempts so far."""

    task: Any
    config: str  # relative to the folder the run started in, where the node runs it
    attempts: list[dict] = field(default_factory=list)
    record: str = ''  # the current attempt's start record, which its node writes
    submitted: float = 0.0
    seen: float = 0.0  # when the driver first found the start record, by its own clock
    pinned: str = ''  # the node the current attempt was pinned to, if any
    held_since: float = 0.0  # when it began waiting for a node that answers
    _where: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.task.name

    def submit(self, record: str, pinned: str) -> None:
        self.record, self.pinned, self.submitted, self.seen = record, pinned, time.time(), 0.0
        self._where = {}

    def where(self) -> dict:
        """Where the current attempt ran, from its start record (empty until it started); the
        record is read until it is there, then kept."""
        if not self._where:
            try:
                found = json.loads(Path(self.record).read_text(encoding='utf-8'))
            except (OSError, ValueError):
                return {}
            if not isinstance(found, dict):
                return {}
            self._where, self.seen = found, time.time()
        return self._where

    def started(self) -> float:
        """When the driver first saw the current attempt started on its node (the node's own
        deadline began no later), else when it was submitted: a task that waits longer than its
        deadline to start counts as failed too. The driver's clock only: nodes' clocks differ."""
        self.where()
        return self.seen or self.submitted

    def node(self) -> str:
        return self.where().get('node_id') or self.pinned


class _RayLauncher(BaseRunner):
    """The launching of ``RayRunner``, before ``StageOutcomes`` wraps it."""

    def __init__(self, task: ConfigDict, **settings) -> None:
        unknown = sorted(set(settings) - _SETTINGS)
        if unknown:
            raise ModelConfigError(f'RayRunner: {unknown_key_message(unknown[0], _SETTINGS)}')
        super().__init__(
            task=task, debug=settings.get('debug', False), lark_bot_url=settings.get('lark_bot_url')
        )
        self.task_cfg['type'] = quoting(self.task_cfg['type'])
        self.address = settings.get('address')
        self.max_num_workers = _whole(settings.get('max_num_workers', 16), 'max_num_workers', 1)
        self.retry = _whole(settings.get('retry', 2), 'retry', 0)
        self.deadline_s = _positive(settings.get('deadline_s', 86400), 'deadline_s')
        self.num_cpus = _positive(settings.get('num_cpus', 1), 'num_cpus')
        memory = settings.get('memory')
        self.memory = None if memory is None else _positive(memory, 'memory')
        self.resources = _resources(settings.get('resources'))
        self.connect_timeout_s = _positive(
            settings.get('connect_timeout_s', CONNECT_TIMEOUT_S), 'connect_timeout_s'
        )
        self.task_env_from = _names(settings.get('task_env_from'))
        self.keep_tmp_file = bool(settings.get('keep_tmp_file', False))

    def launch(self, tasks: list[dict]) -> list[tuple[str, int]]:
        if not tasks:
            return []
        hold_for(tasks)
        dispatch = None
        try:
            env = self._task_env()
            ray = connect_ray(
                self.address, 'RayRunner', 'address= in the runner config', self.connect_timeout_s
            )
            try:
                dispatch = _Dispatch(self, ray, tasks, env)
                return dispatch.run()
            finally:
                ray.shutdown()
        except ClusterSetupError as exc:
            line = f'ClusterSetupError: {exc}'
            left = dispatch.unfinished() if dispatch else self._built(tasks)
            for task in left:  # where `lveval leaderboard` looks for why a result is missing
                log = Path(task.get_log_path(file_extension='out'))
                log.parent.mkdir(parents=True, exist_ok=True)
                with open(log, 'a', encoding='utf-8') as stream:
                    stream.write(f'{line}\n')
            tasks_left = f'{len(left)} task{"s" * (len(left) != 1)}'
            raise SystemExit(
                f'{line}\nThe run stopped: {tasks_left} of this stage did not run, each log '
                'saying so.'
            ) from None

    def _built(self, tasks: list[dict]) -> list[Any]:
        return [TASKS.build(dict(cfg=cfg, type=self.task_cfg['type'])) for cfg in tasks]

    def _task_env(self) -> dict[str, str]:
        """The variables ``task_env_from`` names, from the driver's environment now; each must
        be set. They travel with each attempt to its node, never to a file."""
        missing = [name for name in self.task_env_from if name not in os.environ]
        if missing:
            raise ClusterSetupError(
                f'RayRunner: task_env_from names {", ".join(missing)}, not set in the environment '
                'of the driver: export it in the shell that runs opencompass (its value goes to '
                'each task, never to a file)'
            )
        return {name: os.environ[name] for name in self.task_env_from}


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
        memory: bytes of memory each task holds on its node (Ray's ``memory``), default none.
        resources: custom Ray resources each task holds (``{'A100': 1}``), default none.
        connect_timeout_s: the longest wait for the cluster's head to answer (default 30 s).
        task_env_from: names of variables passed from the driver's environment to each task.
    """


class _Dispatch:
    """The driver's side of one ``launch``: submits, watches deadlines, retries, records."""

    def __init__(self, runner: RayRunner, ray: Any, tasks: list[dict], env: dict) -> None:
        self.runner, self.ray = runner, ray
        self.logger = get_logger()
        self.work_dir = Path(tasks[0]['work_dir']).resolve()  # nodes start elsewhere
        self.journal = self.work_dir / 'logs' / 'ray_runner.jsonl'
        self.records, skipped = journal_records(self.journal)
        for line in skipped:
            self.logger.warning(f'{line}: left out (the journal is rewritten without it)')
        self.attempts_dir = self.work_dir / 'logs' / 'ray'
        self.attempts_dir.mkdir(parents=True, exist_ok=True)
        mark = {'path': str(self.attempts_dir / 'driver-mark'), 'text': uuid.uuid4().hex}
        write_text(mark['path'], mark['text'])
        Path('tmp').mkdir(exist_ok=True)
        ray.cloudpickle.register_pickle_by_value(on_node)  # nodes run it without the package
        self.tasks = [self._prepare(cfg) for cfg in tasks]
        self.status: dict[str, int] = {}
        # Nodes that went silent (an attempt passed its deadline unanswered), in any stage so
        # far: kept free of tasks until they answer a probe.
        lost = {
            r['node_id']: str(r.get('host', '?'))
            for r in self.records
            if r.get('lost') is True and isinstance(r.get('node_id'), str)
        }
        self.watch = NodeWatch(ray, lost, self.logger.info)
        self.spec = {
            'python': sys.executable,
            'versions': _installed_versions(),
            'cwd': os.getcwd(),
            'work_dir': str(self.work_dir),
            'work_mark': mark,
            'env': env,
        }

    def _prepare(self, cfg: dict) -> _Task:
        task = TASKS.build(dict(cfg=cfg, type=self.runner.task_cfg['type']))
        config = f'tmp/{uuid.uuid4()}_params.py'
        task.cfg.dump(config)
        return _Task(task=task, config=config)

    def request(self, item: _Task) -> dict[str, float]:
        """What one attempt of ``item`` holds on its node, in Ray's resource names."""
        asked = {
            'CPU': self.runner.num_cpus,
            'GPU': item.task.num_gpus,
            'memory': self.runner.memory,
        }
        return {name: v for name, v in {**asked, **self.runner.resources}.items() if v}

    def unfinished(self) -> list[Any]:
        return [item.task for item in self.tasks if item.name not in self.status]

    def run(self) -> list[tuple[str, int]]:
        waiting: list[_Task] = []
        nodes = self.ray.nodes()
        most_gpus = max((n['Resources'].get('GPU', 0) for n in nodes if n['Alive']), default=0)
        for item in self.tasks:
            why = unmet(self.request(item), nodes)
            if item.task.num_gpus > most_gpus:
                self.status[item.name] = refuse_gpu_request(
                    item.task, 'the nodes of the Ray cluster', int(most_gpus)
                )
            elif why:
                self.status[item.name] = refuse(
                    item.task,
                    'ResourceRequestError',
                    f'{item.name} asks for {describe(self.request(item))} (num_cpus, memory and '
                    "resources: the runner's settings; GPUs: the model's run_cfg.num_gpus), but "
                    f'{why}; not submitted. Lower what the runner asks for, or add nodes that '
                    'have it.',
                )
            else:
                waiting.append(item)
        running: dict[Any, _Task] = {}
        progress = tqdm(total=len(waiting), desc='tasks on Ray', unit='task')
        try:
            while waiting or running:
                self.watch.poll()
                self._submit_what_fits(waiting, running, progress)
                ready = []
                if running:
                    ready, _ = self.ray.wait(list(running), num_returns=1, timeout=_POLL_S)
                else:
                    time.sleep(_POLL_S)
                for ref in ready:
                    self._settle(running.pop(ref), self._result(ref), waiting, progress)
                for ref, item in list(running.items()):
                    if time.time() > item.started() + self.runner.deadline_s + _GRACE_S:
                        self.ray.cancel(ref, force=True)
                        outcome = {**item.where(), 'outcome': 'deadline', 'lost': True}
                        self._settle(running.pop(ref), outcome, waiting, progress)
        finally:
            for ref in running:  # Ctrl-C or a setup error: nothing is left running
                self.ray.cancel(ref, force=True)
            self.watch.close()
            progress.close()
            if not self.runner.keep_tmp_file:
                for item in self.tasks:
                    Path(item.config).unlink(missing_ok=True)
        return [(item.name, self.status[item.name]) for item in self.tasks]

    def _submit_what_fits(self, waiting: list, running: dict, progress) -> None:
        """Submit waiting tasks while fewer than ``max_num_workers`` run, each where
        ``NodeWatch`` places it; one that no answering node can take waits, at most
        ``deadline_s``."""
        load = Counter(item.node() for item in running.values())
        for item in list(waiting):
            if len(running) >= self.runner.max_num_workers:
                return
            options = self.watch.place(self.request(item), load)
            if options is None:
                item.held_since = item.held_since or time.time()
                if time.time() - item.held_since > self.runner.deadline_s:
                    waiting.remove(item)
                    silent = ', '.join(sorted(set(self.watch.avoided.values())))
                    error = (
                        f'every node that offers what it asks for went silent ({silent}) and '
                        "none answered within the runner's deadline_s"
                    )
                    self._settle(item, {'outcome': 'no node', 'error': error}, waiting, progress)
                continue
            waiting.remove(item)
            item.held_since = 0.0
            pinned = getattr(options['scheduling_strategy'], 'node_id', '')
            load[pinned] += 1
            running[self._submit(item, options, pinned)] = item

    def _submit(self, item: _Task, placement: dict, pinned: str) -> Any:
        item.submit(str(self.attempts_dir / f'{uuid.uuid4().hex}.json'), pinned)
        options = dict(
            num_gpus=item.task.num_gpus,
            num_cpus=self.runner.num_cpus,
            max_retries=0,
            name=item.name[:200],
            **placement,
        )
        if self.runner.memory:
            options['memory'] = self.runner.memory
        if self.runner.resources:
            options['resources'] = dict(self.runner.resources)
        log = os.path.abspath(item.task.get_log_path(file_extension='out'))
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        spec = {
            **self.spec,
            'command': item.task.get_command(cfg_path=item.config, template='{task_cmd}'),
            'config': os.path.abspath(item.config),
            'log': log,
            'record': item.record,
            'attempt': len(item.attempts) + 1,
            'num_gpus': item.task.num_gpus,
            'deadline_s': self.runner.deadline_s,
        }
        return self.ray.remote(on_node.run_task).options(**options).remote(spec)

    def _result(self, ref: Any) -> dict:
        from ray.exceptions import RayTaskError

        try:
            return self.ray.get(ref)
        except RayTaskError as exc:  # run_task itself raised: a fault of this node's setup
            host = next(
                (
                    node['NodeManagerHostname']
                    for node in self.watch.nodes
                    if node.get('NodeManagerAddress') == getattr(exc, 'ip', None)
                ),
                None,
            )
            error = {'outcome': 'error', 'error': str(exc).strip().splitlines()[-1]}
            return {**error, 'host': host} if host else error
        except self.ray.exceptions.RayError as exc:  # the node or its worker died
            cause = type(exc).__name__
            return {'outcome': 'node lost', 'error': f'{cause}: {str(exc).splitlines()[0]}'}

    def _settle(self, item: _Task, outcome: dict, waiting: list, progress) -> None:
        if outcome['outcome'] in ('node lost', 'error'):
            outcome = {**item.where(), **outcome}
        outcome = {'task': item.name, 'attempt': len(item.attempts) + 1, **outcome}
        item.attempts.append(outcome)
        self._record(outcome)
        kind = outcome['outcome']
        if kind == 'environment':
            raise ClusterSetupError(outcome['error'])
        if outcome.get('lost') and outcome.get('node_id'):
            self.watch.avoid(outcome['node_id'], outcome.get('host', '?'))
        if kind in ('deadline', 'node lost') and len(item.attempts) <= self.runner.retry:
            waiting.append(item)
            return
        code = outcome.get('code', 1) if kind == 'exit' else 1
        if code:
            self._explain_failure(item)
        self.status[item.name] = code
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
            log.write(f'RayTaskLostError: {message}\n')


def _describe(outcome: dict) -> str:
    kind = outcome['outcome']
    if kind == 'exit':
        return f'exit {outcome["code"]}'
    if kind == 'deadline':
        late = ' (no answer from its node)' if outcome.get('lost') else ''
        return f"passed its deadline{late}; raise the runner's deadline_s if it needs longer"
    return f'{kind}: {outcome.get("error", "")}'


def _whole(value: Any, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ModelConfigError(
            f'RayRunner: {name} must be a whole number from {least}, found {value!r}'
        )
    return value


def _positive(value: Any, name: str) -> float:
    if not positive_finite(value):
        raise ModelConfigError(
            f'RayRunner: {name} must be a finite number above 0, found {value!r}'
        )
    return float(value)


def _resources(value: Any) -> dict[str, float]:
    """Custom Ray resources, each a name and a finite amount above 0; Ray's own (CPU, GPU,
    memory) have their own settings."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ModelConfigError(
            f'RayRunner: resources must be a dict of resource names to amounts, such as '
            f"{{'A100': 1}}, found {value!r}"
        )
    for name, amount in value.items():
        if name in _RAY_OWN:
            raise ModelConfigError(
                f'RayRunner: resources names {name!r}, which has its own setting (num_cpus, the '
                "model's run_cfg.num_gpus, memory)"
            )
        _positive(amount, f'resources[{name!r}]')
    return {name: float(amount) for name, amount in value.items()}


def _names(value: Any) -> tuple[str, ...]:
    """Environment variable names, as ``task_env_from`` lists them."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ModelConfigError(
            "RayRunner: task_env_from must be a list of variable names, such as ['HF_TOKEN'], "
            f'found {value!r}'
        )
    for name in value:
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ModelConfigError(
                f'RayRunner: task_env_from holds {name!r}, not a variable name (letters, digits '
                'and _, not starting with a digit); give names only: values are read from the '
                "driver's environment"
            )
    return tuple(value)
