"""What LongBench v2's pred.py sends for one record, as pure functions of (record, setting, mode,
prompt budget, tokenizer) and, for chain of thought's second call, the first reply.

``official`` (pred.py, exactly): the prompt filled by sequential replaces, tokenized as pred.py
does (a Hugging Face tokenizer's ``encode``, BOS included; tiktoken's for the GPT and o1 models,
special-token text allowed), and when it has strictly more ids than the budget, the first
``budget // 2`` and the last ``budget - budget // 2`` ids are kept (Python's ``-budget // 2``
floors, so an odd budget keeps one more at the end) and decoded back to text with special tokens
skipped: the BOS takes a place in the head and is then dropped, a cut inside a character leaves
U+FFFD, and the text re-encodes to about the budget, not exactly. The chain of thought's answer
call holds no document, only the question, choices and the first reply, and is cut the same way;
an empty first reply (``''``) makes no second call.

``default``: the prompt filled in one pass (``prompts.fill``) and cut as this package cuts
(``prompts.truncation.middle_truncate``): the ids of the text alone, the first ceil(budget/2) and
last floor(budget/2), cut edges moved off characters split over several tokens; an empty first
reply still makes no second call (there is no reasoning to pass on; the record counts wrong).
The chat template, where a model has one, is the server's or the model wrapper's business in
both modes: the body holds one user message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..prompts.truncation import middle_truncate
from . import prompts
from .tasks import ANSWER_MAX_TOKENS, TEMPERATURE, Setting


@dataclass(frozen=True)
class Codec:
    """A tokenizer as the cut needs it: pred.py's ``encode`` (special tokens added where the
    tokenizer adds them), the text alone, and ``decode`` as pred.py calls it."""

    encode: Callable[[str], list[int]]
    encode_text: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]


def codec_of(tokenizer: Any) -> Codec:
    """The ``Codec`` of a Hugging Face tokenizer, a ``tokenizers.Tokenizer`` (its
    ``tokenizer.json``) or a tiktoken encoding (the GPT and o1 models' path in pred.py)."""
    if hasattr(tokenizer, 'encode_ordinary'):  # tiktoken
        return Codec(
            encode=lambda text: tokenizer.encode(text, disallowed_special=()),
            encode_text=tokenizer.encode_ordinary,
            decode=tokenizer.decode,
        )
    if hasattr(tokenizer, 'get_vocab_size'):  # tokenizers.Tokenizer
        return Codec(
            encode=lambda text: tokenizer.encode(text).ids,
            encode_text=lambda text: tokenizer.encode(text, add_special_tokens=False).ids,
            decode=lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
        )
    if hasattr(tokenizer, 'decode') and hasattr(tokenizer, 'encode'):  # transformers
        return Codec(
            encode=tokenizer.encode,
            encode_text=lambda text: tokenizer.encode(text, add_special_tokens=False),
            decode=lambda ids: tokenizer.decode(ids, skip_special_tokens=True),
        )
    raise TypeError(
        f'{type(tokenizer).__name__} is no tokenizer LongBench v2 can cut with: give a '
        'transformers tokenizer, a tokenizers.Tokenizer or a tiktoken encoding'
    )


def official_cut(prompt: str, budget: int, codec: Codec) -> str:
    """pred.py's middle cut of a prompt to ``budget`` ids (see the module)."""
    _check_budget(budget)
    ids = codec.encode(prompt)
    if len(ids) <= budget:
        return prompt
    head = budget // 2
    return codec.decode(ids[:head] + ids[len(ids) - (budget - head) :])


def package_cut(prompt: str, budget: int, codec: Codec) -> str:
    """The default mode's cut: on the text's own ids, head ceil(budget/2), tail floor(budget/2),
    no character split."""
    _check_budget(budget)
    ids = codec.encode_text(prompt)
    if len(ids) <= budget:
        return prompt
    return codec.decode(middle_truncate(ids, budget, decode=codec.decode))


def _check_budget(budget: int) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise ValueError(
            f'the prompt budget must be a whole number of tokens >= 1, not {budget!r} (pred.py '
            'reads it from config/model2maxlen.json)'
        )


def document(record: Mapping, setting: Setting, rag: int = 0) -> str:
    """The record's document for ``setting``: its context, or for RAG its first ``rag`` retrieved
    chunks (``prompts.retrieved_context``)."""
    if setting.uses_retrieval:
        return prompts.retrieved_context(record['retrieved_context'], rag)
    return record['context']


def first_prompt(record: Mapping, setting: Setting, mode: str = 'default', rag: int = 0) -> str:
    """The first call's prompt before any cut."""
    values = prompts.fields(record, document(record, setting, rag))
    return prompts.fill(setting.template, values, mode)


def answer_prompt(
    record: Mapping, setting: Setting, first_reply: str, mode: str = 'default', rag: int = 0
) -> Optional[str]:
    """The second call's prompt before any cut, given the first reply; None where no second call
    is made (a one-call setting, or an empty first reply)."""
    if setting.answer_template is None or first_reply == '':
        return None
    values = prompts.fields(record, document(record, setting, rag), reasoning=first_reply)
    return prompts.fill(setting.answer_template, values, mode)


def body(prompt: str, model: str, max_tokens: int) -> dict:
    """A chat-completions request as pred.py's OpenAI client sends it (its key order)."""
    return {
        'messages': [{'role': 'user', 'content': prompt}],
        'model': model,
        'max_tokens': max_tokens,
        'temperature': TEMPERATURE,
    }


def cut(prompt: str, budget: int, codec: Codec, mode: str) -> str:
    return (official_cut if prompts.check_mode(mode) == 'official' else package_cut)(
        prompt, budget, codec
    )


def first_request(
    record: Mapping,
    setting: Setting,
    *,
    model: str,
    budget: int,
    codec: Codec,
    mode: str,
    rag: int = 0,
) -> dict:
    """The body of the first call (``model`` as sent: ``tasks.served_model``)."""
    prompt = cut(first_prompt(record, setting, mode, rag), budget, codec, mode)
    return body(prompt, model, setting.first_max_tokens)


def answer_request(
    record: Mapping,
    setting: Setting,
    first_reply: str,
    *,
    model: str,
    budget: int,
    codec: Codec,
    mode: str,
    rag: int = 0,
) -> Optional[dict]:
    """The body of chain of thought's second call, or None where none is made."""
    prompt = answer_prompt(record, setting, first_reply, mode, rag)
    if prompt is None:
        return None
    return body(cut(prompt, budget, codec, mode), model, ANSWER_MAX_TOKENS)
