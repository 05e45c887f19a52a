"""LV-Eval's tables and plots: a run's report (dataset x level per model with task-type groups and
the per-level average, factrecall by needle depth) and the leaderboard's (Overall by level, task
types, one table per dataset).

Levels are whatever the results hold, smallest first (``16k`` ... ``256k``, ``512k``); an average
is only given where every member has a result: a partial average would mislead. Overall at a level
is the unweighted mean of the 11 datasets (the official leaderboard's rule).

Where results hold the LLM judge's score (``judge_score``, from ``LVEvalJudgeEvaluator``), both
the report and the board add it beside the keyword score per dataset and level, with their
agreement: Spearman per dataset over its (model, level) cells, and the model order per level by
each score's Overall. Without judge results nothing changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Optional

from ..intervals import NOTE, bootstrap_cells, interval, pooled, resamples_in
from ..report.results import detail_value, prediction_parts
from ..rounding import rounded
from ..sizes import by_size
from ..tables import (
    PUBLISHED,
    BoardLine,
    BoardTable,
    ItemLine,
    Table,
    mean,
    result_value,
)
from .tasks import GROUPS, LEVELS, TASKS, split_abbr

NAME = 'lveval'
OVERALL = 'Overall'  # the task key of published Overall numbers on a board row
# cell (dataset, level) -> its bootstrap distribution, None where it has no per-record scores
DEPTH_STEM = 'lveval_score_by_answer_depth'
Samples = Callable[[str, str], Optional[object]]
KEYWORD, JUDGE = 'score', 'judge_score'  # the official metric's key and the LLM judge's


def levels_in(abbrs) -> list[str]:
    """The LV-Eval levels among dataset abbreviations, smallest first."""
    return by_size(found[1] for abbr in abbrs if (found := split_abbr(abbr)))


# A run's report ---------------------------------------------------------------------------------


def model_table(model: str, results: dict, levels: list[str], samples: Samples) -> Optional[Table]:
    """Datasets, task-type groups and the per-level average, by level, for one model, with the
    intervals: a dataset's over its records, an average's resampled within each dataset."""
    grid = {
        task.name: [result_value(results, task.abbr(level)) for level in levels] for task in TASKS
    }
    if all(v is None for row in grid.values() for v in row):
        return None
    rows = [[name] + values + [mean(values)] for name, values in grid.items()]
    intervals = [
        [None]
        + [interval(samples(name, lv)) for lv in levels]
        + [interval(pooled(samples(name, lv) for lv in levels))]
        for name in grid
    ]
    members = [(group, [t.name for t in TASKS if t.group == group]) for group in GROUPS]
    for name, names in members + [('average', [t.name for t in TASKS])]:
        values = [mean([grid[m][i] for m in names]) for i in range(len(levels))]
        rows.append([name] + values + [mean([v for m in names for v in grid[m]])])
        intervals.append(
            [None]
            + [interval(pooled(samples(m, lv) for m in names)) for lv in levels]
            + [interval(pooled(samples(m, lv) for m in names for lv in levels))]
        )
    return Table(
        f'LV-Eval, {model}', f'lveval_{model}', ['dataset'] + levels + ['avg'], rows, intervals
    )


def record_scores(result: dict) -> Optional[list[float]]:
    """Per-record scores (%) from LVEvalEvaluator's details; their mean is the subset's score."""
    details = result.get('details')
    try:
        return [100 * float(detail_value(d, 'score')) for d in details] if details else None
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _prompt_text(prompt) -> str:
    """The text of an OpenCompass ``origin_prompt``: a string, or the last HUMAN round's."""
    if isinstance(prompt, str):
        return prompt
    rounds = [p.get('prompt', '') for p in prompt or [] if isinstance(p, dict)]
    return rounds[-1] if rounds else ''


def context_of(prompt: str, template: str) -> Optional[str]:
    """The context inside a prompt filled from ``template`` (text before ``{context}``, the
    context, text between ``{context}`` and ``{input}``, the question...); None if it is not one."""
    head, _, rest = template.partition('{context}')
    between = rest.partition('{input}')[0]
    end = prompt.rfind(between)
    return prompt[len(head) : end] if prompt.startswith(head) and end >= len(head) else None


