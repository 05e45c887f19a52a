"""Middle truncation on token ids, shared by every model wrapper.

LV-Eval's rule: format the whole user prompt, and if it does not fit, keep its head and tail and
drop the middle, *then* apply the chat template, so the instructions (at the front) and the
question (at the end) always survive. The official code decodes both halves and re-tokenizes,
which can change the length and split multi-byte characters; here the prompt is tokenized once,
cut on ids, and wrapped in the chat template's own ids, so the model sees exactly ``budget``
prompt tokens and nothing is decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

# A placeholder for the user message while the chat template is rendered; nothing a template
# would strip or escape.
_BROKEN = '\ufffd'  # what a decoder yields for an incomplete UTF-8 sequence
_SENTINEL = 'LVEVAL\u2063PROMPT\u2063SENTINEL'


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
    floor(budget/2) ids.

    ``keep_head``/``keep_tail`` count ids that must survive (instructions, question): a budget
    whose halves cannot hold them is an error, not a silent cut. With ``decode`` (the tokenizer's),
    a cut that falls inside a character split over several byte tokens moves to the character's
    edge, dropping its pieces, so no broken character reaches the model; the result is then up to
    three ids per cut under the budget instead of exactly on it.
    """
    if len(ids) <= budget:
        return list(ids)
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
    return list(ids[:head]) + list(ids[tail_start:])


def _split_around(outer: Sequence[int], inner: Sequence[int]) -> tuple[list[int], list[int]]:
    """(ids before, ids after) the single occurrence of ``inner`` in ``outer``."""
    width = len(inner)
    starts = [i for i in range(len(outer) - width + 1) if list(outer[i : i + width]) == list(inner)]
    if len(starts) != 1:
        raise TruncationError(
            "could not locate the prompt inside the tokenizer's own framing; "
            'this tokenizer merges it with the special tokens around it'
        )
    return list(outer[: starts[0]]), list(outer[starts[0] + width :])


@dataclass(frozen=True)
class PromptFrame:
    """Token ids that surround the user prompt: the chat template, or a base model's specials."""

    prefix: list[int]
    suffix: list[int]

    @classmethod
    def for_chat(
        cls, tokenizer: Any, history: Sequence[dict] = (), template_kwargs: Optional[dict] = None
    ) -> PromptFrame:
        """Frame from ``apply_chat_template`` around a last user message (after ``history``)."""
        messages = list(history) + [{'role': 'user', 'content': _SENTINEL}]
        text = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False, **(template_kwargs or {})
        )
        if text.count(_SENTINEL) != 1:
            raise TruncationError('the chat template does not reproduce the user message verbatim')
        before, after = text.split(_SENTINEL)
        encode = tokenizer.encode
        return cls(
            encode(before, add_special_tokens=False) if before else [],
            encode(after, add_special_tokens=False) if after else [],
        )

    @classmethod
    def for_base(cls, tokenizer: Any) -> PromptFrame:
        """Frame of the special tokens (BOS, ...) the tokenizer adds around plain text."""
        probe = 'x'
        return cls(
            *_split_around(
                tokenizer.encode(probe, add_special_tokens=True),
                tokenizer.encode(probe, add_special_tokens=False),
            )
        )

    def __len__(self) -> int:
        return len(self.prefix) + len(self.suffix)


def fit_prompt(
    tokenizer: Any,
    prompt: str,
    frame: PromptFrame,
    window: int,
    max_out_len: int,
    keep_head: int = 0,
    keep_tail: int = 0,
) -> list[int]:
    """The model's input ids: frame + the prompt, middle-truncated to what the window allows.

    The budget is ``window - max_out_len - len(frame)``; the prompt is encoded exactly once, and
    only the (at most a few) tokens at the two cut points are ever decoded, to keep characters
    whole.
    """
    budget = window - max_out_len - len(frame)
    if budget <= 0:
        raise TruncationError(
            f'window {window} leaves no room for the prompt after {max_out_len} answer tokens and '
            f'{len(frame)} chat-template tokens; raise max_seq_len or lower max_out_len'
        )
    ids = tokenizer.encode(prompt, add_special_tokens=False)
    kept = middle_truncate(ids, budget, keep_head, keep_tail, tokenizer.decode)
    return frame.prefix + kept + frame.suffix
