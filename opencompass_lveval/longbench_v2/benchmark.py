"""LongBench v2 as a declared benchmark: pred.py's four settings (tasks) at the three length
classes (levels), difficulty as a per-record factor, result.py's table in the report.

- Cells: ``LongBenchV2_{setting}_{length}``, one OpenCompass dataset each (``dataset.py``), every
  one reading the official ``data.json``. Chain of thought answers in two calls
  (``framework/answer_call.py``): the first with the document and room for the reasoning, the
  second (``answer_prompt``) without it, quoting the first reply; an empty first reply makes no
  second call.
- ``mode`` (a dataset option): ``official`` fills the templates as pred.py does and drops the
  records whose reply is empty; ``default`` fills in one pass and counts them wrong. The model's
  ``inputs='official', official='longbench_v2'`` cuts and sends as pred.py does.
- The report adds result.py's table (Overall, Easy, Hard, Short, Medium, Long) per model and
  setting, counted from each record's judgement exactly as result.py counts a result file.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Optional

from ..framework.answer_call import AnswerCall
from ..framework.benchmarks import OfficialScorer, PromptReading, argument
from ..framework.declared import dataset_config
from ..framework.factors import Factor
from ..framework.grid import GridBenchmark
from ..report.tables import Table
from . import prompts, requests
from .tasks import ANSWER_MAX_TOKENS, CHOICES, DIFFICULTIES, LENGTHS, SETTINGS, setting_named

HERE = 'opencompass_lveval.longbench_v2'
DEFAULT_RAG = 8  # pred.py --rag N: the chunks of the retrieval setting (the golden set's 8)
SYNTHETIC_COUNT = 12  # records of `lveval data synth` (two per difficulty x length)
TABLE_COLUMNS = ('Overall', 'Easy', 'Hard', 'Short', 'Medium', 'Long')
_ASKS = re.compile(r'What is the correct answer to this question: .*\nChoices:\n\(A\) ', re.S)


def answer_prompt(record: Mapping, first_reply: str, mode: str = 'default', rag: int = 0):
    """The chain of thought's second call (pred.py's ``0shot_cot_ans``): the question, choices
    and first reply, no document; None where the first reply is empty (no second call)."""
    setting = setting_named('cot')
    without_document = {**record, 'context': ''}  # the answer template has no $DOC$
    return requests.answer_prompt(without_document, setting, first_reply, mode, rag)


def kept_details(result: Optional[dict]) -> list[dict]:
    """The per-record lines of a result (what result.py's table counts), each value as the
    evaluator gave it (OpenCompass wraps them in a list per replica)."""
    from ..report.results import detail_value

    return [
        {key: detail_value(detail, key) for key in detail}
        for detail in (result or {}).get('details') or []
    ]


class LongBenchV2(GridBenchmark):
    name, title, prefix = 'longbench_v2', 'LongBench v2', 'LongBenchV2'
    classes = (f'{HERE}.dataset:LongBenchV2Dataset', f'{HERE}.dataset:LongBenchV2Evaluator')
    dataset_configs = ('datasets/longbench_v2/longbench_v2_gen.py:longbench_v2_datasets',)
    tasks = tuple(setting.name for setting in SETTINGS)
    sizes = LENGTHS
    level_unit = 'words'
    headline_metric = 'accuracy'
    result_metrics = board_metrics = ('accuracy',)
    score_field = 'judge'
    task_word, task_plural = 'setting', 'settings'
    size_word, size_plural, size_name = 'length', 'lengths', 'length class'
    factors = (
        Factor('difficulty', 'difficulty', 'difficulties', DIFFICULTIES, record_field='difficulty'),
    )
    summary_by = ('task', 'size')
    summary_metric = 'accuracy'
    data_looked_for = 'data.json (THUDM/LongBench-v2) in a folder longbench_v2 or the folder itself'
    extractive_reading = PromptReading(question=r'What is the correct answer to this question:')
    official_scorer = OfficialScorer(
        help="pred.py's result files in RESULTS_DIR scored as result.py scores them; its table "
        'written to result.txt beside the folder (or --out)',
        arguments=(
            argument('results_dir', help="the folder of pred.py's result files (--save_dir)"),
            argument(
                '--mode',
                choices=prompts.MODES,
                default='default',
                help="official: result.py's row order and stored judgements; default: rows "
                'sorted, judgements read again from the replies',
            ),
            argument(
                '--data',
                help='the official data.json: records a file lacks count wrong (default mode)',
            ),
            argument('--out', help='where to write the table (default: result.txt beside it)'),
        ),
        score=f'{HERE}.score:score_and_write',
    )

    # Data ----------------------------------------------------------------------------------------

    def _data_file(self, root: Path) -> Optional[Path]:
        for folder in (Path(root) / self.name, Path(root)):
            if (folder / 'data.json').is_file():
                return folder / 'data.json'
        return None

    def has_data(self, root: Path) -> bool:
        return self._data_file(root) is not None

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        from collections import Counter

        from ..files.errors import LongBenchV2DataError
        from .data import SCORING_FIELDS, load_records

        path = self._data_file(root)
        if path is None:
            return [f'no {self.title} data.json in {root} or {root / self.name}'], False
        try:
            records = load_records(path, SCORING_FIELDS)
        except LongBenchV2DataError as exc:
            return [str(exc)], False
        classes = Counter((r['length'], r['difficulty']) for r in records)
        shown = ', '.join(
            f'{length}/{difficulty} {classes[length, difficulty]}'
            for length in LENGTHS
            for difficulty in DIFFICULTIES
        )
        return [f'{path}: {len(records)} records ok ({shown})'], True

    synth_arguments = (
        argument(
            '--longbench-v2-count',
            type=int,
            default=SYNTHETIC_COUNT,
            help='synthetic LongBench v2 records (cycling through difficulty x length)',
        ),
    )

    def write_synthetic(self, out_dir: Path, *, seed: int, longbench_v2_count: int, **_) -> str:
        from .synthetic import write_synthetic

        path = write_synthetic(Path(out_dir) / self.name, longbench_v2_count, seed)
        return f'wrote {longbench_v2_count} {self.title} records to {path}'

    # OpenCompass configs -------------------------------------------------------------------------

    def default_data_dir(self) -> str:
        return 'data/longbenchv2'

    def cell_fields(self, task: str, size: str) -> dict:
        return {'abbr': self.abbr(task, size), 'setting': task, 'length': size}

    def cell_config(
        self,
        task: str,
        size: str,
        path: str,
        mode: str = 'default',
        rag: int = DEFAULT_RAG,
        **dataset,
    ) -> dict:
        """One (setting, length): ``mode`` 'default' or 'official' (fill and empty replies),
        ``rag`` the chunks of the retrieval setting; ``dataset`` adds keys (``limit``)."""
        setting = setting_named(task)
        prompts.check_mode(mode)
        rag = rag if setting.uses_retrieval else 0
        official = mode == 'official'
        has_document = '$DOC$' in setting.template
        columns = (
            ['prompt']
            if official
            else [
                field
                for placeholder, field in prompts.FIELDS.items()
                if placeholder in setting.template
            ]
        )
        call = None
        if setting.answer_template is not None:
            call = AnswerCall(
                f'{HERE}.benchmark:answer_prompt', ANSWER_MAX_TOKENS, {'mode': mode, 'rag': rag}
            )
        return dataset_config(
            dict(
                type=f'{HERE}.dataset.LongBenchV2Dataset',
                **self.cell_fields(task, size),
                path=path,
                mode=mode,
                rag=rag,
                **dataset,
            ),
            dict(input_columns=columns, output_column='answer'),
            '{prompt}' if official else prompts.template_fields(setting.template),
            None if official or not has_document else 'context',
            setting.first_max_tokens,
            dict(type=f'{HERE}.dataset.LongBenchV2Evaluator', mode=mode),
            answer_call=call,
        )

    def demo_datasets(self, path: str) -> list[dict]:
        return self.configs(f'{path}/{self.name}')

    # Results -------------------------------------------------------------------------------------

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        if not _ASKS.search(prompt):
            return None
        return f'The correct answer is ({rng.choice(CHOICES)})'

    def report(self, results: dict, out: Path) -> tuple[list[Table], list]:
        tables, plots = super().report(results, out)
        table = self.result_table(results)
        return tables + ([table] if table.rows else []), plots

    def result_table(self, results: dict) -> Table:
        """result.py's table per model and setting, from its records' judgements at every
        length present (a setting with no result at some length is left out)."""
        from .metrics import NO_RECORDS, row_cells

        rows = []
        for model, found in results.items():
            for task in self.tasks:
                cells = [found.get(self.abbr(task, size)) for size in self.sizes]
                if any(cell is None or 'details' not in cell for cell in cells):
                    continue
                lines = [line for cell in cells for line in kept_details(cell)]
                values = row_cells(lines)
                rows.append([model, task] + [None if v == NO_RECORDS else float(v) for v in values])
        return Table(
            f"{self.title}: result.py's table (accuracy %)",
            f'{self.name}_result_table',
            ['model', self.task_word, *TABLE_COLUMNS],
            rows,
        )

    def published(self) -> Iterator:
        return iter(())