def _origin_prompts(run: Path, model: str, abbr: str) -> Optional[list]:
    """The origin prompts of a dataset's predictions in a run, in record order (OpenCompass
    writes ``{abbr}.json``, or ``{abbr}_0.json``, ``{abbr}_1.json``... when it splits one)."""
    parts = prediction_parts(run / 'predictions' / model, abbr)
    prompts = []
    for part in parts:
        try:
            found = json.loads(part.read_text(encoding='utf-8'))
        except (OSError, ValueError):
            return None
        prompts += [found[key].get('origin_prompt') for key in sorted(found, key=int)]
    return prompts or None


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
    prompts = _origin_prompts(run, model, abbr)
    if prompts is None or len(prompts) != len(details):
        return None
    depths = []
    for prompt, detail in zip(prompts, details):
        context = context_of(_prompt_text(prompt), found[0].prompt)
        try:
            answer = detail_value(detail, 'answer')
        except (KeyError, TypeError, IndexError):
            answer = None
        depths.append(first_depth(context, answer) if context and isinstance(answer, str) else None)
    return depths


def depth_maps(results: dict[str, dict], scores: dict, depths: dict) -> list:
    """Score by answer depth and level for each dataset whose answer is in its context."""
    from ..report.depth import depth_map

    levels = levels_in(depths)
    maps = []
    for task in TASKS:
        columns = {
            level: (scores[task.abbr(level)], depths[task.abbr(level)])
            for level in levels
            if scores.get(task.abbr(level)) and depths.get(task.abbr(level))
        }
        if columns and (found := depth_map(DEPTH_STEM, task.name, columns)):
            maps.append(found)
    return maps


def pooled_cells(cells: list[tuple[str, str]]) -> list[tuple[str, str, list]]:
    """Overall at every level among ``cells``: the unweighted mean of the 11 datasets."""
    return [
        (OVERALL, level, [(t.name, level) for t in TASKS])
        for level in by_size({level for _, level in cells})
    ]


def _samples(results: dict[str, dict[str, dict]], levels: list[str]) -> dict:
    """(dataset, level) -> model -> bootstrap distribution, at the default settings."""
    cells = {
        (NAME, task.name, level): {
            model: scores
            for model, found in results.items()
            if (scores := record_scores(found.get(task.abbr(level), {})))
        }
        for task in TASKS
        for level in levels
    }
    return bootstrap_cells(cells)


def report(results: dict[str, dict[str, dict]], out: Path) -> tuple[list[Table], list[Path]]:
    """The tables (the model x level averages first, with intervals) and the level plot with
    error bars, written to ``out``."""
    from ..report.plots import plot_lines

    levels = levels_in(abbr for model in results.values() for abbr in model)
    found = _samples(results, levels)
    tables, averages, errors = [], {}, {}
    for model, model_results in results.items():

        def samples(task: str, level: str, model=model):
            return found.get((NAME, task, level), {}).get(model)

        table = model_table(model, model_results, levels, samples)
        if table:
            tables.append(table)
            averages[model] = table.rows[-1][1 : 1 + len(levels)]
            errors[model] = table.intervals[-1][1 : 1 + len(levels)]
    if not averages:
        return [], []
    header = ['model'] + levels + ['avg']
    rows = [[m] + row + [mean(row)] for m, row in averages.items()]
    intervals = [[None] + errors[m] + [t.intervals[-1][-1]] for m, t in zip(averages, tables)]
    tables.insert(
        0,
        Table('LV-Eval average score by length level', 'lveval_levels', header, rows, intervals),
    )
    path = out / 'lveval_levels.png'
    plot_lines(
        path,
        'LV-Eval: average over 11 datasets (95% bootstrap intervals)',
        levels,
        averages,
        'length level (English words / Chinese characters)',
        'average score (%)',
        errors=errors,
    )
    return tables + judge_tables(results, levels), [path]


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
            ['average']
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


# The leaderboard --------------------------------------------------------------------------------


def board_levels(rows: list, with_published: bool) -> list[str]:
    """Levels any row has a result at (the official five too when published rows are shown)."""
    found = {size for row in rows for _, size in row.results.get(NAME, {})}
    return by_size(found | (set(LEVELS) if with_published else set()))


