"""The paper's Ada-LEval metrics (the official code computes none of them), as pure functions.

- accuracy: share of responses whose extracted answer is right;
- instruction following: share with a valid answer of the asked form (the task table decides);
- copy instruction: share equal to the prompt's in-context example, beside the rate chance would
  give (the task table's ``copy_chance``);
- random guess: the accuracy of a uniform random valid answer (the task table's ``chance``).
All in percent. Responses that are not strings are read by ``responses.response_text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..files.responses import response_texts
from .extraction import Extraction
from .tasks import AdaTask


def _percent(flags: Sequence[float]) -> float:
    return round(100 * sum(flags) / len(flags), 2) if flags else 0.0


def judge(
    task: AdaTask,
    predictions: Sequence,
    answers: Sequence[Any],
    num_choices: Sequence[int],
    mode: str = 'strict',
) -> list[Extraction]:
    """Extract and judge every response."""
    texts, _ = response_texts(predictions)
    return [
        task.extract(text, answer, n, mode) for text, answer, n in zip(texts, answers, num_choices)
    ]


def summarise(
    task: AdaTask,
    predictions: Sequence,
    extractions: Sequence[Extraction],
    num_choices: Sequence[int],
) -> dict:
    """Accuracy, instruction-following and copy-instruction rates (with chance), random guess,
    and the counts behind them."""
    texts, non_strings = response_texts(predictions)
    return {
        'accuracy': _percent([e.hit for e in extractions]),
        'instruction_following': _percent(
            [task.follows_instruction(t, n) for t, n in zip(texts, num_choices)]
        ),
        'copy_instruction': _percent([e.extracted == task.in_context_example for e in extractions]),
        'copy_instruction_chance': _percent([task.copy_chance(n) for n in num_choices]),
        'random_guess': _percent([task.chance(n) for n in num_choices]),
        'samples': len(extractions),
        'official_errors': sum(e.official_error is not None for e in extractions),
        'non_string_predictions': non_strings,
    }
