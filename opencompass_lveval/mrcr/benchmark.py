"""MRCR as a declared benchmark, both versions: tasks ``{version}_{n}needle`` (OpenAI MRCR and
MRCR v2 at 2, 4 and 8 needles), levels the token bins by their upper edge (``8k`` is (4096,
8192]; OpenAI's to ``1m``, MRCR v2's to ``8m`` and its cumulative set ``upto128k``).

Each prompt is a conversation (chat messages) that a cut shortens by whole early turns; each
version is graded by its own grader (``metrics.py``). The report adds GDM's two reported cells
(8 needles: ``upto_128K`` and ``at_1M``); ``lveval score --benchmark mrcr_openai`` and
``--benchmark mrcr_v2`` grade JSON-lines files of replies.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..framework.benchmarks import OfficialScorer, argument
from ..framework.declared import dataset_config
from ..framework.grid import GridBenchmark
from ..prompts.messages import TURNS
from ..report.tables import Table
from .tasks import (
    CUMULATIVE_LEVEL,
    NEEDLES,
    OPENAI,
    REPORTED_CELLS,
    REPORTED_NEEDLES,
    V2,
    VERSIONS,
    levels,
)

HERE = 'opencompass_lveval.mrcr'
# Tokens each reply may take: MRCR's answers are whole pieces of writing (a poem, a story).
MAX_OUT_LEN = 1024
SYNTHETIC_COUNT = 4  # rows per needle count of `lveval data synth`
SYNTHETIC_WORDS = 6000  # an OpenAI-style synthetic row's words: the bin (4096, 8192] in words
_PREPEND = re.compile(r'Prepend (\S+) to the')


def task_of(version: str, needles: int) -> str:
    return f'{version}_{needles}needle'


TASKS = {task_of(v, n): (v, n) for v in VERSIONS for n in NEEDLES}


def _scorer(version, name: str, fields: str) -> OfficialScorer:
    return OfficialScorer(
        help=f'{version.title}: each line of a JSON-lines FILE ({fields}) graded by the '
        'official grader; one line per input line written to --out, in order',
        arguments=(
            argument('path', metavar='FILE', help='JSON lines of replies to grade'),
            argument('--out', required=True, help='the JSON-lines file of scores to write'),
        ),
        score=f'{HERE}.score:score_{version.name}_file',
        name=name,
    )


class MRCR(GridBenchmark):
    name, title, prefix = 'mrcr', 'MRCR', 'MRCR'
    classes = (f'{HERE}.dataset:MRCRDataset', f'{HERE}.dataset:MRCREvaluator')
    dataset_configs = ('datasets/mrcr/mrcr_gen.py:mrcr_datasets',)
    tasks = tuple(TASKS)
    level_unit = 'tokens'
    level_tokens = {name: span[1] for v in VERSIONS.values() for name, span in levels(v).items()}
    headline_metric = 'score'
    score_scale = 100.0  # the graders give fractions
    size_word, size_plural, size_name = 'bin', 'bins', 'token bin'
    summary_by = ('task',)
    data_looked_for = (
        'openai/mrcr parquet files ({n}needle/{n}needle_0.parquet) or MRCR v2 CSV files '
        '(mrcr_v2p1_*.csv) under a folder mrcr'
    )
    official_scorer = (
        _scorer(OPENAI, 'mrcr_openai', 'response, answer, random_string_to_prepend'),
        _scorer(V2, 'mrcr_v2', 'prediction, target'),
    )

    def sizes_of(self, task: str) -> tuple[str, ...]:
        return tuple(levels(VERSIONS[TASKS[task][0]]))

    # Data ----------------------------------------------------------------------------------------

    def _folder(self, root: Path) -> Path:
        return Path(root) / self.name if (Path(root) / self.name).is_dir() else Path(root)

    def _files(self, root: Path) -> list[Path]:
        from .tasks import openai_file_needles, v2_file_cell

        folder = self._folder(root)
        if not folder.is_dir():
            return []
        return sorted(
            path
            for path in folder.rglob('*')
            if path.is_file() and (openai_file_needles(path.name) or v2_file_cell(path.name))
        )

    def has_data(self, root: Path) -> bool:
        return bool(self._files(root))

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from ..files.errors import MRCRDataError
        from .data import iter_v2_rows, read_openai

        lines, ok = [], True
        for path in self._files(root):
            try:
                if path.suffix == '.parquet':
                    rows = read_openai(path, prompts=False).num_rows
                else:
                    rows = sum(1 for _ in iter_v2_rows(path))
                lines.append(f'{path.relative_to(self._folder(root))}: {rows} rows ok')
            except MRCRDataError as exc:
                lines.append(str(exc))
                ok = False
        if not lines:
            return [f'no {self.title} files under {self._folder(root)}'], False
        return lines, ok

    synth_arguments = (
        argument(
            '--mrcr-count',
            type=int,
            default=SYNTHETIC_COUNT,
            help='synthetic MRCR rows per needle count and version',
        ),
    )

    def write_synthetic(self, out_dir: Path, *, seed: int, mrcr_count: int, **_) -> str:
        from .synthetic import write_openai_synthetic, write_v2_synthetic

        folder = Path(out_dir) / self.name
        openai = write_openai_synthetic(folder / 'openai', mrcr_count, seed, SYNTHETIC_WORDS)
        v2 = write_v2_synthetic(folder / 'v2', mrcr_count, seed)
        return (
            f'wrote {len(openai)} OpenAI MRCR files and {len(v2)} MRCR v2 files ({mrcr_count} '
            f'rows per needle count, bin (4096, 8192] in words) to {folder}'
        )

    # OpenCompass configs -------------------------------------------------------------------------

    def default_data_dir(self) -> str:
        return 'data/mrcr'

    def cell_fields(self, task: str, size: str) -> dict:
        version, needles = TASKS[task]
        return {
            'abbr': self.abbr(task, size),
            'version': version,
            'needles': needles,
            'level': size,
        }

    def cell_config(
        self, task: str, size: str, path: str, tokens: str = 'o200k_base', **dataset
    ) -> dict:
        """One (version and needles, level) reading ``path`` (``{path}/openai`` and
        ``{path}/v2`` where those folders exist); ``tokens``: what OpenAI MRCR's bins count
        (``dataset.COUNTERS``); ``dataset`` adds keys (``limit``)."""
        version = TASKS[task][0]
        options = {'tokens': tokens} if version == OPENAI.name else {}
        return dataset_config(
            dict(
                type=f'{HERE}.dataset.MRCRDataset',
                **self.cell_fields(task, size),
                path=f'{path}/{version}',
                **options,
                **dataset,
            ),
            dict(input_columns=['messages'], output_column='answer'),
            '{messages}',
            TURNS,
            MAX_OUT_LEN,
            dict(type=f'{HERE}.dataset.MRCREvaluator', version=version),
            messages='messages',
        )

    def demo_datasets(self, path: str) -> list[dict]:
        return [
            self.cell_config(task, '8k', f'{path}/{self.name}', tokens='words')
            for task in self.tasks
        ]

    # Results -------------------------------------------------------------------------------------

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        """The random string the last request asks for, then a random paragraph of the
        conversation: a reply of the right form that picks no particular piece."""
        asked = _PREPEND.findall(prompt)
        if not asked:
            return None
        paragraphs = [p for p in prompt.split('\n\n') if p.strip()]
        return asked[-1] + rng.choice(paragraphs)

    def report(self, results: dict, out: Path) -> tuple[list[Table], list]:
        tables, plots = super().report(results, out)
        table = self.reported_cells(results)
        return tables + ([table] if table.rows else []), plots

    def reported_cells(self, results: dict) -> Table:
        """GDM's reported cells of each model with MRCR v2 results at 8 needles: ``upto_128K``
        (the cumulative set, or every sample of the five buckets to 128K together) and
        ``at_1M`` (the bucket (524288, 1048576]), in percent."""
        from ..report.results import detail_value

        task = task_of(V2.name, REPORTED_NEEDLES)

        def scores(found: dict, level: str) -> Optional[list[float]]:
            result = found.get(self.abbr(task, level))
            if not result or not result.get('details'):
                return None
            return [float(detail_value(d, 'score')) for d in result['details']]

        low, high = REPORTED_CELLS['upto_128K']
        buckets = [n for n, span in levels(V2).items() if low <= span[0] and span[1] <= high]
        rows = []
        for model, found in results.items():
            upto = scores(found, CUMULATIVE_LEVEL)
            if upto is None:
                parts = [scores(found, level) for level in buckets if level != CUMULATIVE_LEVEL]
                upto = None if None in parts else [s for part in parts for s in part]
            at = scores(found, '1m')
            if upto is None and at is None:
                continue
            rows.append([model, _percent(upto), _percent(at)])
        return Table(
            f"{self.title}: GDM's reported cells (MRCR v2, {REPORTED_NEEDLES} needles, score %)",
            f'{self.name}_reported_cells',
            ['model', 'upto_128K', 'at_1M'],
            rows,
        )

    def published(self) -> Iterator:
        return iter(())


def _percent(scores: Optional[list[float]]) -> Optional[float]:
    return 100 * sum(scores) / len(scores) if scores else None
