"""``ServeOnceRunner``: the inference stage of ``LongContextVLLM`` models served once per engine.

For the stage's tasks whose models are all ``LongContextVLLM``: every request of every model
config is planned before any weights load (``serving/plan.py``, spread over ``plan_workers``
processes), every config, so that a planning error stops the stage before any GPU is spent.
Then, one engine at a time (configs on the same weights and engine settings, such as
``inputs='official'`` beside ``'exact'``, share one: ``serving/request.py``), ``replicas``
servers start in parallel (``placement``: 'local' processes, 'ray', 'slurm'; kept running by
``serving/supervisor.py``), the requests not yet in the engine's reply store are dispatched to
them longest first (``serving/dispatch.py``) once ``quorum`` are ready; then, where a dataset's
answer takes two calls (``framework/answer_call.py``), each record's second request is planned
from its stored first reply (``plan.AnswerPair``) and dispatched to the same replicas; and the
replicas stop.
The prediction files are then written by the ordinary inference tasks, run by the inner
``runner``, with each such model's type set to ``ServedVLLM``, which answers from the store: the
files are those of an in-process run, and evaluation, summary and reports are unchanged. Other
tasks go to the inner runner as they are.

A restarted run (``-r``) asks only what is not in the store (``{work_dir}/serve/replies``): what
was in flight when it stopped, in either round; how many replies it reuses is said. Plans:
``{work_dir}/serve/plans/``; replica logs and their journal: ``{work_dir}/logs/serve/{model}/``;
what each dispatch did: ``{work_dir}/serve/{model}.dispatch.json`` (the second calls':
``{model}.answers.dispatch.json``).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import os.path as osp
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from opencompass.registry import RUNNERS
from opencompass.runners.base import BaseRunner
from opencompass.utils import get_logger

from ..files.atomic import write_text
from ..files.errors import ModelConfigError
from ..models.settings import unknown_key_message
from ..models.vllm import LongContextVLLM
from .infer_task import check_before_weights, model_class
from .local import CheckedLocalRunner
from .run_lock import hold_for

SERVED_TYPE = 'opencompass_lveval.serving.served.ServedVLLM'
COST_MODELS = ('linear', 'quadratic')
DEFAULTS = {
    'replicas': 1,
    'placement': 'local',
    'placement_settings': None,
    'cap_tokens': None,
    'request_deadline_s': 1800.0,
    'ready_timeout_s': 1800.0,
    'cost_model': 'linear',
    'replica_env': None,
    'replica_env_from': None,
    'runner': None,
    'server_argv': None,
    'quorum': 1,
    'max_restarts': 3,
    'restart_backoff_s': 2.0,
    'senders': 64,
    'max_reply_bytes': 16 * 2**20,
    'plan_workers': None,
}


def _number(value: Any, least: float = 0) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > least


def _count(value: Any, least: int = 1) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _text_dict(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    )


def _texts(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, str) for v in value)
    )


RULES = {
    'replicas': ('a whole number >= 1: servers started per model', _count),
    'cap_tokens': (
        "None (the engine's KV capacity) or a whole number >= 1: tokens in flight per replica",
        lambda value: value is None or _count(value),
    ),
    'request_deadline_s': ('a number of seconds > 0: the time one reply may take', _number),
    'ready_timeout_s': ('a number of seconds > 0: the time a replica may take to load', _number),
    'cost_model': (f'one of {COST_MODELS}', lambda value: value in COST_MODELS),
    'replica_env': ('a dict of str to str: environment of each replica', _text_dict),
    'replica_env_from': (
        "a list of environment variable names read from this shell (['HF_TOKEN'])",
        lambda v: v is None or _texts(v),
    ),
    'placement_settings': (
        "a dict of the placement's own settings",
        lambda v: v is None or isinstance(v, dict),
    ),
    'runner': (
        'a runner config dict: what runs the materialising tasks',
        lambda v: v is None or isinstance(v, dict),
    ),
    'server_argv': (
        "None (vLLM's server) or a list of strings, the command of a server standing in for it "
        "(['python', '-m', 'my.server', '--port', '{port}']; never one string)",
        lambda v: v is None or _texts(v),
    ),
    'quorum': ('a whole number >= 1: replicas ready before dispatch begins', _count),
    'max_restarts': (
        'a whole number >= 0: restarts of a replica that exits',
        lambda v: _count(v, 0),
    ),
    'restart_backoff_s': (
        'a number of seconds >= 0: the wait before the first restart, doubled at each',
        lambda v: v == 0 or _number(v),
    ),
    'senders': ('a whole number >= 1: requests one replica holds at once at most', _count),
    'max_reply_bytes': (
        'a whole number >= 1024: the most of one reply that is read',
        lambda v: _count(v, 1024),
    ),
    'plan_workers': (
        'None (up to 8, one per core) or a whole number >= 1: processes that plan',
        lambda v: v is None or _count(v),
    ),
}


def check_settings(settings: dict) -> dict:
    """The runner's settings with their defaults, or an error naming a misspelled or impossible
    one and what it must be."""
    from ..serving.environment import check_replica_env
    from ..serving.placement import placement_class

    for key in settings:
        if key not in DEFAULTS:
            raise ModelConfigError(f'ServeOnceRunner: {unknown_key_message(key, DEFAULTS)}')
    merged = {**DEFAULTS, **settings}
    for key, (what, good) in RULES.items():
        if not good(merged[key]):
            raise ModelConfigError(f'ServeOnceRunner: {key} must be {what}, not {merged[key]!r}')
    if merged['quorum'] > merged['replicas']:
        raise ModelConfigError(
            f'ServeOnceRunner: quorum={merged["quorum"]} is more than replicas='
            f'{merged["replicas"]}: dispatch begins once quorum replicas are ready'
        )
    check_replica_env(dict(merged['replica_env'] or {}), list(merged['replica_env_from'] or []))
    try:
        placement_class(merged['placement'])
    except ModelConfigError as exc:
        raise ModelConfigError(f'ServeOnceRunner: {exc}') from None
    return merged


def is_served(model_cfg: dict) -> bool:
    """Whether a model is served by this runner: ``LongContextVLLM`` itself."""
    return model_class(model_cfg) is LongContextVLLM


@dataclass
class ConfigPlan:
    """A model config of the stage: its engine, its plan's folder and its datasets."""

    model_cfg: dict
    engine: str
    folder: str
    datasets: dict[str, dict] = field(default_factory=dict)


