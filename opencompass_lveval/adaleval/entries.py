"""Plain data for OpenCompass config files, derived from the Ada-LEval task table.

OpenCompass parses configs that import anything lazily: imported names become placeholders that
cannot be called while the config runs, so config files fetch these functions through
``__import__``, which the lazy parser leaves alone.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Optional

from ..declared import dataset_config
from ..sizes import by_size, is_size
from .data import default_data_dir
from .tasks import MAX_OUT_LEN, METRICS, TASKS, task_named


def adaleval_entries(
    path: Optional[str] = None,
    tasks: Optional[Iterable[str]] = None,
    settings: Optional[Iterable[str]] = None,
    cheap: bool = False,
    extraction: str = 'strict',
    position: Optional[str] = None,
) -> list[dict]:
    """One dict per (task, setting): abbr, task, setting, data folder, sample mode, extraction.

    ``tasks`` defaults to every task of the table, ``settings`` to each task's paper settings; any other size (``256k``) is taken as
    asked. ``position`` ('front', 'middle', 'rear') builds BestAnswer's position-bias variant.
    """
    path = path or default_data_dir()
    entries = []
    for name in tasks or [task.name for task in TASKS]:
        task = task_named(name)
        for setting in task.settings if settings is None else settings:
            entries.append(
                dict(
                    abbr=task.abbr(setting, f'_{position}' if position else ''),
                    task=name,
                    setting=setting,
                    path=path,
                    cheap=cheap,
                    position=position,
                    extraction=extraction,
                    max_out_len=MAX_OUT_LEN,
                )
            )
    return entries


def dataset_configs(entries: list[dict]) -> list[dict]:
    """OpenCompass dataset configs for ``adaleval_entries``' entries: the official prompt joined
    from its parts; a middle cut may shorten the body only (the question and answers, or the book
    parts), never the instructions around it."""
    return [
        dataset_config(
            dict(
                type='opencompass_lveval.adaleval.dataset.AdaLEvalDataset',
                abbr=entry['abbr'],
                task=entry['task'],
                setting=entry['setting'],
                path=entry['path'],
                cheap=entry['cheap'],
                position=entry['position'],
            ),
            dict(input_columns=['instruction', 'body', 'closing'], output_column='answer'),
            '{instruction}{body}{closing}',
            'body',
            entry['max_out_len'],
            dict(
                type='opencompass_lveval.adaleval.evaluator.AdaLEvalEvaluator',
                task=entry['task'],
                extraction=entry['extraction'],
            ),
        )
        for entry in entries
    ]


def _variant(config: dict, **changes) -> dict:
    copied = copy.deepcopy(config)
    copied.update(changes)
    return copied


def at_settings(
    dataset_configs: list, settings: Iterable[str], tasks: Optional[Iterable[str]] = None
) -> list:
    """Copies of Ada-LEval dataset configs at other settings (``256k``, any size), for files made
    with the builders: one per task (all, or ``tasks``) and setting, from the task's first plain
    config."""
    first: dict[str, dict] = {}
    for config in dataset_configs:
        task = task_named(config['task'])
        if config['abbr'] == task.abbr(config['setting']) and (tasks is None or task.name in tasks):
            first.setdefault(task.name, config)
    return [
        _variant(config, abbr=task_named(name).abbr(setting), setting=setting)
        for name, config in first.items()
        for setting in settings
    ]


def with_position(dataset_configs: list, position: str) -> list:
    """The position-bias variant (accepted answer at the 'front', 'middle' or 'rear') of every
    plain config whose task has it."""
    if not any(position in task.positions for task in TASKS):
        raise ValueError(
            f'position must be one of {sorted({p for t in TASKS for p in t.positions})}'
            f', not {position!r}'
        )
    variants = []
    for config in dataset_configs:
        task = task_named(config['task'])
        if position in task.positions and config['abbr'] == task.abbr(config['setting']):
            variants.append(
                _variant(
                    config, abbr=task.abbr(config['setting'], f'_{position}'), position=position
                )
            )
    return variants


def _pairs(present: Optional[Iterable[str]]) -> list[tuple]:
    """(task, setting, abbr) of every paper (task, setting), or of the plain (task, setting)
    abbrs in ``present`` (any setting)."""
    if present is None:
        return [(task, setting, task.abbr(setting)) for task in TASKS for setting in task.settings]
    wanted = set(present)
    prefixes = {task: task.abbr('') for task in TASKS}
    return [
        (task, setting, task.abbr(setting))
        for task in TASKS
        for setting in by_size(
            abbr[len(prefixes[task]) :]
            for abbr in wanted
            if abbr.startswith(prefixes[task]) and is_size(abbr[len(prefixes[task]) :])
        )
    ]


def adaleval_summary_groups(present: Optional[Iterable[str]] = None) -> list[dict]:
    """Accuracy averaged per task over its settings, and per setting over the tasks that have it;
    ``present`` (dataset abbrs of the run) limits the groups to what was run."""
    pairs = _pairs(present)
    groups = [
        {
            'name': f'AdaLEval_{task.name}',
            'subsets': [[abbr, 'accuracy'] for t, _, abbr in pairs if t is task],
        }
        for task in TASKS
    ]
    groups += [
        {
            'name': f'AdaLEval_{setting}',
            'subsets': [[abbr, 'accuracy'] for _, s, abbr in pairs if s == setting],
        }
        for setting in by_size(setting for _, setting, _ in pairs)
    ]
    return [group for group in groups if group['subsets']]


def adaleval_summary_abbrs(present: Optional[Iterable[str]] = None) -> list:
    """Rows: per-task and per-setting accuracy, then every metric of every (task, setting)."""
    rows: list = [group['name'] for group in adaleval_summary_groups(present)]
    for _, _, abbr in _pairs(present):
        rows.extend([abbr, metric] for metric in METRICS)
    return rows
