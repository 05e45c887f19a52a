"""The two MRCR graders, each exactly as its authors publish it. They differ, and a reply can score
0 under one and 1 under the other.

Google DeepMind MRCR v2 (eval_hub ``run_evaluation.mrcr_v2_metric``, commit 67b7fd29): a prediction
that is not a non-empty string scores 0.0. The target is stripped; its first 12 characters are the
hash (a target of fewer scores 0.0) and the rest, stripped, is the reference. The prediction is
stripped and the hash's **last** occurrence anywhere in it is looked for (its docstring says the
hash must open the reply; the code does not ask that): none scores 0.0, else the text after it,
stripped, is compared as ``SequenceMatcher(a=reference, b=text).ratio()``. So a preamble or a
``<think>`` block before the hash costs nothing, and a hash repeated after the text scores 0.0.
A target that is not a string raises (``AttributeError``), as the official code does.

OpenAI MRCR (the ``grade`` function on the openai/mrcr dataset card): nothing is stripped; a
response that does not start with the prefix scores the int ``0`` (a leading space or zero-width
space is enough); else the prefix is removed once from the front of each side and the score is
``float(SequenceMatcher(None, response, answer).ratio())``. A response that is not a string raises
(``AttributeError``), as the card's function does.

Both keep difflib's defaults, autojunk on: for texts of 200 characters or more, characters making
up over 1% of the second sequence are junk when matching blocks, so the ratio is not symmetric and
the argument order above is part of each metric (one golden OpenAI case scores 0.0138 as the card
orders it and 0.9937 swapped).
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Union

HASH_LENGTH = 12  # MRCR v2's random string before every answer


def gdm_mrcr_v2_metric(prediction: object, target: str) -> float:
    """GDM's MRCR v2 score of one prediction, in [0, 1] (see the module)."""
    if not isinstance(prediction, str) or prediction == '':
        return 0.0
    target = target.strip()
    if len(target) < HASH_LENGTH:
        return 0.0
    random_hash, reference = target[:HASH_LENGTH], target[HASH_LENGTH:].strip()
    prediction = prediction.strip()
    last = prediction.rfind(random_hash)
    if last < 0:
        return 0.0
    answered = prediction[last + HASH_LENGTH :].strip()
    return SequenceMatcher(a=reference, b=answered).ratio()


def openai_mrcr_grade(
    response: str, answer: str, random_string_to_prepend: str
) -> Union[int, float]:
    """OpenAI MRCR's score of one response: the int 0 without the prefix in front, else a float
    in [0, 1] (see the module)."""
    if not response.startswith(random_string_to_prepend):
        return 0
    response = response.removeprefix(random_string_to_prepend)
    answer = answer.removeprefix(random_string_to_prepend)
    return float(SequenceMatcher(None, response, answer).ratio())
