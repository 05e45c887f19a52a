"""Plain data for OpenCompass config files, derived from the task table.

OpenCompass parses configs that import anything lazily: imported names become placeholders that
cannot be iterated or called while the config runs. Config files therefore import the classes
(placeholders are fine for ``type=``) and fetch these plain lists through ``__import__``, which the
lazy parser leaves alone.
"""
from __future__ import annotations

from typing import Iterable, Optional

import itertools

from .adaleval import data as adaleval_data
from .adaleval.tasks import TASKS as ADALEVAL_TASKS
from .adaleval.tasks import TASKS_BY_NAME as ADALEVAL_TASKS_BY_NAME
from .lveval.data import default_data_dir
from .lveval.tasks import GROUPS, LEVELS, TASKS, TASKS_BY_NAME

ADALEVAL_METRICS = ('accuracy', 'instruction_following', 'copy_instruction',
                    'copy_instruction_chance', 'random_guess')
# Room for "Answer: A123" or "Answer: [4, 1, 3, 2]" and a little chatter around it.
ADALEVAL_MAX_OUT_LEN = 32
TSORT_ORDERS = [str(list(order)) for order in itertools.permutations(range(1, 5))]


def lveval_entries(path: Optional[str] = None, levels: Iterable[str] = LEVELS,
                   datasets: Optional[Iterable[str]] = None) -> list[dict]:
    """One dict per (dataset, level): abbr, subset name, data folder, prompt, max_out_len,
    metric."""
    tasks = TASKS if datasets is None else [TASKS_BY_NAME[name] for name in datasets]
    path = path or default_data_dir()
    return [dict(abbr=task.abbr(level), name=task.subset(level), path=path, prompt=task.prompt,
                 max_out_len=task.max_out_len, metric=task.metric)
            for task in tasks for level in levels]


def lveval_summary_groups(levels: Iterable[str] = LEVELS) -> list[dict]:
    """OpenCompass's LV-Eval groups (same names): per dataset, per task type, overall; plus one
    per length level (``LVEval_16k``...), the average over the 11 datasets at that level."""
    levels = list(levels)
    groups = [{'name': f'LVEval_{task.name}', 'subsets': [task.abbr(level) for level in levels]}
              for task in TASKS]
    for group in GROUPS:
        groups.append({'name': f'LVEval_{group}',
                       'subsets': [task.abbr(level) for task in TASKS if task.group == group
                                   for level in levels]})
    groups.extend({'name': f'LVEval_{level}', 'subsets': [task.abbr(level) for task in TASKS]}
                  for level in levels)
    groups.append({'name': 'LVEval_qa',
                   'subsets': [task.abbr(level) for group in GROUPS for task in TASKS
                               if task.group == group for level in levels]})
    return groups


def lveval_summary_abbrs(levels: Iterable[str] = LEVELS) -> list[str]:
    """Rows of the summary table: overall, per level, task types, datasets, then every subset."""
    levels = list(levels)
    return (['LVEval_qa'] + [f'LVEval_{level}' for level in levels] +
            [f'LVEval_{group}' for group in GROUPS] +
            [f'LVEval_{task.name}' for task in TASKS] +
            [task.abbr(level) for task in TASKS for level in levels])


def adaleval_entries(path: Optional[str] = None, tasks: Iterable[str] = ('bestanswer', 'tsort'),
                     settings: Optional[Iterable[str]] = None, cheap: bool = False,
                     extraction: str = 'strict', position: Optional[str] = None) -> list[dict]:
    """One dict per (task, setting): abbr, task, setting, data folder, sample mode, extraction.

    ``position`` ('front', 'middle', 'rear') builds BestAnswer's position-bias variant.
    """
    path = path or adaleval_data.default_data_dir()
    entries = []
    for name in tasks:
        task = ADALEVAL_TASKS_BY_NAME[name]
        for setting in task.settings if settings is None else \
                [s for s in settings if s in task.settings]:
            entries.append(dict(
                abbr=task.abbr(setting, f'_{position}' if position else ''), task=name,
                setting=setting, path=path, cheap=cheap, position=position,
                extraction=extraction, max_out_len=ADALEVAL_MAX_OUT_LEN))
    return entries


def _adaleval_pairs(present: Optional[Iterable[str]]) -> list[tuple]:
    """(task, setting, abbr) of every plain (task, setting), or of those in ``present``."""
    wanted = None if present is None else set(present)
    return [(task, setting, task.abbr(setting)) for task in ADALEVAL_TASKS
            for setting in task.settings if wanted is None or task.abbr(setting) in wanted]


def adaleval_summary_groups(present: Optional[Iterable[str]] = None) -> list[dict]:
    """Accuracy averaged per task over its settings, and per setting over the tasks that have it;
    ``present`` (dataset abbrs of the run) limits the groups to what was run."""
    pairs = _adaleval_pairs(present)
    groups = [{'name': f'AdaLEval_{task.name}',
               'subsets': [[abbr, 'accuracy'] for t, _, abbr in pairs if t is task]}
              for task in ADALEVAL_TASKS]
    settings = sorted({setting for _, setting, _ in pairs}, key=lambda s: int(s[:-1]))
    groups += [{'name': f'AdaLEval_{setting}',
                'subsets': [[abbr, 'accuracy'] for _, s, abbr in pairs if s == setting]}
               for setting in settings]
    return [group for group in groups if group['subsets']]


def adaleval_summary_abbrs(present: Optional[Iterable[str]] = None) -> list:
    """Rows: per-task and per-setting accuracy, then every metric of every (task, setting)."""
    rows: list = [group['name'] for group in adaleval_summary_groups(present)]
    for _, _, abbr in _adaleval_pairs(present):
        rows.extend([abbr, metric] for metric in ADALEVAL_METRICS)
    return rows
