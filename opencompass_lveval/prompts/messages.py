"""Prompts that are chat messages, and the whole turns a cut may drop from them.

A record's prompt may be a list of chat messages, ``{'role': 'system' | 'user' | 'assistant',
'content': str}``, the user's last (OpenAI MRCR's ``prompt``; any few-shot conversation). The
prompt template gives it as that list (``prompt_template.py``, ``messages=``), OpenCompass's
template parser passes such a list through unchanged, and each model takes it as written:
in-process wrappers render it with the tokenizer's chat template, API models send it as messages.

A benchmark says how an over-long prompt is cut (``cut``): the middle of the last user message
(its cuttable span, ``cuttable.py``), or ``TURNS``: whole early turns are dropped, the earliest
first, until the prompt fits; never the middle of one. A turn is

- in a conversation, a user message and the assistant replies after it, before the last user
  message (a system message, or a user message no reply follows, is never dropped);
- inside one message, a span of its text that the record marks (MRCR v2's text-style transcript:
  ``User: ...\\n\\nAssistant: ...\\n\\n`` pieces of one user message).

Either way a message carries its turns as ``TURNS: [[start, end, number], ...]``: character
spans of its content and the turn each belongs to (turns go in number order). Nothing here knows
a benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Optional

from .truncation import TruncationError

ROLES = ('system', 'user', 'assistant')
TURNS = 'turns'  # a cut declaration (``cut=TURNS``) and the key of a message's turn spans


def is_messages(prompt: Any) -> bool:
    """Whether ``prompt`` is a list of chat messages (dicts of a role and a content)."""
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and all(isinstance(m, dict) and 'role' in m and 'content' in m for m in prompt)
    )


def checked_messages(value: Any, where: str, prompt: bool = True) -> list[dict]:
    """A record's messages (a list, or the text of a JSON array) as a fresh list of dicts, each
    checked: a known role, a string content; for a ``prompt``, the last the user's."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f'{where}: not a JSON array of chat messages ({exc})') from None
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f'{where}: chat messages must be a non-empty list, not {value!r:.80}')
    messages = []
    for number, message in enumerate(value, 1):
        if not (
            isinstance(message, dict)
            and message.get('role') in ROLES
            and isinstance(message.get('content'), str)
        ):
            raise ValueError(
                f'{where}: message {number} must be an object with a "role" ({", ".join(ROLES)}) '
                'and a string "content"'
            )
        messages.append(dict(message))
    if prompt and messages[-1]['role'] != 'user':
        raise ValueError(
            f"{where}: the last message must be the user's, not the {messages[-1]['role']}'s"
        )
    return messages


def plain(messages: Sequence[dict]) -> list[dict]:
    """The messages as sent: role and content only."""
    return [{'role': m['role'], 'content': m['content']} for m in messages]


def mark_conversation_turns(messages: list[dict]) -> list[dict]:
    """``messages`` with each earlier exchange (a user message and the assistant replies after
    it) marked as a turn, numbered after any turns the messages carry inside their texts; a
    system message, or a user message no reply follows (a few-shot preamble), stays."""
    marked = [dict(m) for m in messages]
    number = 1 + max((span[2] for m in marked for span in m.get(TURNS) or ()), default=-1)
    last_user = max(i for i, m in enumerate(marked) if m['role'] == 'user')
    at = 0
    while at < last_user:
        end = at + 1
        while end < last_user and marked[end]['role'] == 'assistant':
            end += 1
        if marked[at]['role'] != 'user' or end == at + 1:
            at += 1
            continue
        for message in marked[at:end]:
            message[TURNS] = [[0, len(message['content']), number]]
        number, at = number + 1, end
    return marked


def has_turns(prompt: Any) -> bool:
    return is_messages(prompt) and any(m.get(TURNS) for m in prompt)


def turn_numbers(messages: Sequence[dict]) -> list[int]:
    """The distinct turn numbers of the messages, in the order they go."""
    return sorted({span[2] for m in messages for span in m.get(TURNS) or ()})


def without_turns(messages: Sequence[dict], numbers: set[int]) -> list[dict]:
    """The messages with the turns ``numbers`` taken out (their spans cut from the texts; a
    message that was one whole turn, gone); the remaining spans follow their text."""
    kept = []
    for message in messages:
        spans = sorted(message.get(TURNS) or (), key=lambda span: span[0])
        content, text, at, left = message['content'], [], 0, []
        for start, end, number in spans:
            if number in numbers:
                text.append(content[at:start])
                at = end
            else:
                offset = sum(map(len, text)) + (start - at)
                left.append([offset, offset + end - start, number])
        text.append(content[at:])
        shortened = ''.join(text)
        if not shortened and spans and content:
            continue  # a message that was all dropped turns
        kept.append({**message, 'content': shortened, TURNS: left})
    return kept


def turn_text(messages: Sequence[dict], number: int) -> str:
    """The text of one turn (its spans joined), for estimating its size."""
    return ''.join(
        m['content'][start:end]
        for m in messages
        for start, end, turn in m.get(TURNS) or ()
        if turn == number
    )


def fit_turns(
    messages: list[dict],
    budget: int,
    count: Callable[[list[dict]], int],
    measure: Callable[[str], int],
    who: str,
) -> tuple[list[dict], int, Optional[int]]:
    """(the messages without their fewest earliest turns whose ``count`` is within ``budget``,
    the turns dropped, the count where it was computed): ``count`` is the model's exact prompt
    size of a list of messages (template and framing included), ``measure`` a text's tokens,
    used once per turn to guess how many to drop, so the whole prompt is counted two or three
    times rather than once per turn."""
    whole = count(messages)
    if whole <= budget:
        return messages, 0, whole
    numbers = turn_numbers(messages)
    sizes = [measure(turn_text(messages, number)) for number in numbers]
    dropped, freed = 0, 0
    while dropped < len(numbers) and whole - freed > budget:
        freed += sizes[dropped]
        dropped += 1

    def counted(k: int) -> int:
        return count(without_turns(messages, set(numbers[:k])))

    found = {dropped: counted(dropped)}
    while dropped > 1 and (found.setdefault(dropped - 1, counted(dropped - 1))) <= budget:
        dropped -= 1
    while found[dropped] > budget:
        if dropped == len(numbers):
            raise TruncationError(
                f'{who}: the prompt takes {found[dropped]} tokens with all {len(numbers)} of its '
                f'droppable turns dropped, more than the budget of {budget}; use a model with a '
                'larger window'
            )
        dropped += 1
        found[dropped] = counted(dropped)
    return without_turns(messages, set(numbers[:dropped])), dropped, found[dropped]


def as_text(messages: Sequence[dict]) -> str:
    """The messages' contents as one text (what a model without a chat frame reads)."""
    return '\n\n'.join(m['content'] for m in messages)
