"""RULER as a declared benchmark: 13 tasks at lengths in the model's own tokens (4k to 128k
shipped, any ``Nk`` or ``Nm`` built on request), the papers' categories (niah, vt, cwe, fwe, qa)
as a second factor, and each task scored by its official metric.

The headline metric is called ``score`` for every task, as evaluate.py's summary calls it; what
it is differs by task as officially: ``string_match_all`` (the fraction of a sample's answers
found) for niah, vt, cwe and fwe, ``string_match_part`` (any accepted answer found) for qa; a
cell's score is evaluate.py's task score, rounded to 2 decimals (``cell_scores``). The data is
the official layout, ``<tokens>/<task>/validation.jsonl``, built per model with its tokenizer
(``model_configs``, built in the run's driver before any task: ``prepare_data``) or read from a
folder ``lveval build ruler`` wrote. docs/ruler.md has the rest.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import uuid
from pathlib import Path
from typing import Optional

from ..framework.benchmarks import OfficialScorer, PromptReading, argument
from ..framework.declared import DeclaredBenchmark
from ..framework.factors import Factor
from .tasks import (
    CWE_TEMPLATE,
    FWE_TEMPLATE,
    LEVELS,
    NIAH_TEMPLATE,
    QA_TEMPLATE,
    TASKS,
    TASKS_BY_NAME,
    VT_TEMPLATE,
    LevelTokens,
    level_length,
)

FIELDS = ('index', 'input', 'outputs', 'length', 'length_w_model_temp', 'answer_prefix')
DATA_DIR_ENV = 'RULER_DATA_DIR'


def data_files(root: Path) -> list[Path]:
    """``<length>/<task>/validation.jsonl`` files anywhere below ``root``."""
    return sorted(
        path
        for path in Path(root).rglob('validation.jsonl')
        if path.is_file()
        and path.parent.name in TASKS_BY_NAME
        and path.parent.parent.name.isdigit()
    )


def file_problem(path: Path) -> tuple[int, Optional[str]]:
    """(records, the first problem or None) of one data file: every line an object with the
    official fields, its answers strings, its length within the folder's budget."""
    budget, records = int(path.parent.parent.name), 0
    with open(path, encoding='utf-8') as stream:
        for number, line in enumerate(stream, 1):
            try:
                record = json.loads(line)
            except ValueError as exc:
                return records, f'line {number}: not JSON ({exc})'
            if not isinstance(record, dict) or any(f not in record for f in FIELDS):
                return records, f'line {number}: lacks one of {", ".join(FIELDS)}'
            outputs = record['outputs']
            if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
                return records, f'line {number}: "outputs" is not a list of strings'
            if not isinstance(record['length'], int) or record['length'] > budget:
                return records, f'line {number}: length {record["length"]!r} over {budget}'
            records += 1
    return records, None if records else 'no records'


@functools.cache
def _synthetic_inputs(seed: int) -> Path:
    """The synthetic inputs of one seed, written once per process to a folder removed at exit."""
    import atexit
    import shutil
    import tempfile

    from .synthetic import write_inputs

    folder = Path(tempfile.mkdtemp(prefix='ruler-inputs-'))
    atexit.register(shutil.rmtree, folder, True)
    return write_inputs(folder, seed)


@functools.cache
def _synthetic_cell(task: str, size: str, count: int, seed: int) -> list[dict]:
    from .build import generate
    from .inputs import PUNKT_ENGLISH
    from .tokens import tiktoken_counter

    inputs = _synthetic_inputs(seed)
    punkt = inputs / 'nltk_data' / PUNKT_ENGLISH
    job = generate(
        task, level_length(size), tiktoken_counter(), inputs, seed=seed, count=count, punkt=punkt
    )
    return job.records


