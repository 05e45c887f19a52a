"""Answer extraction for Ada-LEval, in two modes, as pure functions.

``official`` reproduces the official code's results exactly (its flaws included: ``A12`` also
contains ``A1``, the highest-numbered designation found wins, a TSort list is compared with
``zip`` so ``[]`` or ``[2, 1, 3, 4, 1]`` can count as hits) except its crash: where the official
evaluation raises (a bare number after ``Answer:``), the sample is simply wrong and flagged.

``strict`` (the default) takes what a reader would: BestAnswer, the first designation ``A<k>``
(or ``a<k>``) not followed by another digit (1 <= k <= n), else the first bare number in range,
else nothing;
TSort, exactly a permutation of 1..4.
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Optional

MODES = ('strict', 'official')
_PERMUTATIONS = [''.join(map(str, p)) for p in itertools.permutations(range(1, 5))]
_DESIGNATION = re.compile(r'(?<![A-Za-z0-9])[Aa](\d+)(?!\d)')
_NUMBER = re.compile(r'(?<![\w.])(\d+)(?![\d.]*\d)')
_INTEGER = re.compile(r'\d+')


@dataclass(frozen=True)
class Extraction:
    """What was read from one response, and whether it is right."""

    extracted: Any  # 'A3' / [4, 1, 3, 2] / whatever the official code returned; None: nothing
    hit: bool
    official_error: Optional[str] = None  # the official code raised this here


# BestAnswer --------------------------------------------------------------------------------------

def bestanswer_official(prediction: str, num_choice: int) -> str:
    """The highest-numbered ``A<k>`` found as a substring, else the highest bare number, else
    ``'???'``."""
    for candidates in ([f'A{i}' for i in range(1, num_choice + 1)],
                       [str(i) for i in range(1, num_choice + 1)]):
        found = [i for i, candidate in enumerate(candidates, 1) if candidate in prediction]
        if found:
            return f'A{found[-1]}'
    return '???'


def bestanswer_designations(prediction: str, num_choice: int) -> list[int]:
    """Every designation ``A<k>`` in range, in order of appearance."""
    return [k for k in map(int, _DESIGNATION.findall(prediction)) if 1 <= k <= num_choice]


def bestanswer_strict(prediction: str, num_choice: int) -> Optional[str]:
    """The first designation in range, else the first bare number in range, else None."""
    designations = bestanswer_designations(prediction, num_choice)
    if designations:
        return f'A{designations[0]}'
    numbers = [k for k in map(int, _NUMBER.findall(prediction)) if 1 <= k <= num_choice]
    return f'A{numbers[0]}' if numbers else None


def extract_bestanswer(prediction: str, answer: str, num_choice: int,
                       mode: str = 'strict') -> Extraction:
    extracted = (bestanswer_official(prediction, num_choice) if mode == 'official'
                 else bestanswer_strict(prediction, num_choice))
    return Extraction(extracted, extracted == answer)


# TSort -------------------------------------------------------------------------------------------

def _is_subsequence(needle: str, haystack: str) -> bool:
    position = 0
    for char in needle:
        position = haystack.find(char, position) + 1
        if position == 0:
            return False
    return True


def tsort_official(prediction: str) -> Any:
    """The official reading: the text between the first and second ``Answer:`` if there is one,
    parsed as JSON; else the one permutation of 1234 that is a character subsequence; else
    ``[0, 0, 0, 0]``. May return any JSON value."""
    if 'Answer:' in prediction:
        prediction = prediction.split('Answer:')[1].strip()
    try:
        return json.loads(prediction)
    except ValueError:
        matches = [p for p in _PERMUTATIONS if _is_subsequence(p, prediction)]
        return [int(c) for c in matches[0]] if len(matches) == 1 else [0, 0, 0, 0]


def tsort_official_hit(answer: list[int], extracted: Any) -> tuple[bool, Optional[str]]:
    """The official comparison (position by position over ``zip``), minus its crash."""
    try:
        return all(gold == got for gold, got in zip(answer, extracted)), None
    except TypeError as exc:  # a bare number, null, true...: the official evaluation stops here
        return False, type(exc).__name__


def tsort_strict(prediction: str) -> Optional[list[int]]:
    """Exactly a permutation of 1..4 after ``Answer:`` (or in the whole response): four numbers,
    or one four-digit number such as ``4132``; anything more or less is no answer."""
    _, marker, rest = prediction.partition('Answer:')
    numbers = _INTEGER.findall(rest if marker else prediction)
    if len(numbers) == 1 and len(numbers[0]) == 4:
        numbers = list(numbers[0])
    order = [int(n) for n in numbers]
    return order if sorted(order) == [1, 2, 3, 4] else None


def extract_tsort(prediction: str, answer: list[int], mode: str = 'strict') -> Extraction:
    if mode == 'official':
        extracted = tsort_official(prediction)
        hit, error = tsort_official_hit(answer, extracted)
        return Extraction(extracted, hit, error)
    extracted = tsort_strict(prediction)
    return Extraction(extracted, extracted == list(answer))