@RUNNERS.register_module()
class ServeOnceRunner(BaseRunner):
    """See the module. Settings (docs/serving.md): ``replicas``, ``placement`` ('local', 'ray',
    'slurm') and ``placement_settings``, ``quorum``, ``max_restarts``, ``restart_backoff_s``,
    ``cap_tokens``, ``senders``, ``request_deadline_s``, ``ready_timeout_s``,
    ``max_reply_bytes``, ``cost_model`` ('linear' or 'quadratic': ``serving/plan.py``),
    ``plan_workers``, ``replica_env`` and ``replica_env_from`` (secrets, by name),
    ``server_argv`` (a stand-in server in place of vLLM's, for tests and benchmarks), and
    ``runner``, the runner of the materialising and other tasks (``CheckedLocalRunner`` by
    default)."""

    def __init__(self, task: dict, debug: bool = False, lark_bot_url=None, **settings) -> None:
        super().__init__(task=task, debug=debug, lark_bot_url=lark_bot_url)
        self.settings = check_settings(settings)
        inner = dict(self.settings['runner'] or dict(type=CheckedLocalRunner, max_num_workers=1))
        self.inner = RUNNERS.build({**inner, 'task': task, 'debug': debug})

    def launch(self, tasks: list) -> list:
        hold_for(tasks)  # before any replica starts: a second driver would serve it all again
        served = [t for t in tasks if t['models'] and all(is_served(m) for m in t['models'])]
        others = [t for t in tasks if t not in served]
        if served:
            served = self.serve(served)
        return list(self.inner.launch(served + others))

    def serve(self, tasks: list) -> list:
        """Plan every model config, then start, dispatch and stop for each engine; the tasks
        rewritten to materialise from the stores."""
        work_dir = tasks[0]['work_dir']
        configs = self.plan(tasks, work_dir)
        engines: dict[str, list[ConfigPlan]] = {}
        for config in configs.values():
            engines.setdefault(config.engine, []).append(config)
        for engine, group in engines.items():
            self.serve_engine(work_dir, engine, group)
        return [materialising(task, work_dir, configs) for task in tasks]

    def plan(self, tasks: list, work_dir: str) -> dict[str, ConfigPlan]:
        """Every request of every model config of ``tasks``, on disk (``serving/plan.py``);
        the configs by their digest."""
        from ..serving.plan import PairJob, RenderedPair, config_digest, plan_stage
        from ..serving.request import engine_identity

        settings, logger = self.settings, get_logger()
        configs: dict[str, ConfigPlan] = {}
        for task in tasks:
            for model_cfg, dataset_cfgs in zip(task['models'], task['datasets']):
                check_before_weights(model_cfg, dataset_cfgs)
                name = config_digest(model_cfg)
                if name not in configs:
                    engine = engine_identity(
                        model_cfg,
                        settings['server_argv'],
                        dict(settings['replica_env'] or {}),
                        tuple(settings['replica_env_from'] or ()),
                    )
                    folder = osp.join(work_dir, 'serve', 'plans', f'{engine}-{name}')
                    configs[name] = ConfigPlan(model_cfg, engine, folder)
                for dataset_cfg in dataset_cfgs:
                    configs[name].datasets.setdefault(config_digest(dataset_cfg), dataset_cfg)
        jobs = []
        for config in configs.values():
            square = self.square(config)
            for dataset_name, dataset_cfg in config.datasets.items():
                source = RenderedPair(config.model_cfg, dataset_cfg)
                jobs.append(PairJob(source, config.folder, dataset_name, config.engine, square))
        workers = self.workers()
        if settings['placement'] == 'ray':
            planned = self.plan_on_the_cluster(jobs)
        else:
            planned = plan_stage(jobs, workers)
        logger.info(
            f'planned {sum(p.requests for p in planned)} requests of {len(configs)} model configs '
            f'({sum(p.tokens for p in planned)} prompt tokens) in {len(jobs)} pairs, by '
            f'{len({(p.host, p.pid) for p in planned})} processes on '
            f'{len({p.host for p in planned})} hosts'
        )
        return configs

    def plan_on_the_cluster(self, jobs: list) -> list:
        """The jobs as Ray tasks on the placement's cluster (``plan.plan_on_ray``)."""
        import ray

        from ..serving.plan import plan_on_ray
        from .processes import connect_ray

        connected = not ray.is_initialized()
        if connected:
            address = (self.settings['placement_settings'] or {}).get('address')
            connect_ray(address, 'ServeOnceRunner', 'placement_settings=dict(address=...)')
        try:
            return plan_on_ray(jobs, ray)
        finally:
            if connected:  # the placement connects afresh for the replicas
                ray.shutdown()

    def square(self, config: ConfigPlan) -> Optional[float]:
        """The square term of a config's request costs (``cost_model``)."""
        from ..serving.plan import quadratic_cost

        if self.settings['cost_model'] == 'quadratic':
            return quadratic_cost(config.model_cfg['path'])
        return None

    def workers(self) -> int:
        return self.settings['plan_workers'] or min(8, os.cpu_count() or 1)

    def serve_engine(self, work_dir: str, engine: str, configs: list[ConfigPlan]) -> None:
        """Start an engine's replicas once something is to be asked, dispatch what its store
        lacks, then plan and dispatch the second calls of its two-call answers from the stored
        first replies, and stop them; what -r reuses is said."""
        from ..serving.plan import plan_jobs

        supervisor = self.supervisor(work_dir, engine, configs[0].model_cfg)
        with contextlib.ExitStack() as running:
            started: list = []

            def start() -> None:  # by the first round with something to ask
                if not started:
                    started.append(running.enter_context(supervisor))

            self.dispatch_round(work_dir, engine, configs, 'first', supervisor, start)
            jobs = self.answer_jobs(work_dir, engine, configs)
            if jobs:
                planned = plan_jobs(jobs, self.workers())
                get_logger().info(
                    f'planned {sum(p.requests for p in planned)} answer calls of {len(jobs)} '
                    'two-call pairs from their stored first replies'
                )
                self.dispatch_round(work_dir, engine, configs, 'answer', supervisor, start)

    def answer_jobs(self, work_dir: str, engine: str, configs: list[ConfigPlan]) -> list:
        """The planning of every two-call pair's second calls (``plan.AnswerPair``)."""
        from ..framework.answer_call import answer_call_of
        from ..serving.plan import AnswerPair, PairJob
        from ..serving.request import served_model_name

        jobs, store = [], store_folder(work_dir, engine)
        for config in configs:
            for name, dataset_cfg in config.datasets.items():
                if answer_call_of(dataset_cfg) is not None:
                    source = AnswerPair(
                        config.model_cfg,
                        dataset_cfg,
                        config.folder,
                        name,
                        store,
                        served_model_name(engine),
                    )
                    square = self.square(config)
                    jobs.append(PairJob(source, config.folder, f'{name}.answers', engine, square))
        return jobs

    def dispatch_round(
        self,
        work_dir: str,
        engine: str,
        configs: list[ConfigPlan],
        call: str,
        replicas: Any,
        start: Callable[[], None],
    ) -> None:
        """Dispatch the planned requests of ``call`` ('first', or 'answer': the second calls)
        that the store lacks to ``replicas``, a supervisor that ``start`` starts where it is
        needed (once for both rounds)."""
        from ..serving.dispatch import Dispatcher, DispatchSettings
        from ..serving.plan import planned_requests
        from ..serving.replicas import kv_capacity
        from ..serving.request import served_model_name
        from ..serving.store import ReplyStore

        settings, logger = self.settings, get_logger()
        abbr = configs[0].model_cfg['abbr']
        names = ', '.join(sorted({c.model_cfg['abbr'] for c in configs}))
        what = 'requests' if call == 'first' else 'answer calls'
        folders = [c.folder for c in configs]
        requests = planned_requests(folders, served_model_name(engine), call)
        chosen = DispatchSettings(
            request_deadline_s=settings['request_deadline_s'],
            cap_tokens=settings['cap_tokens'],
            quorum=settings['quorum'],
            senders=settings['senders'],
            max_reply_bytes=settings['max_reply_bytes'],
            progress=lambda done, total: logger.info(f'{abbr}: {done} of {total} {what} answered'),
        )
        store = ReplyStore(store_folder(work_dir, engine))
        dispatcher = Dispatcher(requests, store, replicas, chosen, capacity=kv_capacity)
        reused = dispatcher.report.skipped
        logger.info(
            f'{names}: {len(requests)} {what} planned; '
            + (
                f'{reused} answered by an earlier run of this folder, reused and not asked '
                'again (-r); '
                if reused
                else ''
            )
            + f'{dispatcher.total} to serve'
        )
        if not dispatcher.total:
            return
        start()
        report = dispatcher.run()
        record = {'planned': len(requests), **dataclasses.asdict(report)}
        name = f'{abbr}.dispatch.json' if call == 'first' else f'{abbr}.answers.dispatch.json'
        write_text(osp.join(work_dir, 'serve', name), json.dumps(record))
        logger.info(
            f'{names}: served {report.answered} {what} in {report.seconds:.1f} s '
            f'({report.scheduling_s:.2f} s deciding)'
        )

    def supervisor(self, work_dir: str, engine: str, model_cfg: dict) -> Any:
        """The replicas of an engine, not started yet: their specs (the secrets given by name
        read from this shell now), the placement, the restarts."""
        from ..serving.environment import from_driver
        from ..serving.placement import placement_class
        from ..serving.replicas import replica_specs
        from ..serving.request import served_model_name
        from ..serving.supervisor import Supervisor

        settings = self.settings
        env = {**(settings['replica_env'] or {}), **from_driver(settings['replica_env_from'] or [])}
        specs = replica_specs(
            model_cfg,
            served_model_name(engine),
            settings['replicas'],
            env,
            use_gpus=bool((model_cfg.get('run_cfg') or {}).get('num_gpus')),
            server_argv=settings['server_argv'],
        )
        placement = placement_class(settings['placement'])(
            log_dir=osp.join(work_dir, 'logs', 'serve', model_cfg['abbr']),
            **(settings['placement_settings'] or {}),
        )
        return Supervisor(
            placement,
            specs,
            settings['ready_timeout_s'],
            settings['max_restarts'],
            settings['restart_backoff_s'],
        )


def store_folder(work_dir: str, engine: str) -> str:
    return osp.join(work_dir, 'serve', 'replies', engine)


def materialising(task: dict, work_dir: str, configs: dict[str, ConfigPlan]) -> dict:
    """The task with each model answering from its reply store and plan, on no GPU."""
    from ..serving.plan import config_digest

    task = copy.deepcopy(task)
    for model_cfg in task['models']:
        config = configs[config_digest(model_cfg)]
        model_cfg['type'] = SERVED_TYPE
        model_cfg['reply_store'] = store_folder(work_dir, config.engine)
        model_cfg['served_identity'] = config.engine
        model_cfg['served_plan'] = config.folder
        model_cfg['run_cfg'] = {**(model_cfg.get('run_cfg') or {}), 'num_gpus': 0}
    return task
