"""The papers' published results, shipped with the package as data with their source.

``data/published_lveval.csv``: the LV-Eval README's "Overall Result" table (model x level: the
unweighted mean of the 11 datasets) and its per-dataset tables, plus the 16k-only per-dataset
numbers of Qwen2-72B-Instruct from ``info/SOTA_model_performance.md``. ``data/published_adaleval.csv``:
the Ada-LEval README's accuracy per task, model and setting. Copied byte for byte from the
project's reference files (a test checks them against ../shared/reference where it is present).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..lveval.tasks import TASKS_BY_NAME

DATA = Path(__file__).resolve().parent / 'data'
OVERALL = 'Overall Result'
# The README's table names are the dataset names with dashes, and loogle_MIR is "loogle-MR".
_TABLE_NAMES = {name.replace('_', '-').replace('MIR', 'MR'): name for name in TASKS_BY_NAME}


@dataclass
class PublishedRow:
    """One model's published numbers: LV-Eval overall and per-dataset by level, Ada-LEval
    accuracy by task and setting; every number with the source it was taken from."""

    model: str
    sources: set[str] = field(default_factory=set)
    overall: dict[str, float] = field(default_factory=dict)  # level -> score
    datasets: dict[tuple[str, str], float] = field(default_factory=dict)  # (dataset, level)
    adaleval: dict[tuple[str, str], float] = field(default_factory=dict)  # (task, setting)


def _number(text: str):
    return float(text) if text.strip() else None


def published_rows() -> list[PublishedRow]:
    """Every published model, LV-Eval's rows first, in the order the papers list them."""
    rows: dict[str, PublishedRow] = {}
    with open(DATA / 'published_lveval.csv', newline='', encoding='utf-8') as stream:
        reader = csv.DictReader(stream)
        levels = [name for name in reader.fieldnames if re.fullmatch(r'\d+k', name)]
        for line in reader:
            model, table = line['model'], line['table']
            dataset = _TABLE_NAMES.get(table)
            if ':' in model:  # "Qwen2-72B-Instruct:cmrc_mixup": a per-dataset table of one model
                model, dataset = model.split(':', 1)
            row = rows.setdefault(model, PublishedRow(model))
            row.sources.add(line['source'])
            for level in levels:
                value = _number(line[level])
                if value is None:
                    continue
                if table == OVERALL:
                    row.overall[level] = value
                elif dataset in TASKS_BY_NAME:
                    row.datasets[dataset, level] = value
    with open(DATA / 'published_adaleval.csv', newline='', encoding='utf-8') as stream:
        for line in csv.DictReader(stream):
            value = _number(line['accuracy_pct'])
            if value is None:  # the paper prints no number there
                continue
            row = rows.setdefault(line['model'], PublishedRow(line['model']))
            row.sources.add(line['source'])
            row.adaleval[line['task'].lower(), line['setting']] = value
    return list(rows.values())
