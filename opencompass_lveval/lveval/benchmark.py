"""LV-Eval on the framework's ``GridBenchmark``: its cells are (dataset, length level), its Overall
at a level the unweighted mean of the 11 datasets (the official leaderboard's rule), its task
types OpenCompass's groups. What is its own: its data layout (the official zips, the release's
record counts, its builders), the official prompts and metrics per dataset, its published tables,
the answer depths read from the run's prompts and the LLM judge's score beside the keyword score
(``report.py``)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..commands.arguments import COUNT, SCALE
from ..framework.benchmarks import Cell, LengthUnit, argument, mark_synthetic
from ..framework.declared import dataset_config
from ..framework.grid import GridBenchmark
from ..prompts.text import length
from ..report.rounding import counted
from ..report.tables import PUBLISHED
from . import report as tables
from .commands import SCORER
from .report import JUDGE, KEYWORD
from .tasks import GROUPS, LEVELS, TASKS, TASKS_BY_NAME, split_abbr

# The README's table names are the dataset names with dashes, and loogle_MIR is "loogle-MR".
_PUBLISHED_TABLES = {name.replace('_', '-').replace('MIR', 'MR'): name for name in TASKS_BY_NAME}
_PUBLISHED_OVERALL = 'Overall Result'
# The levels' unit: words for English, characters (whitespace excluded) for Chinese.
_LENGTH_UNITS = {
    'en': LengthUnit('words', lambda text: length(text, 'en'), 'English'),
    'zh': LengthUnit('characters', lambda text: length(text, 'zh'), 'Chinese'),
}


class LVEval(GridBenchmark):
    name, title, prefix = 'lveval', 'LV-Eval', 'LVEval'
    tasks = tuple(task.name for task in TASKS)
    sizes = LEVELS
    # The official metric, and the LLM judge's score where a judge rated the run.
    result_metrics = board_metrics = (KEYWORD, JUDGE)
    score_scale = 100  # LVEvalEvaluator's per-record scores are fractions
    task_word, task_plural, size_word, size_plural = 'dataset', 'datasets', 'level', 'levels'
    size_name = 'length level'
    overall = 'Overall'
    task_groups = {group: tuple(t.name for t in TASKS if t.group == group) for group in GROUPS}
    task_groups_name = 'task types'
    # OpenCompass's LV-Eval summary (same names); rows overall, per level, task type, dataset.
    summary_by, summary_all = ('task', 'group', 'size', 'all'), 'qa'
    summary_rows_by = ('all', 'size', 'group', 'task')
    board_title = '{title} {task}'
    board_note_metric, board_note_label, board_note_rated = JUDGE, 'LLM judge', True
    official_scorer = SCORER  # ``lveval score PRED_DIR``: evaluation.py's result.json and .csv
    classes = (
        'opencompass_lveval.lveval.dataset:LVEvalDataset',
        'opencompass_lveval.lveval.evaluator:LVEvalEvaluator',
        'opencompass_lveval.lveval.evaluator:LVEvalJudgeEvaluator',
    )
    dataset_configs = ('datasets/lveval/lveval_gen.py:lveval_datasets',)
    depth_legend = 'for LV-Eval the tenth of the context where the answer first occurs'
    data_looked_for = '{dataset}_{level}.jsonl files or the official {dataset}.zip'
    synth_arguments = (
        argument('--count', type=COUNT, default=4, help='records per LV-Eval subset (default 4)'),
        argument(
            '--scale',
            type=SCALE,
            default=100,
            help='divide the LV-Eval level lengths by this (default 100: 16k -> 160 words)',
        ),
    )

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        found = split_abbr(abbr)
        return _LENGTH_UNITS[found[0].language] if found else None

    # Data and configs ---------------------------------------------------------------------------

    def has_data(self, root: Path) -> bool:
        from .data import find_subsets

        return bool(find_subsets(root))

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from ..files.errors import DataError
        from .data import GET_DATA_HINT, check_folder

        reports = list(check_folder(root))
        if not reports:
            raise DataError(
                f'{root} holds no LV-Eval subsets ({{dataset}}_{{level}}.jsonl files or the '
                f'official zips). {GET_DATA_HINT}'
            )
        width = max(len(r.subset) for r in reports)
        lines = [f'{"LV-Eval subset":<{width}}  records/expected  status']
        for found in reports:
            ok = 'ok' if found.official else 'ok (non-official level)'
            ok = f'ok (synthetic, {counted(found.records, "record")})' if found.synthetic else ok
            expected = found.expected if found.official else '-'
            lines.append(
                f'{found.subset:<{width}}  {found.records:>7}/{expected:<8}  '
                f'{ok if found.ok else found.problem}'
            )
        official = [r for r in reports if r.official]
        missing = sum(r.source is None for r in official)
        bad = [r for r in reports if not r.ok]
        extra = len(reports) - len(official)
        summary = (
            f'{len(official) - sum(not r.ok for r in official)} of {len(official)} official '
            f'subsets ok, {missing} missing'
            if official
            else 'no subset at an official level'
        )
        synthetic = sum(r.synthetic for r in reports)
        summary += f' ({synthetic} synthetic)' if synthetic else ''
        lines.append(
            f'{summary}, {len(bad) - missing} with problems'
            + (f'; {extra} at non-official levels' if extra else '')
        )
        if missing:
            lines.append(GET_DATA_HINT)
        return lines, not bad

    def write_synthetic(self, out_dir: Path, *, seed: int, count: int, scale: int) -> str:
        from .synthetic import write_synthetic

        paths = write_synthetic(out_dir, count=count, scale=scale, seed=seed)
        mark_synthetic(out_dir)
        return (
            f'wrote {len(paths)} LV-Eval subsets ({counted(count, "record")} each, lengths / {scale}) '
            f'to {out_dir}'
        )

    def default_data_dir(self) -> str:
        from .data import default_data_dir

        return default_data_dir()

    def cell_fields(self, task: str, size: str) -> dict:
        return {'abbr': self.abbr(task, size), 'name': TASKS_BY_NAME[task].subset(size)}

    def cell_config(self, task: str, size: str, path: str, **options) -> dict:
        """The official prompt (``{context}`` and ``{input}`` filled in one pass), generation
        length and metric of the dataset; a middle cut may shorten the context only."""
        found = TASKS_BY_NAME[task]
        return dataset_config(
            dict(
                type='opencompass_lveval.lveval.dataset.LVEvalDataset',
                **self.cell_fields(task, size),
                path=path,
            ),
            dict(
                input_columns=['context', 'input'],
                output_column='answers',
                train_split='test',
                test_split='test',
            ),
            found.prompt,
            'context',
            found.max_out_len,
            dict(type='opencompass_lveval.lveval.evaluator.LVEvalEvaluator', metric=found.metric),
        )

    def demo_datasets(self, path: str) -> list[dict]:
        """Every dataset at every level: ``data synth`` writes all 55 subsets."""
        return self.configs(path)

    def build_kinds(self):
        from .commands import BUILD_KINDS

        return BUILD_KINDS

    def commands(self):
        from .commands import add_judge_parser

        return [add_judge_parser]

    def official_prompt(self, abbr: str, record: dict) -> Optional[tuple[str, int]]:
        found = split_abbr(abbr)
        if found is None:
            return None
        task = found[0]
        return task.prompt.format(
            context=record['context'], input=record['input']
        ), task.max_out_len

    # Its own presentation: answer depths and the LLM judge (``report.py``) --------------------

    def record_depths(self, run: Path, model: str, abbr: str, result: dict) -> Optional[list]:
        return tables.record_depths(run, model, abbr, result)

    def own_report_tables(self, results: dict, sizes: list[str]) -> list:
        return tables.judge_tables(results, sizes)

    def own_board_tables(self, rows: list, sizes: list[str]) -> list:
        rated = [row for row in rows if row.kind != PUBLISHED and self.rated(row)]
        return tables.judge_board_tables(self, rated, sizes) if rated else []

    def json_fields(self, row, sizes: list[str]) -> dict:
        from ..report.rounding import rounded

        fields = super().json_fields(row, sizes)
        if self.rated(row):
            fields['judge_overall'] = {
                size: None
                if (value := self.overall_value(row, size, JUDGE)) is None
                else rounded(value)
                for size in sizes
            }
        return fields

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The LV-Eval README's Overall and per-dataset tables (model x level); a model named
        ``Model:dataset`` is one model's per-dataset table."""
        from ..leaderboard.published import DATA, number

        with open(DATA / 'published_lveval.csv', newline='', encoding='utf-8') as stream:
            reader = csv.DictReader(stream)
            levels = [name for name in reader.fieldnames if re.fullmatch(r'\d+k', name)]
            for line in reader:
                model, table = line['model'], line['table']
                dataset = self.overall if table == _PUBLISHED_OVERALL else None
                dataset = dataset or _PUBLISHED_TABLES.get(table)
                if ':' in model:
                    model, dataset = model.split(':', 1)
                if dataset not in TASKS_BY_NAME and dataset != self.overall:
                    continue
                # A table of its own (not the Overall or a dataset's) says what it holds.
                source = line['source']
                if table != _PUBLISHED_OVERALL and table not in _PUBLISHED_TABLES:
                    source = f'{source} ({table})'
                for level in levels:
                    value = number(line[level])
                    if value is not None:
                        yield model, source, (dataset, level), {'score': value}