def dataset_score(row, dataset: str, level: str, metric: str = KEYWORD) -> Optional[float]:
    return row.results.get(NAME, {}).get((dataset, level), {}).get(metric)


def judged(row) -> bool:
    """Whether a row holds any LLM judge score."""
    return any(JUDGE in values for values in row.results.get(NAME, {}).values())


def judge_overall(row, level: str) -> Optional[float]:
    """The judge's Overall: the mean of the 11 datasets' judge scores, where all 11 are there."""
    return mean([dataset_score(row, task.name, level, JUDGE) for task in TASKS])


def overall(row, level: str) -> Optional[float]:
    """A published row's Overall as published; a measured row's, the mean of the 11 datasets
    where all 11 are there."""
    if row.kind == PUBLISHED:
        return dataset_score(row, OVERALL, level)
    return mean([dataset_score(row, task.name, level) for task in TASKS])


def average(row, levels: list[str]) -> Optional[float]:
    """Mean Overall over ``levels``; None unless every one is there."""
    return mean([overall(row, level) for level in levels])


def _distribution(row, dataset: str, level: str):
    """A measured cell's bootstrap distribution (the board attaches them), else None."""
    return row.samples.get(NAME, {}).get((dataset, level))


def _pooled_interval(row, cells) -> Optional[tuple]:
    """The interval of the unweighted mean of the cells (dataset, level), each resampled within
    itself; none for published rows (no per-record scores)."""
    return interval(pooled(_distribution(row, d, lv) for d, lv in cells))


def overall_interval(row, level: str):
    return _pooled_interval(row, [(t.name, level) for t in TASKS])


def average_interval(row, levels: list[str]):
    return _pooled_interval(row, [(t.name, lv) for t in TASKS for lv in levels])


def group_score(row, group: str, levels: list[str]) -> Optional[float]:
    """Mean over a task-type group's datasets and the levels, only where all are present."""
    return mean(
        [dataset_score(row, t.name, lv) for t in TASKS if t.group == group for lv in levels]
    )


def _absent_overall(row, levels: list[str]) -> str:
    """Why a published row has no Overall where it has dataset scores (a paper gave only some
    per-dataset numbers): said, not left as a row of dashes."""
    if row.kind != PUBLISHED or any(overall(row, level) is not None for level in levels):
        return ''
    found = by_size({lv for (task, lv) in row.results.get(NAME, {}) if task != OVERALL})
    return f'no Overall published; dataset scores at {", ".join(found)} (provenance)'


def board_tables(rows: list, levels: list[str]) -> list[BoardTable]:
    """Overall by level (the headline), task types, and one table per dataset."""
    shown = [row for row in rows if row.results.get(NAME)]
    if not (shown and levels):
        return []
    tables = [_overall_table(shown, levels), _groups_table(shown, levels)]
    rated = [r for r in shown if r.kind != PUBLISHED and judged(r)]
    if rated:
        tables += judge_board_tables(rated, levels)
    return tables + [_dataset_table(task, shown, levels, bool(rated)) for task in TASKS]


def _overall_table(shown: list, levels: list[str]) -> BoardTable:
    return BoardTable(
        NAME,
        'LV-Eval: Overall by length level',
        levels + ['avg'],
        [
            BoardLine(
                r,
                [overall(r, lv) for lv in levels] + [average(r, levels)],
                remark=_absent_overall(r, levels),
                intervals=[overall_interval(r, lv) for lv in levels]
                + [average_interval(r, levels)],
            )
            for r in shown
        ],
        headline=True,
        plotted=len(levels),
        note='Overall at a level is the unweighted mean of the 11 datasets there, given '
        'only where all 11 have a result. ' + NOTE.format(resamples=resamples_in(shown, NAME)),
    )


def _groups_table(shown: list, levels: list[str]) -> BoardTable:
    return BoardTable(
        f'{NAME}-groups',
        'LV-Eval: task types (mean over datasets and levels)',
        list(GROUPS),
        [
            BoardLine(
                r,
                [group_score(r, g, levels) for g in GROUPS],
                intervals=[_pooled_interval(r, _group_cells(g, levels)) for g in GROUPS],
            )
            for r in shown
        ],
    )


