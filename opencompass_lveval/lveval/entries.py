"""Plain data for OpenCompass config files, derived from the LV-Eval task table.

OpenCompass parses configs that import anything lazily: imported names become placeholders that
cannot be iterated or called while the config runs. Config files therefore import the classes
(placeholders are fine for ``type=``) and fetch these plain lists through ``__import__``, which the
lazy parser leaves alone.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Optional

from ..declared import dataset_config
from .data import default_data_dir
from .tasks import GROUPS, LEVELS, TASKS, TASKS_BY_NAME, split_abbr


def lveval_entries(
    path: Optional[str] = None,
    levels: Iterable[str] = LEVELS,
    datasets: Optional[Iterable[str]] = None,
) -> list[dict]:
    """One dict per (dataset, level): abbr, subset name, data folder, prompt, max_out_len,
    metric. ``levels`` may hold any size (``512k``, ``1000k``) for data made with the builders."""
    tasks = TASKS if datasets is None else [TASKS_BY_NAME[name] for name in datasets]
    path = path or default_data_dir()
    return [
        dict(
            abbr=task.abbr(level),
            name=task.subset(level),
            path=path,
            prompt=task.prompt,
            max_out_len=task.max_out_len,
            metric=task.metric,
        )
        for task in tasks
        for level in levels
    ]


def dataset_configs(entries: list[dict]) -> list[dict]:
    """OpenCompass dataset configs for ``lveval_entries``' entries: ``{context}`` and ``{input}``
    filled in one pass (text inside a field stays as it is); a middle cut may shorten the context
    only, the instructions and question are kept."""
    return [
        dataset_config(
            dict(
                type='opencompass_lveval.lveval.dataset.LVEvalDataset',
                abbr=entry['abbr'],
                name=entry['name'],
                path=entry['path'],
            ),
            dict(
                input_columns=['context', 'input'],
                output_column='answers',
                train_split='test',
                test_split='test',
            ),
            entry['prompt'],
            'context',
            entry['max_out_len'],
            dict(
                type='opencompass_lveval.lveval.evaluator.LVEvalEvaluator', metric=entry['metric']
            ),
        )
        for entry in entries
    ]


def at_levels(
    dataset_configs: list, levels: Iterable[str], datasets: Optional[Iterable[str]] = None
) -> list:
    """Copies of LV-Eval dataset configs at other levels (``512k``, ``1000k``, any size), for data
    made with the builders: one copy per dataset (all 11, or ``datasets``) and level, taken from
    that dataset's first config and renamed (``abbr``, ``name``)."""
    wanted = None if datasets is None else set(datasets)
    first: dict[str, dict] = {}
    for config in dataset_configs:
        found = split_abbr(config['abbr'])
        if found and (wanted is None or found[0].name in wanted):
            first.setdefault(found[0].name, config)
    copies = []
    for name, config in first.items():
        task = TASKS_BY_NAME[name]
        for level in levels:
            copied = copy.deepcopy(config)
            copied['abbr'], copied['name'] = task.abbr(level), task.subset(level)
            copies.append(copied)
    return copies


def level_groups(levels: Iterable[str]) -> list[dict]:
    """One group per length level (``LVEval_16k``, ``LVEval_512k``...): the average over the 11
    datasets at that level."""
    return [
        {'name': f'LVEval_{level}', 'subsets': [task.abbr(level) for task in TASKS]}
        for level in levels
    ]


def lveval_summary_groups(levels: Iterable[str] = LEVELS) -> list[dict]:
    """OpenCompass's LV-Eval groups (same names): per dataset, per task type, overall; plus one
    per length level (``LVEval_16k``...), the average over the 11 datasets at that level."""
    levels = list(levels)
    groups = [
        {'name': f'LVEval_{task.name}', 'subsets': [task.abbr(level) for level in levels]}
        for task in TASKS
    ]
    for group in GROUPS:
        groups.append(
            {
                'name': f'LVEval_{group}',
                'subsets': [
                    task.abbr(level) for task in TASKS if task.group == group for level in levels
                ],
            }
        )
    groups.extend(level_groups(levels))
    groups.append(
        {
            'name': 'LVEval_qa',
            'subsets': [
                task.abbr(level)
                for group in GROUPS
                for task in TASKS
                if task.group == group
                for level in levels
            ],
        }
    )
    return groups


def lveval_summary_abbrs(levels: Iterable[str] = LEVELS) -> list[str]:
    """Rows of the summary table: overall, per level, task types, datasets, then every subset."""
    levels = list(levels)
    return (
        ['LVEval_qa']
        + [f'LVEval_{level}' for level in levels]
        + [f'LVEval_{group}' for group in GROUPS]
        + [f'LVEval_{task.name}' for task in TASKS]
        + [task.abbr(level) for task in TASKS for level in levels]
    )
