"""RULER's scoring, as ``scripts/eval/evaluate.py`` and ``scripts/eval/synthetic/constants.py``
(commit c3f5e3b) compute it; pure functions.

A prediction is stripped, every control character (``\\x00``-``\\x1f``) becomes a newline, and it
is stripped again (DEL and no-break spaces stay). An answer counts when it occurs in the
prediction, case ignored, anywhere (inside a longer token too). ``string_match_all`` averages
the fraction of a sample's answers found; ``string_match_part`` takes 1 where any is found
(QA: any of the annotators' answers). Task scores are percentages rounded to 2 decimals, summed
in the official order so the floats are the official ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CONTROL = re.compile(r'[\x00-\x1f]')


def postprocess_pred(prediction: str) -> str:
    """evaluate.py's ``postprocess_pred``."""
    return _CONTROL.sub('\n', prediction.strip()).strip()


def _found(prediction: str, answers: Sequence[str]) -> list[float]:
    lowered = prediction.lower()
    return [1.0 if answer.lower() in lowered else 0.0 for answer in answers]


def match_all(prediction: str, answers: Sequence[str]) -> float:
    """One sample under ``string_match_all``: the fraction of its answers found (0 to 1)."""
    return sum(_found(prediction, answers)) / len(answers)


def match_part(prediction: str, answers: Sequence[str]) -> float:
    """One sample under ``string_match_part``: 1 if any answer is found, else 0."""
    return max(_found(prediction, answers))


def _task_score(per_sample: list[float]) -> float:
    return round(sum(per_sample) / len(per_sample) * 100, 2)


def string_match_all(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """The task score of niah, vt, cwe and fwe (percent, 2 decimals)."""
    return _task_score([match_all(p, r) for p, r in zip(predictions, references)])


def string_match_part(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """The task score of qa (percent, 2 decimals)."""
    return _task_score([match_part(p, r) for p, r in zip(predictions, references)])


METRICS = {'string_match_all': string_match_all, 'string_match_part': string_match_part}
SAMPLE_METRICS = {'string_match_all': match_all, 'string_match_part': match_part}