class Ruler(DeclaredBenchmark):
    name, title, prefix = 'ruler', 'RULER', 'RULER'
    tasks = tuple(task.name for task in TASKS)
    sizes = LEVELS
    level_unit = 'tokens'
    level_tokens = LevelTokens()
    size_word, size_plural, size_name = 'length', 'lengths', 'length'
    overall = 'Overall'
    factors = (
        Factor(
            'category',
            'category',
            'categories',
            of_task={task.name: task.category for task in TASKS},
        ),
    )
    summary_by, summary_all = ('size', 'all'), 'avg'
    data_file = '{tokens}/{task}/validation.jsonl'
    input_fields, answer_field = ('input', 'answer_prefix'), 'outputs'
    prompt, cut = '{input}{answer_prefix}', 'input'  # what pred/call_api.py sends
    max_out_len = {task.name: task.tokens_to_generate for task in TASKS}
    demo_sizes, demo_count = ('4k',), 4
    data_looked_for = '<tokens>/<task>/validation.jsonl files (the official layout)'
    dataset_configs = ('datasets/ruler/ruler_gen.py:ruler_datasets',)
    # The needle sentences before niah's question; the document sentences before qa's (the
    # instructions left out).
    extractive_reading = (
        PromptReading(r'\nWhat (?:is|are all) the special magic', keep='One of the special magic'),
        PromptReading(
            r'(?<=do not output any other words\.)\n\nQuestion: ',
            keep=r'^(?!Answer the question|Only give me|The following are given|Document \d+:)',
        ),
    )
    official_scorer = OfficialScorer(
        help='RULER predictions in the official layout (<task>.jsonl: pred, outputs, others, '
        'index), scored as evaluate.py scores them; writes summary.csv and submission.csv into '
        'the folder',
        arguments=(argument('pred_dir', metavar='PRED_DIR'),),
        score='opencompass_lveval.ruler.score:score_and_write',
    )

    # Data: the official layout, per model -------------------------------------------------------

    def default_data_dir(self) -> str:
        return os.environ.get(DATA_DIR_ENV) or 'data/ruler'

    def has_data(self, root: Path) -> bool:
        return bool(data_files(root))

    def check_data(self, root: Path) -> tuple[list[str], bool]:
        lines, bad = [], 0
        for path in data_files(root):
            records, problem = file_problem(path)
            where = path.relative_to(root)
            lines.append(f'{where}: {records} records, {problem or "ok"}')
            bad += problem is not None
        found = len(lines)
        lines.append(f'{found - bad} of {found} RULER files ok')
        return lines, bad == 0

    def data_folder(self, path, data: Optional[dict] = None) -> Path:
        """``path``, or where its ``data`` settings were built: the folder of the model's
        tokenizer fingerprint, template, seed and count under ``path`` (``build.model_folder``)."""
        if not data:
            return Path(path or '.')
        from .build import model_folder

        return model_folder(Path(path or self.default_data_dir()), data)

    def prepare_data(self, dataset_cfgs: list[dict]) -> None:
        """The per-model files these configs read, built where missing or out of date: per
        model folder, every (task, length) asked, in parallel processes, once."""
        from .build import data_settings, model_data
        from .tokens import tokenizer_folder

        wanted: dict[tuple, set] = {}
        for cfg in dataset_cfgs:
            if cfg.get('data'):
                found = data_settings(cfg['data'])
                where = (str(cfg.get('path') or self.default_data_dir()), *found.values())
                wanted.setdefault(where, set()).add((cfg['task'], level_length(cfg['size'])))
        for (cache, tokenizer, seed, count, template, inputs), cells in wanted.items():
            folder = model_data(
                tokenizer_folder(tokenizer),
                Path(cache),
                sorted(cells),
                Path(inputs) if inputs else None,
                seed=seed,
                count=count,
                template=template,
                log=print,
            )
            print(f'RULER data for {tokenizer}: {folder}')

    def model_configs(
        self,
        models: list[dict],
        sizes=None,
        tasks=None,
        path: Optional[str] = None,
        **data,
    ) -> tuple[list[dict], list[dict]]:
        """(datasets, model_dataset_combinations) for a config: each model paired with its own
        cells (``tasks`` at the ``sizes``, default the shipped 4k-128k, that its window
        ``max_seq_len`` holds), reading data built with its tokenizer (``tokenizer_path``, else
        ``path``) under ``path`` (default ``$RULER_DATA_DIR`` or ``data/ruler``); ``data``:
        seed, count, template, inputs (docs/ruler.md). ``datasets`` holds each cell once."""
        datasets, combinations = {}, []
        for model in models:
            tokenizer = model.get('tokenizer_path') or model.get('path')
            if not tokenizer:
                raise ValueError(
                    f'{model.get("abbr")}: no tokenizer_path or path, and RULER builds each '
                    "model's data with its tokenizer; for a CPU baseline read a folder `lveval "
                    "build ruler` wrote: named('ruler').configs(FOLDER)"
                )
            window = model.get('max_seq_len')
            fitting = [
                size for size in sizes or self.sizes if not window or level_length(size) <= window
            ]
            own = self.configs(path, fitting, tasks, data=dict(tokenizer=str(tokenizer), **data))
            combinations.append(dict(models=[model], datasets=own))
            for config in own:
                datasets.setdefault(config['abbr'], config)
        return list(datasets.values()), combinations

    # Scoring ------------------------------------------------------------------------------------

    def score_task_reply(self, task: str, reply: str, record: dict) -> dict[str, float]:
        """evaluate.py's per-sample score of the task's own metric, in percent."""
        from .metrics import SAMPLE_METRICS, postprocess_pred

        metric = SAMPLE_METRICS[TASKS_BY_NAME[task].metric]
        return {'score': 100 * metric(postprocess_pred(reply), record['outputs'])}

    def cell_scores(self, task: str, replies, records, means) -> dict[str, float]:
        """evaluate.py's task score: the mean of the samples' fractions x 100, rounded to 2."""
        from .metrics import METRICS, postprocess_pred

        found = METRICS[TASKS_BY_NAME[task].metric](
            [postprocess_pred(reply) for reply in replies],
            [record['outputs'] for record in records],
        )
        return {'score': found}

    def synthetic_records(self, task: str, size: str, count: int, seed: int) -> list[dict]:
        """The official generator's records on seeded synthetic inputs (``synthetic.py``),
        lengths counted with GPT-4's tokenizer (RULER's ``--tokenizer_type openai``); made once
        per process."""
        import copy

        return copy.deepcopy(_synthetic_cell(task, size, count, seed))

    def random_answer(self, prompt: str, rng: random.Random) -> Optional[str]:
        """A random answer of the form each task asks for: a number or UUID for a needle, as
        many variable names as asked (vt), the asked number of the prompt's listed words (cwe)
        or coded words (fwe), a span of a document (qa)."""
        for marker, answer in _RANDOM_ANSWERS:
            if marker in prompt:
                return answer(prompt, rng)
        return None

    def build_kinds(self):
        from .commands import BUILD_KINDS

        return BUILD_KINDS


