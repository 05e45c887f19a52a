"""Answer extraction for Ada-LEval, in two modes, as pure functions.

``official`` reproduces the official code's results exactly (its flaws included: ``A12`` also
contains ``A1``, the highest-numbered designation found wins, a TSort list is compared with
``zip`` so ``[]`` or ``[2, 1, 3, 4, 1]`` can count as hits) except its crash: where the official
evaluation raises (a bare number after ``Answer:``), the sample is simply wrong and flagged.

``strict`` (the default) takes what a reader would: BestAnswer, the first designation ``A<k>``
(or ``a<k>``) not followed by another digit (1 <= k <= n), else the first bare number in range,
else nothing; TSort, exactly a permutation of 1..4.

Work is bounded by the response's length and the number of digits of ``num_choice``: no number
read from a response is converted unless it is short enough to be in range, and the official
reading is computed from the digit runs of the response instead of trying every candidate.
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
_JSON_INTEGER = re.compile(r'-?(?:0|[1-9]\d*)')


@dataclass(frozen=True)
class Extraction:
    """What was read from one response, and whether it is right."""

    extracted: Any  # 'A3' / [4, 1, 3, 2] / whatever the official code returned; None: nothing
    hit: bool
    official_error: Optional[str] = None  # the official code raised this here


# BestAnswer --------------------------------------------------------------------------------------


def _numbers_in(run: str, num_choice: int, prefixes_only: bool) -> set[int]:
    """The k in 1..num_choice whose decimal text occurs in a run of digits (only at its start
    when ``prefixes_only``), looking at no more digits than ``num_choice`` has at each place."""
    width = len(str(num_choice))
    windows = {run[start : start + width] for start in range(1 if prefixes_only else len(run))}
    texts = {
        window[:size]
        for window in windows
        if window[0] != '0'  # str(k) never starts with 0
        for size in range(1, len(window) + 1)
    }
    return {number for number in map(int, texts) if number <= num_choice}


def bestanswer_official(prediction: str, num_choice: int) -> str:
    """The official reading: the highest ``k`` with ``A<k>`` a substring, else the highest ``k``
    whose digits are a substring, else ``'???'`` (the official loop over 1..num_choice, computed
    from the digit runs of the response)."""
    designations: set[int] = set()
    for match in _INTEGER.finditer(prediction):
        if match.start() > 0 and prediction[match.start() - 1] == 'A':
            designations |= _numbers_in(match.group(), num_choice, prefixes_only=True)
    if designations:
        return f'A{max(designations)}'
    numbers: set[int] = set()
    for match in _INTEGER.finditer(prediction):
        numbers |= _numbers_in(match.group(), num_choice, prefixes_only=False)
    return f'A{max(numbers)}' if numbers else '???'


def _in_range(digits: list[str], num_choice: int) -> list[int]:
    """The numbers among ``digits`` that lie in 1..num_choice, in order (long ones never
    converted)."""
    width = len(str(num_choice))
    stripped = (d.lstrip('0') or '0' for d in digits)
    return [k for k in (int(d) for d in stripped if len(d) <= width) if 1 <= k <= num_choice]


def bestanswer_designations(prediction: str, num_choice: int) -> list[int]:
    """Every designation ``A<k>`` in range, in order of appearance."""
    return _in_range(_DESIGNATION.findall(prediction), num_choice)


def bestanswer_strict(prediction: str, num_choice: int) -> Optional[str]:
    """The first designation in range, else the first bare number in range, else None."""
    designations = bestanswer_designations(prediction, num_choice)
    if designations:
        return f'A{designations[0]}'
    numbers = _in_range(_NUMBER.findall(prediction), num_choice)
    return f'A{numbers[0]}' if numbers else None


def extract_bestanswer(
    prediction: str, answer: str, num_choice: int, mode: str = 'strict'
) -> Extraction:
    extracted = (
        bestanswer_official(prediction, num_choice)
        if mode == 'official'
        else bestanswer_strict(prediction, num_choice)
    )
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
    ``[0, 0, 0, 0]``. May return any JSON value (a bare number over Python's digit limit for
    ``int`` comes back as a float: still a number, as the official code would see it)."""
    if 'Answer:' in prediction:
        prediction = prediction.split('Answer:')[1].strip()
    try:
        return json.loads(prediction)
    except (ValueError, RecursionError):
        if _JSON_INTEGER.fullmatch(prediction.strip()):
            return float(prediction)
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
    values = [n.lstrip('0') or '0' for n in numbers]
    if len(values) != 4 or any(len(v) > 1 for v in values):  # a number of two digits is >= 10
        return None
    order = [int(v) for v in values]
    return order if sorted(order) == [1, 2, 3, 4] else None


def extract_tsort(prediction: str, answer: list[int], mode: str = 'strict') -> Extraction:
    if mode == 'official':
        extracted = tsort_official(prediction)
        hit, error = tsort_official_hit(answer, extracted)
        return Extraction(extracted, hit, error)
    extracted = tsort_strict(prediction)
    return Extraction(extracted, extracted == list(answer))
