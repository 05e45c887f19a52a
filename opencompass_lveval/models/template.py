"""The role parser of the long-context wrappers: the dataset's prompt reaches the model as it is.

OpenCompass's HF and vLLM models parse a prompt with ``APITemplateParser`` and a default meta
template of three roles (HUMAN; SYSTEM, sent as HUMAN; BOT, where generation starts). Each round
emits every role of the meta template, filled by the dataset or not, and the parser then joins
consecutive prompts of one role with ``'\\n'``. A dataset that fills only HUMAN (LV-Eval, Ada-LEval,
most of OpenCompass's) therefore gets ``prompt + '\\n'`` as its user message: a newline the official
code never sent, which also moves a middle cut on SentencePiece tokenizers by one token.

``ExactTemplateParser`` leaves out the roles a round did not fill before that join; prompts of two
filled roles are still joined as OpenCompass joins them.
"""

from __future__ import annotations

from typing import Optional

from opencompass.models.base_api import APITemplateParser

# OpenCompass's default for its HF and vLLM chat models (huggingface_above_v4_33), same roles.
DEFAULT_META_TEMPLATE = dict(
    round=[
        dict(role='HUMAN', api_role='HUMAN'),
        dict(role='SYSTEM', api_role='HUMAN'),
        dict(role='BOT', api_role='BOT', generate=True),
    ]
)


class ExactTemplateParser(APITemplateParser):
    """``APITemplateParser`` without the empty prompts of roles a round left unfilled."""

    def _prompt2api(self, prompts, role_dict, for_gen=False):
        converted, proceed = super()._prompt2api(prompts, role_dict, for_gen)
        if isinstance(converted, list):
            # A round made only of empty prompts keeps its first, as OpenCompass would.
            converted = [item for item in converted if item['prompt']] or converted[:1]
        return converted, proceed


def prompt_parser(meta_template: Optional[dict] = None) -> ExactTemplateParser:
    """The parser every long-context wrapper (and ``lveval inputs``) uses."""
    return ExactTemplateParser(meta_template or DEFAULT_META_TEMPLATE)