def _needle(prompt: str, rng: random.Random) -> str:
    if 'special magic uuid' in prompt:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return str(rng.randint(10**6, 10**7 - 1))


def _some(found: list[str], wanted: int, rng: random.Random) -> str:
    distinct = sorted(set(found))
    return ', '.join(rng.sample(distinct, min(wanted, len(distinct))))


def _variables(prompt: str, rng: random.Random) -> str:
    """As many names of five capitals as asked (the chain's; every name in the text is one)."""
    asked = re.search(r'(\d+) variables are assigned', prompt)
    letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
    names = [''.join(rng.choices(letters, k=5)) for _ in range(int(asked[1]) if asked else 1)]
    return ', '.join(names)


def _common_words(prompt: str, rng: random.Random) -> str:
    listed = prompt[prompt.rfind(CWE_TEMPLATE[:30]) : prompt.rfind('\nQuestion:')]
    return _some(re.findall(r'\d+\. (\S+)', listed), 10, rng)


def _coded_words(prompt: str, rng: random.Random) -> str:
    text = prompt[prompt.find(FWE_TEMPLATE[:30]) : prompt.rfind('\nQuestion:')]
    coded = [word for word in text.split() if re.fullmatch(r'[a-z]{6}', word)]
    return _some(coded, 3, rng)


def _span(prompt: str, rng: random.Random) -> str:
    documents = prompt[: prompt.rfind('\n\nQuestion:')]
    words = re.findall(r'\w+', documents.split('The following are given documents.')[-1])
    start = rng.randrange(max(1, len(words) - 2))
    return ' '.join(words[start : start + rng.randint(1, 3)])


# Each task kind's prompts, known by words of its template (niah's singular form rewrites the
# first), and its random answer.
_RANDOM_ANSWERS = (
    (NIAH_TEMPLATE[5:18], _needle),
    (VT_TEMPLATE[:40], _variables),
    (CWE_TEMPLATE[:40], _common_words),
    (FWE_TEMPLATE[:40], _coded_words),
    (QA_TEMPLATE[:40], _span),
)
