"""A prompt template that fills every field of a record in one pass.

OpenCompass's ``PromptTemplate`` replaces ``{field}`` for one field after another, so text inside an
earlier field is read as a placeholder by the later ones: a question containing ``{context}`` gets
the whole context pasted into it. Here each field first becomes a stand-in that no text contains
(``\\0<n>\\0``), OpenCompass's own logic places the stand-ins (rounds, roles, in-context examples,
separators: nothing of it is copied), and one regular-expression pass puts the values in their
places; substituted text is never scanned again. With fields that hold no braces the result is
identical to OpenCompass's, so the official prompts stay byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from typing import Any

from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.registry import ICL_PROMPT_TEMPLATES
from opencompass.utils.prompt import PromptList

_STAND_IN = re.compile('\0(\\d+)\0')


def _fill_in_one_pass(render: Callable[[dict], Any], entry: dict) -> Any:
    """``render`` applied to stand-ins for the entry's fields, then every stand-in replaced by
    its field's text in a single pass."""
    keys = list(entry)
    rendered = render({key: f'\0{number}\0' for number, key in enumerate(keys)})
    values = [str(entry[key]) for key in keys]

    def restore(text: str) -> str:
        return _STAND_IN.sub(lambda match: values[int(match[1])], text)

    if isinstance(rendered, str):
        return restore(rendered)
    filled = PromptList()
    for item in rendered:
        if isinstance(item, str):
            item = restore(item)
        elif isinstance(item, dict) and isinstance(item.get('prompt'), str):
            item = {**item, 'prompt': restore(item['prompt'])}
        filled.append(item)
    return filled


@ICL_PROMPT_TEMPLATES.register_module()
class LongContextPromptTemplate(PromptTemplate):
    """``PromptTemplate`` whose fields are filled in one pass: text inside a field is never read
    as a placeholder. Same configuration as ``PromptTemplate``."""

    def generate_item(
        self,
        entry: dict,
        output_field: Hashable = None,
        output_field_replace_token: str = '',
        ice_field_replace_token: str = '',
    ) -> Any:
        return _fill_in_one_pass(
            lambda stand_ins: super(LongContextPromptTemplate, self).generate_item(
                stand_ins, output_field, output_field_replace_token, ice_field_replace_token
            ),
            entry,
        )

    def generate_ice_item(self, entry: dict, label: Hashable) -> Any:
        return _fill_in_one_pass(
            lambda stand_ins: super(LongContextPromptTemplate, self).generate_ice_item(
                stand_ins, label
            ),
            entry,
        )

    def generate_label_prompt_item(
        self, entry: dict, ice: Any, label: Hashable, remain_sep: bool = False
    ) -> Any:
        return _fill_in_one_pass(
            lambda stand_ins: super(LongContextPromptTemplate, self).generate_label_prompt_item(
                stand_ins, ice, label, remain_sep
            ),
            entry,
        )