def _dataset_table(task, shown: list, levels: list[str], rated: bool) -> BoardTable:
    """One dataset by level; the LLM judge's score in brackets where any row was rated."""
    lines = [
        BoardLine(
            r,
            [dataset_score(r, task.name, lv) for lv in levels],
            notes=[dataset_score(r, task.name, lv, JUDGE) for lv in levels] if rated else None,
            intervals=[interval(_distribution(r, task.name, lv)) for lv in levels],
        )
        for r in shown
    ]
    title = f'LV-Eval {task.name}' + (' (LLM judge in brackets)' if rated else '')
    return BoardTable(
        f'{NAME}-{task.name}', title, levels, lines, 3, note_label='LLM judge' if rated else ''
    )


def _board_value(row, dataset: str, level: str, metric: str) -> Optional[float]:
    return dataset_score(row, dataset, level, metric)


def judge_board_tables(rows: list, levels: list[str]) -> list[BoardTable]:
    """The judge's Overall by level for the judged rows, the agreement per dataset and the model
    order per level."""
    orders = order_by_level(rows, _board_value, levels, lambda row: row.label)
    return [
        BoardTable(
            f'{NAME}-judge',
            'LV-Eval LLM judge: Overall by length level',
            levels + ['avg'],
            [
                BoardLine(r, [judge_overall(r, lv) for lv in levels] + [_judge_average(r, levels)])
                for r in rows
            ],
            note="The judge rates each answer 0 to 10 (the LV-Eval v2 paper's prompts); a "
            "dataset's judge score is the mean rating x 10 over its rated samples; Overall as for "
            'the keyword score.',
        ),
        BoardTable(
            f'{NAME}-judge-agreement',
            'LV-Eval keyword vs LLM judge: Spearman per dataset',
            ['cells', 'spearman'],
            [
                BoardLine(ItemLine(dataset), [float(cells), rho])
                for dataset, cells, rho in agreement_by_dataset(rows, _board_value, levels)
            ],
            note="Rank correlation of the two scores over the dataset's (model, level) cells.",
            label='dataset',
        ),
        BoardTable(
            f'{NAME}-judge-order',
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


def _judge_average(row, levels: list[str]) -> Optional[float]:
    return mean([judge_overall(row, level) for level in levels])


def _group_cells(group: str, levels: list[str]) -> list[tuple[str, str]]:
    return [(t.name, lv) for t in TASKS if t.group == group for lv in levels]


def tidy(row, levels: list[str]) -> Iterator[tuple]:
    """(table, item, level, metric, value, interval) for every number of a row."""
    for level in levels:
        yield (
            'overall',
            'all datasets',
            level,
            'score',
            overall(row, level),
            overall_interval(row, level),
        )
    yield (
        'overall',
        'all datasets',
        'avg',
        'score',
        average(row, levels),
        average_interval(row, levels),
    )
    for group in GROUPS:
        yield (
            'group',
            group,
            'all',
            'score',
            group_score(row, group, levels),
            _pooled_interval(row, _group_cells(group, levels)),
        )
    for task in TASKS:
        for level in levels:
            yield (
                'dataset',
                task.name,
                level,
                'score',
                dataset_score(row, task.name, level),
                interval(_distribution(row, task.name, level)),
            )
    if judged(row):
        for level in levels:
            yield 'overall', 'all datasets', level, JUDGE, judge_overall(row, level), None
        for task in TASKS:
            for level in levels:
                yield (
                    'dataset',
                    task.name,
                    level,
                    JUDGE,
                    dataset_score(row, task.name, level, JUDGE),
                    None,
                )


def json_fields(row, levels: list[str]) -> dict:
    """The row's Overall per level and its average, rounded as the board shows them."""
    fields = {
        'overall': {level: _rounded(overall(row, level)) for level in levels},
        'average': _rounded(average(row, levels)),
        'overall_interval': {level: overall_interval(row, level) for level in levels},
        'average_interval': average_interval(row, levels),
    }
    if judged(row):
        fields['judge_overall'] = {level: _rounded(judge_overall(row, level)) for level in levels}
    return fields


def _rounded(value: Optional[float]) -> Optional[float]:
    return None if value is None else rounded(value)
