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

from ..files.atomic import atomic_open
from ..files.errors import LVEvalDataError
from ..files.jsonl import json_objects
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


# The LLM judge on official-format predictions ----------------------------------------------------

JUDGE_RESULTS = ('judge_result.json', 'judge_result.csv')


def read_questions(path: Path, needed: bool) -> list[str]:
    """The ``input`` (question) of every record; a clear error where the judge's prompt needs it
    and a record lacks it."""
    questions = []
    for where, record in json_objects(path, ('pred',), LVEvalDataError):
        question = record.get('input')
        if not isinstance(question, str):
            if needed:
                raise LVEvalDataError(
                    f'{where}: "input" (the question) must be a string: the judge\'s prompt for '
                    'this dataset shows it'
                )
            question = ''
        questions.append(question)
    return questions


def judge_and_write(pred_dir: str | Path, judge) -> list[str]:
    """Score every prediction file of ``pred_dir`` with the keyword metric and the LLM judge
    (``evaluators.judge.Judge``); write ``eval_result/judge_result.json`` (subset -> keyword
    score, judge score, the judge's counts, tokens and cost) and ``judge_result.csv`` (dataset x
    level, the judge score) beside the keyword results; return what to print."""
    from ..evaluators.judge import spearman, summarise
    from ..files.responses import response_text

    pred_dir = Path(pred_dir)
    scored = score_folder(pred_dir)
    out_dir = pred_dir / RESULT_FOLDER
    results, judge_scores, pairs, lines = {}, [], {}, []
    for item in scored.subsets:
        task, level = split_subset(item.subset)
        path = pred_dir / f'{item.subset}.jsonl'
        predictions, answers, _ = read_predictions(path)
        questions = read_questions(path, needed='{Q}' in task.judge_prompt)
        prompts = [
            task.judge_request(question, gold[0], response_text(prediction))
            for question, gold, prediction in zip(questions, answers, predictions)
        ]
        verdicts = judge.rate_all(prompts)
        found = summarise(verdicts, judge)
        results[item.subset] = {'score': item.score, **found}
        judge_scores.append((item.subset, found.get('judge_score')))
        for judgement, verdict in zip(item.judgements, verdicts):
            if verdict.score is not None:
                pairs.setdefault(task.name, []).append((judgement.score, verdict.score))
        lines.append(
            f'{item.subset}: keyword {item.score}, judge {found.get("judge_score", "-")}'
            f' ({found["judge_diagnostics"]})'
        )
    with atomic_open(out_dir / JUDGE_RESULTS[0]) as stream:
        json.dump(results, stream, ensure_ascii=False, indent=4)
    table = _level_table(judge_scores)
    with atomic_open(out_dir / JUDGE_RESULTS[1], newline='') as stream:
        csv.writer(stream, lineterminator='\n').writerows(table)
    for name, found in pairs.items():
        rho = spearman([k for k, _ in found], [j for _, j in found])
        shown = '-' if rho is None else f'{rho:.3f}'
        lines.append(f'{name}: Spearman keyword vs judge over {len(found)} rated samples {shown}')
    infos = [r['judge'] for r in results.values()]
    costs = [i['cost_usd'] for i in infos if i['cost_usd'] is not None]
    lines.append(
        f'judge {judge.name}: {sum(i["prompt_tokens"] for i in infos)} prompt and '
        f'{sum(i["completion_tokens"] for i in infos)} completion tokens, '
        f'{sum(i["cached"] for i in infos)} of {sum(i["samples"] for i in infos)} ratings cached, '
        f'{sum(i["unparseable"] for i in infos)} unparseable, {sum(i["failed"] for i in infos)} '
        'failed'
        + (
            f', ${sum(costs):.2f} (this run ${sum(i["cost_usd_this_run"] for i in infos):.2f})'
            if costs
            else ''
        )
    )
    lines.append(f'wrote {out_dir}/{JUDGE_RESULTS[0]} and {JUDGE_RESULTS[1]}')
    return lines


def _level_table(scores: list[tuple[str, object]]) -> list[list]:
    """dataset x level, in the order of ``result.csv``; '' where a level is missing."""
    rows: dict[str, dict] = {}
    for subset, value in scores:
        task, level = split_subset(subset)
        rows.setdefault(task.name, {'dataset_name': task.name})[level] = (
            '' if value is None else value
        )
    header: list[str] = list(dict.fromkeys(key for row in rows.values() for key in row))
    return [header] + [[row.get(key, '') for key in header] for row in rows.values()]
