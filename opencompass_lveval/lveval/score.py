"""Score a folder of official-format prediction files exactly as LV-Eval's ``evaluation.py`` does.

Input: ``{dataset}_{level}.jsonl`` files with ``pred``, ``answers`` and (optionally) ``gold_ans``.
Output: ``eval_result/result.json`` (subset -> score) and ``result.csv`` (dataset x level), same
file order, rounding and layout as the official script, so published numbers can be compared
byte for byte.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..jsonl import json_objects
from .data import LVEvalDataError
from .metrics import Judgement, judge_all, subset_score
from .tasks import split_subset


@dataclass
class ScoredSubset:
    subset: str
    judgements: list[Judgement]

    @property
    def score(self) -> float:
        return subset_score([j.score for j in self.judgements])


def official_file_order(filename: str) -> tuple[list[str], int]:
    """The sort key of the official script: letter runs, then the first number."""
    numbers = re.findall(r'\d+', filename)
    return re.findall('[a-zA-Z]+', filename), int(numbers[0]) if numbers else 0


def read_predictions(path: Path) -> tuple[list, list[list[str]], list]:
    """(predictions, answers, keywords) of one prediction file; clear errors name file and line."""
    predictions, answers, keywords = [], [], []
    for where, record in json_objects(path, ('pred',), LVEvalDataError):
        gold = record.get('answers')
        if not isinstance(gold, list) or not gold or not isinstance(gold[0], str):
            raise LVEvalDataError(f'{where}: "answers" must be a non-empty list of strings')
        keyword = record.get('gold_ans')
        if keyword is not None and not isinstance(keyword, str):
            raise LVEvalDataError(f'{where}: "gold_ans" must be a string or null')
        predictions.append(record['pred'])
        answers.append(gold)
        keywords.append(keyword)
    if not predictions:
        raise LVEvalDataError(f'{path} holds no predictions')
    return predictions, answers, keywords


def score_folder(pred_dir: str | Path) -> list[ScoredSubset]:
    """Score every ``*.jsonl`` directly inside ``pred_dir``, in the official order."""
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise LVEvalDataError(f'Prediction folder {pred_dir} does not exist')
    files = sorted((p for p in pred_dir.iterdir() if p.is_file() and p.name.endswith('jsonl')),
                   key=lambda p: official_file_order(p.name))
    if not files:
        raise LVEvalDataError(f'{pred_dir} has no {{dataset}}_{{level}}.jsonl prediction files')
    scored = []
    for path in files:
        subset = path.name.split('.')[0]
        try:
            task, _ = split_subset(subset)
        except ValueError as exc:
            raise LVEvalDataError(f'{path}: {exc}') from exc
        predictions, answers, keywords = read_predictions(path)
        scored.append(ScoredSubset(subset, judge_all(task.metric, predictions, answers, keywords)))
    return scored


def write_official_results(scored: list[ScoredSubset], out_dir: str | Path):
    """Write ``result.json`` and ``result.csv`` as the official script does; return the table."""
    import pandas as pd
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / 'result.json', 'w') as stream:
        json.dump({s.subset: s.score for s in scored}, stream, ensure_ascii=False, indent=4)
    rows: dict[str, dict] = {}
    for item in scored:
        name, level = split_subset(item.subset)[0].name, item.subset.split('_')[-1]
        rows.setdefault(name, {'dataset_name': name})[level] = item.score
    table = pd.DataFrame(list(rows.values()))
    table.to_csv(out_dir / 'result.csv', index=False)
    return table
