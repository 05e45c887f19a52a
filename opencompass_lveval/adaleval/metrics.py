"""Ada-LEval's metrics per setting, as in the paper (the official code reports accuracy only).

- accuracy: share of hits;
- instruction following: share of responses with a valid answer (a permutation of 1..4; at
  least one designation ``A<k>`` in range), whatever the extraction mode;
- copy instruction: share of responses whose answer equals the prompt's example (``[4, 1, 3, 2]``,
  ``A4``), beside the share chance would give;
- random guess: the accuracy of a uniform random valid answer (1/24; mean of 1/num_choice).
All in percent.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .extraction import (Extraction, bestanswer_designations, extract_bestanswer, extract_tsort,
                         tsort_strict)

TSORT_ORDERS = 24
TSORT_EXAMPLE = [4, 1, 3, 2]
BESTANSWER_EXAMPLE = 'A4'


def _percent(flags: Sequence[float]) -> float:
    return round(100 * sum(flags) / len(flags), 2) if flags else 0.0


def judge(task: str, predictions: Sequence, answers: Sequence,
          num_choices: Optional[Sequence[int]] = None, mode: str = 'strict') -> list[Extraction]:
    """Extract and judge every response; a missing response (None) is an empty one."""
    texts = [p if isinstance(p, str) else '' for p in predictions]
    if task == 'bestanswer':
        return [extract_bestanswer(t, a, n, mode) for t, a, n in zip(texts, answers, num_choices)]
    return [extract_tsort(t, list(a), mode) for t, a in zip(texts, answers)]


def summarise(task: str, predictions: Sequence, extractions: Sequence[Extraction],
              num_choices: Optional[Sequence[int]] = None) -> dict:
    """Accuracy, instruction-following and copy-instruction rates (with chance), random guess."""
    texts = [p if isinstance(p, str) else '' for p in predictions]
    if task == 'bestanswer':
        valid = [bool(bestanswer_designations(t, n)) for t, n in zip(texts, num_choices)]
        example, copy_chance = BESTANSWER_EXAMPLE, [1 / n if n >= 4 else 0 for n in num_choices]
        random_guess = [1 / n for n in num_choices]
    else:
        valid = [tsort_strict(t) is not None for t in texts]
        example, copy_chance = TSORT_EXAMPLE, [1 / TSORT_ORDERS] * len(texts)
        random_guess = copy_chance
    return {
        'accuracy': _percent([e.hit for e in extractions]),
        'instruction_following': _percent(valid),
        'copy_instruction': _percent([e.extracted == example for e in extractions]),
        'copy_instruction_chance': _percent(copy_chance),
        'random_guess': _percent(random_guess),
        'samples': len(extractions),
        'official_errors': sum(e.official_error is not None for e in extractions),
    }
