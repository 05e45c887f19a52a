"""What a run can learn before any task starts, checked in the driver: a run that cannot work
stops there, once, with the cause in the terminal and a non-zero exit, instead of failing in each
inference task's log and then again in every evaluation task.

``stop_before_launch`` checks what is left to infer: each model with ``check_before_weights``
(model folder, tokenizer, format, window, API key: the checks its inference task makes again) and
each dataset of this package built from its files by its own loader (a missing folder or file, a
broken line). Every model x dataset left to infer then gets its inference log saying why it did
not run, where ``lveval leaderboard`` finds it. ``CheckedPartitioner`` runs it before it makes
any task, so it works with any runner; a partitioner or runner of another kind can call it alone.
"""

from __future__ import annotations

import difflib
import os.path as osp
from collections.abc import Iterable
from typing import Optional

from opencompass.partitioners import NumWorkerPartitioner
from opencompass.registry import LOAD_DATASET, PARTITIONERS
from opencompass.tasks import OpenICLInferTask
from opencompass.utils import (
    build_dataset_from_cfg,
    dataset_abbr_from_cfg,
    get_infer_output_path,
    model_abbr_from_cfg,
)

from ..files.columnar import ColumnarDataset
from ..report.rounding import counted
from .infer_task import check_before_weights
from .local import is_local_runner, stop_for_gpus
from .readiness import stop_if_unready
from .stops import Problem, grouped, write_not_run


def _cause(exc: BaseException) -> str:
    return f'{type(exc).__name__}: {exc}'


def data_problem(dataset_cfg: dict) -> Optional[str]:
    """The loader's own error where a dataset of this package cannot be built from its files
    (missing, or broken inside), else None. Each is read as its inference task will read it, one
    at a time (OpenCompass's partitioner read them all here too, to size them); datasets of
    other packages are left to their tasks."""
    kind = dataset_cfg.get('type')
    dataset_class = LOAD_DATASET.get(kind) if isinstance(kind, str) else kind
    if not (isinstance(dataset_class, type) and issubclass(dataset_class, ColumnarDataset)):
        return None
    try:
        build_dataset_from_cfg(dataset_cfg)
    except Exception as exc:  # what the task would meet when it loads the data
        return _cause(exc)
    return None


def model_problems(model_cfg: dict, dataset_cfgs: list) -> dict[str, str]:
    """Dataset abbr -> why the model cannot run it, as its inference task would find before any
    weights load: a problem of the model itself (folder, tokenizer, format, key) for every
    dataset, else each dataset's own (its answer and the template must fit the window). The
    tokenizer loads once; each dataset is checked on its own so that every problem is found."""
    abbrs = [dataset_abbr_from_cfg(d) for d in dataset_cfgs]
    try:
        check_before_weights(model_cfg, [])
    except Exception as exc:  # the task would fail the same way
        return dict.fromkeys(abbrs, _cause(exc))
    found = {}
    for abbr, dataset_cfg in zip(abbrs, dataset_cfgs):
        try:
            check_before_weights(model_cfg, [dataset_cfg])
        except Exception as exc:
            found[abbr] = _cause(exc)
    return found


def launch_problems(pending: Iterable[tuple[dict, list]]) -> list[Problem]:
    """Every problem of ``pending``, (model config, its dataset configs left to infer) pairs;
    each dataset is read once however many models read it."""
    data: dict[str, Optional[str]] = {}
    problems = []
    for model_cfg, dataset_cfgs in pending:
        model = model_abbr_from_cfg(model_cfg)
        of_model = model_problems(model_cfg, dataset_cfgs)
        for dataset_cfg in dataset_cfgs:
            abbr = dataset_abbr_from_cfg(dataset_cfg)
            if abbr not in data:
                data[abbr] = data_problem(dataset_cfg)
            for cause in (data[abbr], of_model.get(abbr)):
                if cause:
                    problems.append(Problem(model, abbr, cause))
    return problems


def stop_before_launch(pending: Iterable[tuple[dict, list]], work_dir: str) -> None:
    """Raise ``SystemExit`` (the problems in the terminal, exit 1) when anything of ``pending``
    (see ``launch_problems``) cannot run; each model x dataset of it gets its inference log
    saying why it did not run: its own problems, or the run's stop."""
    pending = [(model_cfg, list(dataset_cfgs)) for model_cfg, dataset_cfgs in pending]
    problems = launch_problems(pending)
    if not problems:
        return
    log_dir = osp.join(work_dir, 'logs', 'infer')
    stopped = (
        'NotRunError: the run stopped before any task started, for problems of other models or '
        'datasets (listed in the terminal, each in its own log)'
    )
    for model_cfg, dataset_cfgs in pending:
        model = model_abbr_from_cfg(model_cfg)
        for dataset in map(dataset_abbr_from_cfg, dataset_cfgs):
            own = [p.cause for p in problems if (p.model, p.dataset) == (model, dataset)]
            write_not_run(log_dir, model, dataset, own or [stopped])
    raise SystemExit(
        '\n'.join(
            [
                'The run stopped before any task started, on what was found before any weights '
                f'load ({counted(len(problems), "problem")} of model x dataset pairs):',
                *grouped(problems),
                f'Nothing ran; every model x dataset has its reason in {log_dir}. Fix the config '
                'or the files named and run again.',
            ]
        )
    )


