"""Ada-LEval records, one task at a time: what a valid record is, the sample it becomes, and the
gold answer of a scored response. Pure functions; the task table wires them to its rows.

Problems are returned (or raised as ValueError) as short phrases; callers add the file and the
item or line. Work is bounded: a BestAnswer case may have at most ``MAX_CHOICES`` candidates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from .prompts import bestanswer_parts, tsort_parts, tsort_prompt

# A stated cap on the candidates of one BestAnswer case (official files hold tens to a few
# hundred), so that nothing read from a file can make extraction allocate without bound.
MAX_CHOICES = 10_000
TSORT_ORDER_COUNT = 24  # the answers TSort allows: the permutations of four parts
POSITIONS = ('front', 'middle', 'rear')


@dataclass(frozen=True)
class Sample:
    """What the OpenCompass dataset holds for one record: the prompt in three parts (the body is
    what a middle cut may shorten; ``prompt`` joins them), the answer and the choice count."""

    instruction: str
    body: str
    closing: str
    answer: str  # the reference as OpenCompass stores it: 'A3' or '[2, 4, 1, 3]'
    num_choice: int  # candidates (BestAnswer) or possible orders (TSort, 24)

    @property
    def prompt(self) -> str:
        return self.instruction + self.body + self.closing


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_text_list(value: Any, size: Optional[int] = None) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and (size is None or len(value) == size)
        and all(isinstance(item, str) and item for item in value)
    )


# BestAnswer ---------------------------------------------------------------------------------------


def designation_number(label: Any, num_choice: int) -> Optional[int]:
    """k for a designation ``A<k>`` with 1 <= k <= num_choice, else None."""
    if not (
        isinstance(label, str) and label[:1] == 'A' and label[1:].isascii() and label[1:].isdigit()
    ):
        return None
    digits = label[1:]
    if len(digits) > len(str(num_choice)) or digits.startswith('0'):
        return None
    number = int(digits)
    return number if 1 <= number <= num_choice else None


def bestanswer_problem(record: dict) -> Optional[str]:
    answers = record['all_answers']
    if not (isinstance(answers, list) and answers and all(isinstance(a, str) for a in answers)):
        return '"all_answers" must be a non-empty list of strings'
    if len(answers) > MAX_CHOICES:
        return f'{len(answers)} candidate answers, more than the {MAX_CHOICES} allowed'
    if not isinstance(record['question'], str):
        return '"question" must be a string'
    if designation_number(record['answer'], len(answers)) is None:
        return f'"answer" must be a designation A1..A{len(answers)}, found {record["answer"]!r}'
    return None


def move_accepted_answer(answers: list[str], label: str, position: str) -> tuple[list[str], str]:
    """The answers with the accepted one moved to the front, middle or rear, and its new label
    (the paper's position-bias study); the others keep their relative order."""
    if position not in POSITIONS:
        raise ValueError(f'position must be one of {POSITIONS}, not {position!r}')
    accepted = int(label[1:]) - 1
    others = answers[:accepted] + answers[accepted + 1 :]
    target = {'front': 0, 'middle': len(answers) // 2, 'rear': len(answers) - 1}[position]
    return others[:target] + [answers[accepted]] + others[target:], f'A{target + 1}'


def bestanswer_sample(record: dict, position: Optional[str] = None) -> Sample:
    answers, label = record['all_answers'], record['answer']
    if position is not None:
        answers, label = move_accepted_answer(answers, label, position)
    return Sample(*bestanswer_parts(record['question'], answers), label, len(answers))


def bestanswer_gold(record: dict) -> tuple[str, int]:
    """(answer, num_choice) of a scored response line; ValueError says what is wrong."""
    num_choice = record.get('num_choice')
    if not _is_count(num_choice) or not 1 <= num_choice <= MAX_CHOICES:
        raise ValueError(
            f'BestAnswer needs "num_choice", the number of candidate answers: a whole '
            f'number from 1 to {MAX_CHOICES}, found {num_choice!r}'
        )
    if designation_number(record['answer'], num_choice) is None:
        raise ValueError(
            f'"answer" must be a designation A1..A{num_choice}, found {record["answer"]!r}'
        )
    return record['answer'], num_choice


# TSort --------------------------------------------------------------------------------------------


def answer_order(value: Any) -> Optional[list[int]]:
    """A TSort answer as a list of ints (files store a list, some a JSON string of one)."""
    if isinstance(value, str) and len(value) < 100:
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if (
        isinstance(value, list)
        and all(_is_count(v) for v in value)
        and sorted(value) == [1, 2, 3, 4]
    ):
        return value
    return None


def tsort_problem(record: dict) -> Optional[str]:
    if answer_order(record['answer']) is None:
        return f'"answer" must be a permutation of [1, 2, 3, 4], found {record["answer"]!r}'
    prompt = record.get('prompt')
    if isinstance(prompt, str) and prompt.strip():
        return None
    if prompt is not None and not isinstance(prompt, str):
        return f'"prompt" must be a string, found {type(prompt).__name__}'
    if not (
        isinstance(record.get('before'), str)
        and isinstance(record.get('after'), str)
        and _is_text_list(record.get('parts'), 4)
    ):
        return (
            'needs a non-empty "prompt" string, or "before" and "after" strings and "parts", '
            'a list of 4 non-empty strings'
        )
    return None


def tsort_sample(record: dict, position: Optional[str] = None) -> Sample:
    if position is not None:
        raise ValueError('TSort has no position-bias variant; position applies to BestAnswer')
    prompt = record.get('prompt') or tsort_prompt(
        record['before'], record['parts'], record['after']
    )
    return Sample(*tsort_parts(prompt), str(answer_order(record['answer'])), TSORT_ORDER_COUNT)


def tsort_gold(record: dict) -> tuple[list[int], int]:
    answer = answer_order(record['answer'])
    if answer is None:
        raise ValueError(
            f'"answer" must be a permutation of [1, 2, 3, 4], found {str(record["answer"])[:40]!r}'
        )
    return answer, TSORT_ORDER_COUNT
