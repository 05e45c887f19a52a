"""Middle truncation on token ids, shared by every model wrapper (``models/inputs.py``).

LV-Eval's rule: format the whole user prompt, and if it does not fit, keep its head and tail and
drop the middle, so the instructions (at the front) and the question (at the end) survive. Here the
cut is on ids: nothing is decoded and re-encoded, so the length is exact, and a cut that would
split a character spread over several byte tokens moves to the character's edge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

_BROKEN = '\ufffd'  # what a decoder yields for an incomplete UTF-8 sequence


class TruncationError(ValueError):
    """The window cannot hold what must survive (template, answer, protected head and tail)."""


def middle_truncate(
    ids: Sequence[int],
    budget: int,
    keep_head: int = 0,
    keep_tail: int = 0,
    decode: Optional[Callable[[list[int]], str]] = None,
) -> list[int]:
    """``ids`` unchanged if they fit ``budget``, else its first ceil(budget/2) and last
    floor(budget/2) ids (``middle_cut``)."""
    head, tail_start = middle_cut(ids, budget, keep_head, keep_tail, decode)
    return list(ids[:head]) + list(ids[tail_start:])


def middle_cut(
    ids: Sequence[int],
    budget: int,
    keep_head: int = 0,
    keep_tail: int = 0,
    decode: Optional[Callable[[list[int]], str]] = None,
) -> tuple[int, int]:
    """(head, tail_start): the cut keeps ``ids[:head]`` and ``ids[tail_start:]``, the first
    ceil(budget/2) and last floor(budget/2) ids (all of them, ``(len, len)``, if they fit).

    ``keep_head``/``keep_tail`` count ids that must survive (instructions, question): a budget
    whose halves cannot hold them is an error, not a silent cut. With ``decode`` (the tokenizer's),
    a cut that falls inside a character split over several byte tokens moves to the character's
    edge, dropping its pieces, so no broken character reaches the model; the result is then up to
    three ids per cut under the budget instead of exactly on it.
    """
    if len(ids) <= budget:
        return len(ids), len(ids)
    tail = budget // 2
    head = budget - tail
    if budget <= 0 or head < keep_head or tail < keep_tail:
        raise TruncationError(
            f'a prompt of {len(ids)} tokens must be cut to {budget}, but its first {keep_head} and '
            f'last {keep_tail} tokens must survive; use a model with a larger window or shorten '
            'the instructions'
        )
    tail_start = len(ids) - tail
    if decode is not None:
        while head > keep_head and decode(list(ids[max(0, head - 4) : head])).endswith(_BROKEN):
            head -= 1
        while tail_start < len(ids) - keep_tail and decode(
            list(ids[tail_start : tail_start + 4])
        ).startswith(_BROKEN):
            tail_start += 1
    return head, tail_start
