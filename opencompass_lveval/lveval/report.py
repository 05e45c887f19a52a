"""LV-Eval's own tables and depths: the LLM judge's score beside the keyword score (the run's
report and the board: per dataset and level, their agreement per dataset, the model order per
level), and where each record's answer first occurs in its context, read from the run's prompts.
The Overall, task types, per-dataset tables and intervals are the framework's (``grid.py``).

Where results hold the judge's score (``judge_score``, from ``LVEvalJudgeEvaluator``), the report
and the board add it; agreement is Spearman per dataset over its (model, level) cells, and the
model order per level by each score's Overall. Without judge results nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Optional

from ..report.results import detail_value, origin_prompts, prompt_text
from ..report.tables import BoardLine, BoardTable, ItemLine, Table, mean, result_value
from .tasks import TASKS, split_abbr

KEYWORD, JUDGE = 'score', 'judge_score'  # the official metric's key and the LLM judge's


# Where each record's answer is ------------------------------------------------------------------


def context_of(prompt: str, template: str) -> Optional[str]:
    """The context inside a prompt filled from ``template`` (text before ``{context}``, the
    context, text between ``{context}`` and ``{input}``, the question...); None if it is not one."""
    head, _, rest = template.partition('{context}')
    between = rest.partition('{input}')[0]
    end = prompt.rfind(between)
    return prompt[len(head) : end] if prompt.startswith(head) and end >= len(head) else None


def record_depths(run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
    """Where each record's answer (the details' first answer) first occurs in its context, as a
    fraction, for the datasets whose answer is a span of the context. The context is taken from
    the run's own predictions (each record's ``origin_prompt``, cut at the dataset's template),
    so the map follows the records the run used, in whatever order the files hold them."""
    from ..report.depth import first_depth

    found = split_abbr(abbr)
    details = result.get('details')
    if not (found and found[0].answer_in_context and details):
        return None
    prompts = origin_prompts(run, model, abbr)
    if prompts is None or len(prompts) != len(details):
        return None
    depths = []
    for prompt, detail in zip(prompts, details):
        context = context_of(prompt_text(prompt), found[0].prompt)
        try:
            answer = detail_value(detail, 'answer')
        except (KeyError, TypeError, IndexError):
            answer = None
        depths.append(first_depth(context, answer) if context and isinstance(answer, str) else None)
    return depths


# The LLM judge beside the keyword score ---------------------------------------------------------

Value = Callable[[object, str, str, str], Optional[float]]  # (model, dataset, level, metric)


def agreement_by_dataset(models: list, value: Value, levels: list[str]) -> list[list]:
    """[dataset, cells, Spearman] per dataset: the keyword and judge scores of its (model, level)
    cells where both exist, rank-correlated (None with fewer than two cells or a constant side)."""
    from ..evaluators.judge import spearman

    rows = []
    for task in TASKS:
        pairs = [
            (keyword, judge)
            for model in models
            for level in levels
            if (keyword := value(model, task.name, level, KEYWORD)) is not None
            and (judge := value(model, task.name, level, JUDGE)) is not None
        ]
        rows.append([task.name, len(pairs), spearman([k for k, _ in pairs], [j for _, j in pairs])])
    return rows


def order_by_level(models: list, value: Value, levels: list[str], name) -> list[list]:
    """[level, keyword order, judge order, same order, Spearman] per level: the models with both
    Overalls there (the mean of the 11 datasets), highest first."""
    from ..evaluators.judge import order, spearman

    rows = []
    for level in levels:
        overalls = {
            name(model): (
                mean([value(model, t.name, level, KEYWORD) for t in TASKS]),
                mean([value(model, t.name, level, JUDGE) for t in TASKS]),
            )
            for model in models
        }
        both = {m: pair for m, pair in overalls.items() if None not in pair}
        keyword = order({m: pair[0] for m, pair in both.items()})
        judge = order({m: pair[1] for m, pair in both.items()})
        rho = spearman([both[m][0] for m in both], [both[m][1] for m in both])
        same = ('yes' if keyword == judge else 'no') if both else '-'
        rows.append([level, ' > '.join(keyword), ' > '.join(judge), same, rho])
    return rows


def _run_value(results: dict) -> Value:
    def value(model, dataset: str, level: str, metric: str) -> Optional[float]:
        return result_value(results[model], f'LVEval_{dataset}_{level}', metric)

    return value


def judge_tables(results: dict[str, dict[str, dict]], levels: list[str]) -> list[Table]:
    """Per judged model, keyword and judge score per dataset and level; then their agreement
    per dataset and the model order per level. Nothing where no result holds a judge score."""
    value = _run_value(results)
    judged = [
        model
        for model in results
        if any(value(model, t.name, lv, JUDGE) is not None for t in TASKS for lv in levels)
    ]
    if not judged:
        return []
    tables = []
    header = ['dataset'] + [f'{lv}{kind}' for lv in levels for kind in ('', ' judge')]
    header += ['avg', 'avg judge']
    for model in judged:
        grid = {
            metric: {t.name: [value(model, t.name, lv, metric) for lv in levels] for t in TASKS}
            for metric in (KEYWORD, JUDGE)
        }
        rows = []
        for task in TASKS:
            pairs = zip(grid[KEYWORD][task.name], grid[JUDGE][task.name])
            rows.append(
                [task.name]
                + [v for pair in pairs for v in pair]
                + [mean(grid[KEYWORD][task.name]), mean(grid[JUDGE][task.name])]
            )
        averages = {
            metric: [mean([grid[metric][t.name][i] for t in TASKS]) for i in range(len(levels))]
            for metric in (KEYWORD, JUDGE)
        }
        rows.append(
            ['Overall']
            + [v for pair in zip(averages[KEYWORD], averages[JUDGE]) for v in pair]
            + [mean(averages[KEYWORD]), mean(averages[JUDGE])]
        )
        tables.append(
            Table(f'LV-Eval keyword and LLM judge, {model}', f'lveval_judge_{model}', header, rows)
        )
    tables.append(
        Table(
            'LV-Eval keyword vs LLM judge: Spearman per dataset over its (model, level) cells',
            'lveval_judge_agreement',
            ['dataset', 'cells', 'spearman'],
            agreement_by_dataset(judged, value, levels),
        )
    )
    tables.append(
        Table(
            'LV-Eval keyword vs LLM judge: model order per level (Overall)',
            'lveval_judge_order',
            ['level', 'keyword order', 'judge order', 'same order', 'spearman'],
            order_by_level(judged, value, levels, str),
        )
    )
    return tables


# The LLM judge on the leaderboard ------------------------------------------------------------------


def judge_board_tables(benchmark, rows: list, levels: list[str]) -> list[BoardTable]:
    """The judge's Overall by level for the judged rows (``benchmark``'s Overall of the judge's
    score), the agreement per dataset and the model order per level."""

    def value(row, dataset: str, level: str, metric: str) -> Optional[float]:
        return benchmark.value(row, dataset, level, metric)

    orders = order_by_level(rows, value, levels, lambda row: row.label)
    return [
        BoardTable(
            f'{benchmark.name}-judge',
            'LV-Eval LLM judge: Overall by length level',
            levels + ['avg'],
            [
                BoardLine(
                    r,
                    [benchmark.overall_value(r, lv, JUDGE) for lv in levels]
                    + [benchmark.average_value(r, levels, JUDGE)],
                )
                for r in rows
            ],
            note="The judge rates each answer 0 to 10 (the LV-Eval v2 paper's prompts); a "
            "dataset's judge score is the mean rating x 10 over its rated samples; Overall as for "
            'the keyword score.',
        ),
        BoardTable(
            f'{benchmark.name}-judge-agreement',
            'LV-Eval keyword vs LLM judge: Spearman per dataset',
            ['cells', 'spearman'],
            [
                BoardLine(ItemLine(dataset), [float(cells), rho])
                for dataset, cells, rho in agreement_by_dataset(rows, value, levels)
            ],
            note="Rank correlation of the two scores over the dataset's (model, level) cells.",
            label='dataset',
        ),
        BoardTable(
            f'{benchmark.name}-judge-order',
            'LV-Eval keyword vs LLM judge: model order per level',
            ['spearman'],
            [BoardLine(ItemLine(level), [rho]) for level, *_, rho in orders],
            note='; '.join(
                f'{level}: keyword {keyword or "-"}; judge {judge or "-"} (same order: {same})'
                for level, keyword, judge, same, _ in orders
            ),
            label='level',
        ),
    ]
