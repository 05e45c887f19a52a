"""LV-Eval behind the package's ``Benchmark`` interface: its cells are (dataset, length level)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..benchmarks import Benchmark, Cell, LengthUnit, argument, mark_synthetic
from ..commands.arguments import COUNT, SCALE
from ..sizes import by_size
from ..text import length
from . import report as tables
from .tasks import TASKS_BY_NAME, split_abbr

# The README's table names are the dataset names with dashes, and loogle_MIR is "loogle-MR".
_PUBLISHED_TABLES = {name.replace('_', '-').replace('MIR', 'MR'): name for name in TASKS_BY_NAME}
_PUBLISHED_OVERALL = 'Overall Result'
# The levels' unit: words for English, characters (whitespace excluded) for Chinese.
_LENGTH_UNITS = {
    'en': LengthUnit('words', lambda text: length(text, 'en')),
    'zh': LengthUnit('characters', lambda text: length(text, 'zh')),
}


class LVEval(Benchmark):
    name = tables.NAME
    title = 'LV-Eval'
    # The official metric, and the LLM judge's score where a judge rated the run.
    result_metrics = (tables.KEYWORD, tables.JUDGE)
    board_metrics = (tables.KEYWORD, tables.JUDGE)
    classes = (
        'opencompass_lveval.lveval.dataset:LVEvalDataset',
        'opencompass_lveval.lveval.evaluator:LVEvalEvaluator',
        'opencompass_lveval.lveval.evaluator:LVEvalJudgeEvaluator',
    )
    dataset_configs = ('datasets/lveval/lveval_gen.py:lveval_datasets',)
    depth_legend = 'for LV-Eval the tenth of the context where the answer first occurs'
    synth_arguments = (
        argument('--count', type=COUNT, default=4, help='records per LV-Eval subset (default 4)'),
        argument(
            '--scale',
            type=SCALE,
            default=100,
            help='divide the LV-Eval level lengths by this (default 100: 16k -> 160 words)',
        ),
    )

    def split_abbr(self, abbr: str) -> Optional[Cell]:
        found = split_abbr(abbr)
        return (found[0].name, found[1]) if found else None

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        found = split_abbr(abbr)
        return _LENGTH_UNITS[found[0].language] if found else None

    def has_data(self, root: Path) -> bool:
        from .data import find_subsets

        return bool(find_subsets(root))

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from ..errors import DataError
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
            ok = f'ok (synthetic, {found.records} records)' if found.synthetic else ok
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
            f'wrote {len(paths)} LV-Eval subsets ({count} records each, lengths / {scale}) '
            f'to {out_dir}'
        )

    def demo_datasets(self, path: str) -> list[dict]:
        """Every dataset at every level: ``data synth`` writes all 55 subsets."""
        from .entries import dataset_configs, lveval_entries

        return dataset_configs(lveval_entries(path))

    def summary(self, abbrs: list[str]) -> tuple[list, list[dict]]:
        from .entries import lveval_summary_abbrs, lveval_summary_groups

        levels = by_size(found[1] for abbr in abbrs if (found := split_abbr(abbr)))
        return lveval_summary_abbrs(levels), lveval_summary_groups(levels)

    def build_kinds(self):
        from .commands import BUILD_KINDS

        return BUILD_KINDS

    def commands(self):
        from .commands import add_judge_parser, add_score_parser

        return [add_score_parser, add_judge_parser]

    def official_prompt(self, abbr: str, record: dict) -> Optional[tuple[str, int]]:
        found = split_abbr(abbr)
        if found is None:
            return None
        task = found[0]
        return task.prompt.format(
            context=record['context'], input=record['input']
        ), task.max_out_len

    # Reports and leaderboards: the tables of ``report.py``.
    report = staticmethod(tables.report)
    record_scores = staticmethod(tables.record_scores)
    record_depths = staticmethod(tables.record_depths)
    depth_maps = staticmethod(tables.depth_maps)
    pooled_cells = staticmethod(tables.pooled_cells)
    board_sizes = staticmethod(tables.board_levels)
    board_tables = staticmethod(tables.board_tables)
    tidy = staticmethod(tables.tidy)
    json_fields = staticmethod(tables.json_fields)
    headline = staticmethod(tables.average)

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The LV-Eval README's Overall and per-dataset tables (model x level); a model named
        ``Model:dataset`` is one model's per-dataset table."""
        from ..leaderboard.published import DATA, number

        with open(DATA / 'published_lveval.csv', newline='', encoding='utf-8') as stream:
            reader = csv.DictReader(stream)
            levels = [name for name in reader.fieldnames if re.fullmatch(r'\d+k', name)]
            for line in reader:
                model, table = line['model'], line['table']
                dataset = tables.OVERALL if table == _PUBLISHED_OVERALL else None
                dataset = dataset or _PUBLISHED_TABLES.get(table)
                if ':' in model:
                    model, dataset = model.split(':', 1)
                if dataset not in TASKS_BY_NAME and dataset != tables.OVERALL:
                    continue
                # A table of its own (not the Overall or a dataset's) says what it holds.
                source = line['source']
                if table != _PUBLISHED_OVERALL and table not in _PUBLISHED_TABLES:
                    source = f'{source} ({table})'
                for level in levels:
                    value = number(line[level])
                    if value is not None:
                        yield model, source, (dataset, level), {'score': value}

    def summary_groups(self, abbrs: list[str], named: set[str]) -> tuple[list[dict], list[str]]:
        """A ``LVEval_{level}`` group (the average over the 11 datasets) for every level among
        the run's datasets that the configured groups do not cover, and its rows."""
        from .entries import level_groups

        subsets = [
            (abbr, found[1])
            for abbr in abbrs
            if (found := split_abbr(abbr)) and f'LVEval_{found[1]}' not in named
        ]
        extra = by_size(level for _, level in subsets)
        rows = [f'LVEval_{level}' for level in extra] + [abbr for abbr, _ in subsets]
        return level_groups(extra), rows if extra else []
