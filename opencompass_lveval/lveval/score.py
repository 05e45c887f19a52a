"""Score a folder of official-format prediction files exactly as LV-Eval's ``evaluation.py`` does.

Input: ``{dataset}_{level}.jsonl`` files with ``pred``, ``answers`` and (optionally) ``gold_ans``;
exactly those names are read, any other file is named as ignored (the official script reads
every ``*jsonl`` and would let ``cmrc_mixup_16k.old.jsonl`` replace the real subset). Output:
``eval_result/result.json`` (subset -> score) and ``result.csv`` (dataset x level), same file
order, rounding and layout as the official script, so published numbers compare byte for byte.
Only the metrics and the standard library are imported: no pandas, no Arrow, no OpenCompass.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import atomic_open
from ..errors import LVEvalDataError
from ..jsonl import json_objects
from .metrics import Judgement, judge_all, subset_score
from .tasks import split_subset, subset_of_file

RESULT_FOLDER = 'eval_result'


@dataclass
class ScoredSubset:
    subset: str
    judgements: list[Judgement]
    non_string_predictions: int = 0

    @property
    def score(self) -> float:
        return subset_score([j.score for j in self.judgements])


@dataclass
class ScoredFolder:
    subsets: list[ScoredSubset]
    ignored: list[Path] = field(default_factory=list)  # files that are not {dataset}_{level}.jsonl


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


def score_folder(pred_dir: str | Path) -> ScoredFolder:
    """Score every ``{dataset}_{level}.jsonl`` directly inside ``pred_dir``, in the official
    order."""
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise LVEvalDataError(f'Prediction folder {pred_dir} does not exist')
    files, ignored = [], []
    for path in sorted(pred_dir.iterdir()):
        if path.is_file():
            (files if subset_of_file(str(path)) else ignored).append(path)
    if not files:
        raise LVEvalDataError(
            f'{pred_dir} has no {{dataset}}_{{level}}.jsonl prediction files'
            + (f' (ignored: {", ".join(p.name for p in ignored)})' if ignored else '')
        )
    scored = []
    for path in sorted(files, key=lambda p: official_file_order(p.name)):
        task, _ = split_subset(path.stem)
        predictions, answers, keywords = read_predictions(path)
        scored.append(
            ScoredSubset(
                path.stem,
                judge_all(task.metric, predictions, answers, keywords),
                sum(not isinstance(p, str) for p in predictions),
            )
        )
    return ScoredFolder(scored, ignored)


def official_table(scored: list[ScoredSubset]) -> list[list]:
    """The rows of ``result.csv``: a header (``dataset_name`` and the levels in order of first
    appearance), then one row per dataset, '' where a level is missing."""
    rows: dict[str, dict] = {}
    for item in scored:
        task, level = split_subset(item.subset)
        rows.setdefault(task.name, {'dataset_name': task.name})[level] = item.score
    header: list[str] = list(dict.fromkeys(key for row in rows.values() for key in row))
    return [header] + [[row.get(key, '') for key in header] for row in rows.values()]


def write_official_results(scored: list[ScoredSubset], out_dir: str | Path) -> list[list]:
    """Write ``result.json`` and ``result.csv`` byte for byte as the official script does (its
    pandas ``to_csv``: floats as Python prints them, empty cells for missing levels, ``\\n``
    line ends); return the table."""
    out_dir = Path(out_dir)
    with atomic_open(out_dir / 'result.json') as stream:
        json.dump({s.subset: s.score for s in scored}, stream, ensure_ascii=False, indent=4)
    table = official_table(scored)
    with atomic_open(out_dir / 'result.csv', newline='') as stream:
        csv.writer(stream, lineterminator='\n').writerows(table)
    return table


def score_and_write(pred_dir: str | Path) -> list[str]:
    """Score a prediction folder, write ``eval_result/`` beside it, and return what to print:
    the dataset x level table, files ignored, counts the official script would not give."""
    scored = score_folder(pred_dir)
    out_dir = Path(pred_dir) / RESULT_FOLDER
    table = write_official_results(scored.subsets, out_dir)
    cells = [[f'{cell}' for cell in row] for row in table]
    widths = [max(len(row[column]) for row in cells) for column in range(len(cells[0]))]
    lines = ['  '.join(cell.rjust(width) for cell, width in zip(row, widths)) for row in cells]
    unusable = {
        s.subset: n for s in scored.subsets if (n := sum(j.keywords_unusable for j in s.judgements))
    }
    if unusable:
        lines.append(
            'keyword strings that normalise to nothing (gate skipped; the official code '
            f'crashes on these): {json.dumps(unusable)}'
        )
    non_strings = {
        s.subset: s.non_string_predictions for s in scored.subsets if s.non_string_predictions
    }
    if non_strings:
        lines.append(
            'predictions that are not strings (a number or a one-string list read as '
            f'its text, anything else as empty): {json.dumps(non_strings)}'
        )
    if scored.ignored:
        lines.append(
            f'ignored {len(scored.ignored)} files that are not {{dataset}}_{{level}}'
            f'.jsonl: {", ".join(p.name for p in scored.ignored)}'
        )
    lines.append(f'wrote {out_dir}/result.json and result.csv')
    return lines
