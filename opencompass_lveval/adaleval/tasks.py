"""The Ada-LEval task table: BestAnswer and TSort, one row each.

Everything that differs between the tasks is a field of its row (the record schema, the sample a
record becomes, the gold answer of a response, answer extraction, what counts as following the
instruction, chance rates, synthetic data, the random baseline's answer), so loaders, datasets,
evaluators, scorers and configs never branch on a task's name. Adding a task is one row plus its
pure functions. File names keep the old task names (``stackselect_{setting}.json``,
``textsort_{setting}.json``); the prompt texts are the official ones (``prompts.py``).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from ..framework.sizes import parse_size
from . import prompts, records, synthetic
from .extraction import (
    Extraction,
    bestanswer_designations,
    extract_bestanswer,
    extract_tsort,
    tsort_strict,
)

# What the evaluator reports per (task, setting), all in percent.
METRICS = (
    'accuracy',
    'instruction_following',
    'copy_instruction',
    'copy_instruction_chance',
    'random_guess',
)
# Room for "Answer: A123" or "Answer: [4, 1, 3, 2]" and a little chatter around it.
MAX_OUT_LEN = 32
# TSort's 24 candidate answers, as the perplexity mode appends them to the prompt.
TSORT_ORDERS = tuple(str(list(order)) for order in itertools.permutations(range(1, 5)))


@dataclass(frozen=True, eq=False)  # rows compare and hash by identity
class AdaTask:
    """One Ada-LEval task and every behaviour that is particular to it."""

    name: str  # 'bestanswer' | 'tsort'
    file_stem: str  # the official file name's task part
    settings: tuple[str, ...]  # the paper's settings (token budgets); any other size works too
    in_context_example: Any  # the answer the prompt shows, as extracted: 'A4', [4, 1, 3, 2]
    fields: tuple[str, ...]  # required record fields
    record_problem: Callable[[dict], Optional[str]]  # what is wrong with a record, or None
    sample: Callable[[dict, Optional[str]], records.Sample]  # record (+ position) -> sample
    gold: Callable[[dict], tuple[Any, int]]  # a scored response line -> (answer, num_choice)
    reference: Callable[[str], Any]  # the dataset's stored answer -> what extraction compares
    extract: Callable[[str, Any, int, str], Extraction]  # (response, answer, n, mode)
    follows_instruction: Callable[[str, int], bool]  # a valid answer of the asked form?
    chance: Callable[[int], float]  # accuracy of a uniformly random valid answer
    copy_chance: Callable[[int], float]  # chance of answering the in-context example
    random_answer: Callable[[str, random.Random], Optional[str]]  # None: not this task's prompt
    synthetic: Callable[[str, int, int], list[dict]]  # (setting, count, seed) -> records
    demo_settings: tuple[str, ...]  # what `lveval data synth` writes
    positions: tuple[str, ...] = ()  # position-bias variants of the paper

    def file_name(self, setting: str) -> str:
        return f'{self.file_stem}_{setting}.json'

    def abbr(self, setting: str, variant: str = '') -> str:
        return f'{self.abbr_prefix}{variant}_{setting}'

    @property
    def abbr_prefix(self) -> str:
        """What its abbreviations, variants' included, start with."""
        return f'AdaLEval_{self.name}'


def official_sample_count(setting: str, cheap: bool = False) -> int:
    """Samples the official code uses: 1000 below 32k, 200 from 32k (200 / 50 when cheap)."""
    below_32k = parse_size(setting) < 32_000
    if cheap:
        return 200 if below_32k else 50
    return 1000 if below_32k else 200


BESTANSWER = AdaTask(
    name='bestanswer',
    file_stem='stackselect',
    settings=('1k', '2k', '4k', '6k', '8k', '12k', '16k', '32k', '64k', '128k'),
    in_context_example='A4',
    fields=('question_id', 'question', 'all_answers', 'answer', 'tags'),
    record_problem=records.bestanswer_problem,
    sample=records.bestanswer_sample,
    gold=records.bestanswer_gold,
    reference=str,
    extract=extract_bestanswer,
    follows_instruction=lambda response, n: bool(bestanswer_designations(response, n)),
    chance=lambda n: 1 / n,
    copy_chance=lambda n: 1 / n if n >= 4 else 0,
    random_answer=prompts.bestanswer_random_answer,
    synthetic=synthetic.bestanswer_synthetic_records,
    demo_settings=('1k', '2k'),
    positions=records.POSITIONS,
)
TSORT = AdaTask(
    name='tsort',
    file_stem='textsort',
    settings=('2k', '4k', '8k', '16k', '32k', '64k', '128k'),
    in_context_example=[4, 1, 3, 2],
    fields=('book_id', 'para_offset', 'answer'),
    record_problem=records.tsort_problem,
    sample=records.tsort_sample,
    gold=records.tsort_gold,
    reference=records.answer_order,
    extract=lambda response, answer, n, mode: extract_tsort(response, list(answer), mode),
    follows_instruction=lambda response, n: tsort_strict(response) is not None,
    chance=lambda n: 1 / n,
    copy_chance=lambda n: 1 / n,
    random_answer=prompts.tsort_random_answer,
    synthetic=synthetic.tsort_synthetic_records,
    demo_settings=('2k', '4k'),
)
TASKS = (BESTANSWER, TSORT)
TASKS_BY_NAME = {task.name: task for task in TASKS}


def task_named(name: str) -> AdaTask:
    """The row for ``name``, or an error listing the tasks."""
    if name not in TASKS_BY_NAME:
        raise ValueError(f'Ada-LEval task must be one of {sorted(TASKS_BY_NAME)}, not {name!r}')
    return TASKS_BY_NAME[name]
