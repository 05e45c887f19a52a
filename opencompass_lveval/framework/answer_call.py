"""A declared answer that takes two model calls, the second seeing the first's reply.

A benchmark declares the second call as data (``AnswerCall``): a function of the record and the
first reply giving the second call's prompt (a string or chat messages; None where no second call
is made), its answer length, and the function's options. LongBench v2's chain of thought asks
for the reasoning with the document, then for the answer without it, the reasoning quoted; an
empty first reply makes no second call.

``TwoCallGenInferencer`` (``two_calls.py``) runs it in OpenCompass for any model (HF, vLLM, API:
each call is the model's ordinary ``generate``, so each call is fed, cut and counted as that model
feeds, cuts and counts any prompt). Per batch: the first prompts, then the second prompts built from the
replies. The prediction is the second reply (``''`` where none was asked); the prediction file
keeps beside it ``first_reply``, ``answer_prompt`` (the second call's prompt as the model took
it; ``None`` where none was asked) and, for an API model, ``answer_body`` (the request sent).
The usage record of a prediction counts both calls (``calls``: each call's own record).

The interface for a server that plans requests ahead (serving): ``answer_call_of(dataset_cfg)``
gives the dataset's ``AnswerCall`` (None for one call); once a record's first reply is stored,
``call.prompt_for(record, first_reply)`` is the second request's prompt, to be parsed by the
model's template parser and built as any first prompt with ``call.max_out_len``; the prediction
is its reply.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

FIRST_REPLY, ANSWER_PROMPT, ANSWER_BODY = 'first_reply', 'answer_prompt', 'answer_body'


@dataclass(frozen=True)
class AnswerCall:
    """The second call of a two-call answer: ``prompt`` ('package.module:function', called as
    ``function(record, first_reply, **options)``) gives its prompt or None; ``max_out_len`` its
    answer length, in the model's tokens."""

    prompt: str  # 'package.module:function' giving the second call's prompt, or None for none
    max_out_len: int  # the second call's answer length, in the model's tokens
    options: Mapping[str, Any] = field(default_factory=dict)  # keywords the function also takes

    def function(self) -> Callable[..., Any]:
        """The function ``prompt`` names, imported."""
        module, _, name = self.prompt.partition(':')
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(
                f'answer_call prompt {self.prompt!r} names no function ({exc}); give '
                "'package.module:function'"
            ) from None

    def prompt_for(self, record: Mapping, first_reply: str) -> Any:
        """The second call's prompt for ``record`` given the first reply; None for no call."""
        return self.function()(record, first_reply, **self.options)

    def config(self) -> dict:
        """As a dataset config's inferencer holds it."""
        return dict(prompt=self.prompt, max_out_len=self.max_out_len, options=dict(self.options))


def answer_call_of(dataset_cfg: Mapping) -> Optional[AnswerCall]:
    """The dataset config's second call, None where its answer takes one call."""
    found = dataset_cfg['infer_cfg']['inferencer'].get('answer_call')
    return None if found is None else AnswerCall(**found)


def merged_usage(first: dict, second: Optional[dict]) -> dict:
    """One prediction's usage record over its calls: tokens, latency and cost summed, cut or
    mismatched where either was, ``requests`` the calls that reached a server, ``calls`` each."""
    if second is None:
        return {**first, 'requests': int(first['sent'] and not first['cached']), 'calls': [first]}
    both = (first, second)

    def total(name: str):
        values = [r.get(name) for r in both]
        return None if all(v is None for v in values) else sum(v or 0 for v in values)

    matches = [r.get('prompt_tokens_match') for r in both]
    return {
        **first,
        'sent': any(r['sent'] for r in both),
        'prompt_tokens': total('prompt_tokens'),
        'completion_tokens': total('completion_tokens'),
        'local_prompt_tokens': total('local_prompt_tokens'),
        'prompt_tokens_match': None if None in matches else all(matches),
        'latency_s': round(total('latency_s'), 4),
        'cached': all(r['cached'] for r in both),
        'truncated': any(r['truncated'] for r in both),
        'cost_usd': total('cost_usd'),
        'prefix_cached_tokens': total('prefix_cached_tokens'),
        'requests': sum(int(r['sent'] and not r['cached']) for r in both),
        'calls': list(both),
    }