@PARTITIONERS.register_module()
class CheckedPartitioner(NumWorkerPartitioner):
    """OpenCompass's ``NumWorkerPartitioner`` (same settings), for ``infer``, that first stops
    the run on what is left to infer: a runner or engine this machine lacks (``readiness.py``:
    Slurm, Ray, vLLM...); where the config's inference runner runs tasks on this machine (a
    ``LocalRunner``), a model asking for more GPUs than it has, before anything is read; then
    ``stop_before_launch``. With ``num_split`` 1 (one worker, or set) it sizes no
    dataset: OpenCompass's reads each one again only to size splits it then does not make, and
    caches the sizes by dataset name alone (``.cache/dataset_size.json``), where a later run
    with other data would find them and skip its reading."""

    runner: dict = {}  # the config's inference runner, set when the run calls it
    eval_runner: dict = {}  # and its evaluation runner

    def __call__(self, cfg):
        self.runner = dict(cfg.get('infer', {}).get('runner', {}))
        self.eval_runner = dict(cfg.get('eval', {}).get('runner', {}))
        unknown = summary_problems(cfg)
        if unknown:
            raise SystemExit(
                '\n'.join(
                    [
                        'The run stopped before any task started: its summarizer names what '
                        'matches nothing (its row would be empty):',
                        *(f'- {line}' for line in unknown),
                    ]
                )
            )
        return super().__call__(cfg)

    def partition(self, model_dataset_combinations, work_dir, out_dir, add_cfg=None):
        pending = [
            (model, [d for d in comb['datasets'] if not _predicted(model, d, out_dir)])
            for comb in model_dataset_combinations
            for model in comb['models']
        ]
        pending = [(model, left) for model, left in pending if left]
        stop_if_unready([self.runner, self.eval_runner], [model for model, _ in pending])
        if is_local_runner(self.runner.get('type')):
            task_type = self.runner.get('task', {}).get('type', OpenICLInferTask)
            as_tasks = [dict(models=[m], datasets=[left], work_dir=work_dir) for m, left in pending]
            stop_for_gpus(as_tasks, task_type)
        stop_before_launch(pending, work_dir)
        return super().partition(model_dataset_combinations, work_dir, out_dir, add_cfg or {})

    def get_size(self, dataset) -> int:
        if self.num_split <= 1:
            return 0  # the size only decides splits, and none are made
        return super().get_size(dataset)


def summary_problems(cfg: dict) -> list[str]:
    """The summarizer's rows and group members that carry a registered benchmark's prefix
    (``LVEval_``) yet name no dataset of the run, no dataset of the benchmark at a level of its
    form and no summary group, one line each with the closest known name; other names (another
    package's datasets) are left alone."""
    from ..framework import benchmarks

    summarizer = cfg.get('summarizer') or {}
    groups = list(summarizer.get('summary_groups') or [])
    abbrs = [dataset.get('abbr', '') for dataset in cfg.get('datasets', [])]
    known = set(abbrs) | {group.get('name') for group in groups}
    grids = [b for b in benchmarks.registered() if getattr(b, 'prefix', None)]
    for benchmark in grids:
        known |= {group['name'] for cells in (None, abbrs) for group in benchmark.summary(cells)[1]}
        known |= {benchmark.abbr(t, s) for t in benchmark.tasks for s in benchmark.sizes_of(t)}
    entries = list(summarizer.get('dataset_abbrs') or [])
    entries += [subset for group in groups for subset in group.get('subsets', [])]
    problems = []
    for name in dict.fromkeys(e if isinstance(e, str) else e[0] for e in entries):
        owner = next((b for b in grids if name.startswith(f'{b.prefix}_')), None)
        if name in known or owner is None or owner.split_abbr(name):
            continue
        if owner.is_level(name[len(owner.prefix) + 1 :]):
            continue  # the average at a level (LVEval_512k), which the summarizer adds
        close = difflib.get_close_matches(name, sorted(known), n=1)
        guess = f'; did you mean {close[0]!r}?' if close else ''
        problems.append(
            f'{name!r} names no dataset of the run, no {owner.title} dataset and no summary '
            f'group{guess}'
        )
    return problems


def _predicted(model_cfg: dict, dataset_cfg: dict, out_dir: str) -> bool:
    return osp.exists(get_infer_output_path(model_cfg, dataset_cfg, out_dir))
