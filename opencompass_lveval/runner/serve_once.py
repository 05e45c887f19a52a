"""``ServeOnceRunner``: the inference stage of ``LongContextVLLM`` models served once per model.

For the stage's tasks whose models are all ``LongContextVLLM``: every request of every task is
planned before any weights load (``serving/plan.py``); then, one model at a time, ``replicas``
vLLM servers start (``placement``: 'local' processes, 'ray', 'slurm'), the requests not yet in
the model's reply store are dispatched to them longest first (``serving/dispatch.py``), and the
replicas stop. The prediction files are then written by the ordinary inference tasks, run by
the inner ``runner``, with each such model's type set to ``ServedVLLM``, which answers from the
store: the files are those of an in-process run, and evaluation, summary and reports are
unchanged. Other tasks go to the inner runner as they are.

A restarted run (``-r``) asks only what is not in the store (``{work_dir}/serve/replies``): what
was in flight when it stopped. Replica logs: ``{work_dir}/logs/serve/{model}/``; what each
dispatch did: ``{work_dir}/serve/{model}.dispatch.json``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os.path as osp
from typing import Any

from opencompass.registry import RUNNERS
from opencompass.runners.base import BaseRunner
from opencompass.utils import get_logger

from ..files.atomic import write_text
from ..files.errors import ModelConfigError
from ..models.settings import unknown_key_message
from ..models.vllm import LongContextVLLM
from .infer_task import check_before_weights, model_class
from .local import CheckedLocalRunner

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
    'runner': None,
    'server_argv': None,
}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _text_dict(value: Any) -> bool:
    return value is None or (
        isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    )


RULES = {
    'replicas': ('a whole number >= 1: servers started per model', _count),
    'cap_tokens': (
        "None (the engine's KV capacity) or a whole number >= 1: tokens in flight per replica",
        lambda value: value is None or _count(value),
    ),
    'request_deadline_s': ('a number of seconds > 0: the time one reply may take', _number),
    'ready_timeout_s': ('a number of seconds > 0: the time replicas may take to load', _number),
    'cost_model': (f'one of {COST_MODELS}', lambda value: value in COST_MODELS),
    'replica_env': ('a dict of str to str: environment of each replica', _text_dict),
    'placement_settings': (
        "a dict of the placement's own settings",
        lambda v: v is None or isinstance(v, dict),
    ),
    'runner': (
        'a runner config dict: what runs the materialising tasks',
        lambda v: v is None or isinstance(v, dict),
    ),
}


def check_settings(settings: dict) -> dict:
    """The runner's settings with their defaults, or an error naming a misspelled or impossible
    one and what it must be."""
    from ..serving.replicas import placement_class

    for key in settings:
        if key not in DEFAULTS:
            raise ModelConfigError(f'ServeOnceRunner: {unknown_key_message(key, DEFAULTS)}')
    merged = {**DEFAULTS, **settings}
    for key, (what, good) in RULES.items():
        if not good(merged[key]):
            raise ModelConfigError(f'ServeOnceRunner: {key} must be {what}, not {merged[key]!r}')
    try:
        placement_class(merged['placement'])
    except ModelConfigError as exc:
        raise ModelConfigError(f'ServeOnceRunner: {exc}') from None
    return merged


def is_served(model_cfg: dict) -> bool:
    """Whether a model is served by this runner: ``LongContextVLLM`` itself."""
    return model_class(model_cfg) is LongContextVLLM


@RUNNERS.register_module()
class ServeOnceRunner(BaseRunner):
    """See the module. Settings: ``replicas``, ``placement`` ('local', 'ray', 'slurm') and
    ``placement_settings``, ``cap_tokens``, ``request_deadline_s``, ``ready_timeout_s``,
    ``cost_model`` ('linear' or 'quadratic': ``serving/plan.py``), ``replica_env``,
    ``server_argv`` (a stand-in server in place of vLLM's, for tests and benchmarks), and
    ``runner``, the runner of the materialising and other tasks (``CheckedLocalRunner`` by
    default)."""

    def __init__(self, task: dict, debug: bool = False, lark_bot_url=None, **settings) -> None:
        super().__init__(task=task, debug=debug, lark_bot_url=lark_bot_url)
        self.settings = check_settings(settings)
        inner = dict(self.settings['runner'] or dict(type=CheckedLocalRunner, max_num_workers=1))
        self.inner = RUNNERS.build({**inner, 'task': task, 'debug': debug})

    def launch(self, tasks: list) -> list:
        served = [t for t in tasks if t['models'] and all(is_served(m) for m in t['models'])]
        others = [t for t in tasks if t not in served]
        if served:
            served = self.serve(served)
        return list(self.inner.launch(served + others))

    def serve(self, tasks: list) -> list:
        """Plan, start, dispatch and stop for each model of ``tasks``; the tasks rewritten to
        materialise from the stores."""
        from ..serving.plan import model_identity

        work_dir = tasks[0]['work_dir']
        by_model: dict[str, tuple[dict, list]] = {}
        for task in tasks:
            for model_cfg, dataset_cfgs in zip(task['models'], task['datasets']):
                check_before_weights(model_cfg, dataset_cfgs)
                entry = by_model.setdefault(model_identity(model_cfg), (model_cfg, []))
                entry[1].extend(dataset_cfgs)
        for identity, (model_cfg, dataset_cfgs) in by_model.items():
            self.serve_model(work_dir, identity, model_cfg, dataset_cfgs)
        return [materialising(task, work_dir) for task in tasks]

    def serve_model(self, work_dir: str, identity: str, model_cfg: dict, datasets: list) -> None:
        from ..serving.dispatch import dispatch
        from ..serving.plan import plan_model, served_model_name
        from ..serving.replicas import placement_class, replica_specs, serving
        from ..serving.store import ReplyStore

        settings, abbr, logger = self.settings, model_cfg['abbr'], get_logger()
        requests = plan_model(model_cfg, datasets, settings['cost_model'])
        store = ReplyStore(store_folder(work_dir, identity))
        pending = [r for r in requests if not store.has(r.key)]
        logger.info(
            f'{abbr}: {len(requests)} requests planned, {len(requests) - len(pending)} answered '
            f'before; {sum(r.cost for r in pending)} tokens of work to serve'
        )
        if not pending:
            return
        specs = replica_specs(
            model_cfg,
            served_model_name(identity),
            settings['replicas'],
            dict(settings['replica_env'] or {}),
            use_gpus=bool((model_cfg.get('run_cfg') or {}).get('num_gpus')),
            server_argv=settings['server_argv'],
        )
        log_dir = osp.join(work_dir, 'logs', 'serve', abbr)
        placement = placement_class(settings['placement'])(
            log_dir=log_dir, **(settings['placement_settings'] or {})
        )
        with serving(placement, specs, settings['ready_timeout_s']) as replicas:
            cap = settings['cap_tokens'] or engine_capacity(replicas)
            logger.info(f'{abbr}: {len(replicas)} replicas ready, {cap} tokens in flight each')
            report = dispatch(
                pending,
                replicas,
                store,
                cap,
                settings['request_deadline_s'],
                progress=lambda done, total: logger.info(f'{abbr}: {done} of {total} answered'),
            )
        record = {'cap_tokens': cap, 'planned': len(requests), **dataclasses.asdict(report)}
        write_text(osp.join(work_dir, 'serve', f'{abbr}.dispatch.json'), json.dumps(record))
        logger.info(f'{abbr}: served {report.answered} requests in {report.seconds:.1f} s')


def engine_capacity(replicas: list) -> int:
    """The smallest KV capacity among the replicas (``kv_capacity``), or an error saying to set
    ``cap_tokens``."""
    from ..serving.replicas import kv_capacity

    found = {replica.name: kv_capacity(replica) for replica in replicas}
    if None in found.values():
        silent = [name for name, tokens in found.items() if tokens is None]
        raise ModelConfigError(
            f'ServeOnceRunner: the KV capacity of {", ".join(silent)} is neither on its /metrics '
            'nor in its log: set cap_tokens (tokens in flight per replica)'
        )
    return min(found.values())


def store_folder(work_dir: str, identity: str) -> str:
    return osp.join(work_dir, 'serve', 'replies', identity)


def materialising(task: dict, work_dir: str) -> dict:
    """The task with each model answering from its reply store, on no GPU."""
    from ..serving.plan import model_identity

    task = copy.deepcopy(task)
    for model_cfg in task['models']:
        identity = model_identity(model_cfg)
        model_cfg['type'] = SERVED_TYPE
        model_cfg['reply_store'] = store_folder(work_dir, identity)
        model_cfg['served_identity'] = identity
        model_cfg['run_cfg'] = {**(model_cfg.get('run_cfg') or {}), 'num_gpus': 0}
    return task
