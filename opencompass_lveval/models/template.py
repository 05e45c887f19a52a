"""The role parser of the long-context wrappers: the dataset's prompt reaches the model as it is.

OpenCompass's HF and vLLM models parse a prompt with ``APITemplateParser`` and a default meta
template of three roles (HUMAN; SYSTEM, sent as HUMAN; BOT, where generation starts). Each round
emits every role of the meta template, filled by the dataset or not, and the parser then joins
consecutive prompts of one role with ``'\\n'``. A dataset that fills only HUMAN (LV-Eval, Ada-LEval,
most of OpenCompass's) therefore gets ``prompt + '\\n'`` as its user message: a newline the official
code never sent, which also moves a middle cut on SentencePiece tokenizers by one token.

``ExactTemplateParser`` leaves out the roles a round did not fill before that join; prompts of two
filled roles are still joined as OpenCompass joins them.

It also carries the cuttable span of a prompt item (``cuttable.py``) into the message made from it,
which OpenCompass's ``_role2api_role`` would drop (it builds a new dict of role and prompt): the
span's ends travel as two marker characters inside the text through OpenCompass's own parsing
(meta-template ``begin``/``end`` text, the ``'\\n'`` join of two prompts of one role) and are
taken out of the finished messages, which get the span, shifted to where the text landed. A
message joined from several marked prompts keeps one span, the longest (``cuttable.one_span``):
everything else in it, the other marked parts included, is protected.
"""

from __future__ import annotations

from typing import Optional

from opencompass.models.base_api import APITemplateParser

from ..prompts.cuttable import CUTTABLE, checked, one_span

# OpenCompass's default for its HF and vLLM chat models (huggingface_above_v4_33), same roles.
DEFAULT_META_TEMPLATE = dict(
    round=[
        dict(role='HUMAN', api_role='HUMAN'),
        dict(role='SYSTEM', api_role='HUMAN'),
        dict(role='BOT', api_role='BOT', generate=True),
    ]
)


# Where a cuttable span starts and ends, inside a text while OpenCompass parses it: a NUL beside a
# Unicode noncharacter, which no prompt holds (one that does is refused).
_OPEN, _CLOSE = '\0\ufdd0', '\ufdd1\0'
_MARKERS = (_OPEN, _CLOSE)


def _unmarked(text: str) -> tuple[str, Optional[tuple[int, int]]]:
    """The text without its span markers, and the span they enclosed (one_span of several)."""
    pieces, spans, size, at = [], [], 0, 0
    while (start := text.find(_OPEN, at)) >= 0:
        end = text.index(_CLOSE, start)
        pieces += [text[at:start], text[start + len(_OPEN) : end]]
        size += start - at
        spans.append((size, size + end - start - len(_OPEN)))
        size += end - start - len(_OPEN)
        at = end + len(_CLOSE)
    pieces.append(text[at:])
    return ''.join(pieces), one_span(spans)


class ExactTemplateParser(APITemplateParser):
    """``APITemplateParser`` without the empty prompts of roles a round left unfilled, carrying
    the cuttable span of each prompt item into its message."""

    def parse_template(self, prompt_template, mode):
        parsed = super().parse_template(prompt_template, mode)
        if isinstance(parsed, list):
            for item in parsed:
                if isinstance(item, dict) and _OPEN in item.get('prompt', ''):
                    item['prompt'], item[CUTTABLE] = _unmarked(item['prompt'])
        return parsed

    def _prompt2api(self, prompts, role_dict, for_gen=False):
        converted, proceed = super()._prompt2api(prompts, role_dict, for_gen)
        if isinstance(converted, list):
            # A round made only of empty prompts keeps its first, as OpenCompass would.
            converted = [item for item in converted if item['prompt']] or converted[:1]
        return converted, proceed

    def _role2api_role(self, role_prompt, role_dict, for_gen=False):
        key = role_prompt['role'] if role_prompt['role'] in role_dict else None
        key = key or role_prompt.get('fallback_role')
        merged = role_dict.get(key)
        text = merged.get('prompt', '') if isinstance(merged, dict) else ''
        span = checked(merged.get(CUTTABLE), text) if text else None
        if span is not None:
            if any(marker in text for marker in _MARKERS):
                raise ValueError('a prompt holds the characters that mark its cuttable span')
            start, end = span
            marked = text[:start] + _OPEN + text[start:end] + _CLOSE + text[end:]
            role_dict = {**role_dict, key: {**merged, 'prompt': marked}}
        return super()._role2api_role(role_prompt, role_dict, for_gen)


def prompt_parser(meta_template: Optional[dict] = None) -> ExactTemplateParser:
    """The parser every long-context wrapper (and ``lveval inputs``) uses."""
    return ExactTemplateParser(meta_template or DEFAULT_META_TEMPLATE)
