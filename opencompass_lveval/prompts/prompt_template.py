"""A prompt template that fills every field of a record in one pass.

OpenCompass's ``PromptTemplate`` replaces ``{field}`` for one field after another, so text inside an
earlier field is read as a placeholder by the later ones: a question containing ``{context}`` gets
the whole context pasted into it. Here each field first becomes a stand-in that no text contains
(``\\0<n>\\0``), OpenCompass's own logic places the stand-ins (rounds, roles, in-context examples,
separators: nothing of it is copied), and one regular-expression pass puts the values in their
places; substituted text is never scanned again. With fields that hold no braces the result is
identical to OpenCompass's, so the official prompts stay byte for byte.

``cut`` names the field a middle cut may remove text from (``cut='context'``): knowing where that
field's value lands, the template marks it on the prompt (``cuttable.py``), and the long-context
wrappers protect everything else of the message, instructions and question, from the cut.

``messages`` names a field holding the whole prompt as chat messages (a list, or the text of a
JSON array: ``messages.py``); the prompt is then that list, as written, and ``cut='turns'`` lets
a cut drop whole early turns (the template only marks them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from typing import Any, Optional, Union

from opencompass.openicl.icl_prompt_template import PromptTemplate
from opencompass.registry import ICL_PROMPT_TEMPLATES
from opencompass.utils.prompt import PromptList

from .cuttable import CUTTABLE, MarkedText, Span, one_span
from .messages import TURNS, checked_messages, mark_conversation_turns

_STAND_IN = re.compile('\0(\\d+)\0')


def _fill_in_one_pass(render: Callable[[dict], Any], entry: dict, cut: Optional[str] = None) -> Any:
    """``render`` applied to stand-ins for the entry's fields, then every stand-in replaced by
    its field's text in a single pass; with ``cut``, each filled text that holds that field is
    marked with where its value landed."""
    keys = list(entry)
    if cut is not None and cut not in entry:
        raise ValueError(f'cut={cut!r} names no field of the record; its fields are {keys}')
    cut_number = keys.index(cut) if cut is not None else None
    rendered = render({key: f'\0{number}\0' for number, key in enumerate(keys)})
    values = [str(entry[key]) for key in keys]
    marked = []

    def restore(text: str) -> tuple[str, Optional[Span]]:
        pieces, spans, size, at = [], [], 0, 0
        for match in _STAND_IN.finditer(text):
            number, value = int(match[1]), values[int(match[1])]
            pieces += [text[at : match.start()], value]
            size += match.start() - at
            if number == cut_number:
                spans.append((size, size + len(value)))
            size += len(value)
            at = match.end()
        pieces.append(text[at:])
        span = one_span(spans)
        marked.append(span is not None)
        return ''.join(pieces), span

    if isinstance(rendered, str):
        text, span = restore(rendered)
        filled: Union[str, PromptList] = text if span is None else MarkedText(text, span)
    else:
        filled = PromptList()
        for item in rendered:
            if isinstance(item, str):
                text, span = restore(item)
                item = text if span is None else MarkedText(text, span)
            elif isinstance(item, dict) and isinstance(item.get('prompt'), str):
                text, span = restore(item['prompt'])
                item = {**item, 'prompt': text}
                if span is not None:
                    item[CUTTABLE] = span
            filled.append(item)
    if cut is not None and not any(marked):
        raise ValueError(f'cut={cut!r}: the template never uses {{{cut}}}')
    return filled


@ICL_PROMPT_TEMPLATES.register_module()
class LongContextPromptTemplate(PromptTemplate):
    """``PromptTemplate`` whose fields are filled in one pass: text inside a field is never read
    as a placeholder. Same configuration as ``PromptTemplate``, and ``cut``: the field a middle
    cut may remove text from, marked on each prompt (in-context examples are not marked);
    ``messages``: the field holding the prompt as chat messages (``template`` is then unused),
    ``cut='turns'`` marking its earlier exchanges as turns a cut may drop whole."""

    def __init__(
        self,
        template: Union[dict, str],
        ice_token: Optional[str] = None,
        sep_token: Optional[str] = None,
        cut: Optional[str] = None,
        messages: Optional[str] = None,
    ) -> None:
        super().__init__(template, ice_token, sep_token)
        if messages is not None and cut not in (None, TURNS):
            raise ValueError(
                f'cut={cut!r} with messages={messages!r}: a prompt of chat messages is cut by '
                f"whole turns (cut='{TURNS}') or, without cut, in the middle of its last message"
            )
        self.cut, self.messages = cut, messages

    def generate_item(
        self,
        entry: dict,
        output_field: Hashable = None,
        output_field_replace_token: str = '',
        ice_field_replace_token: str = '',
    ) -> Any:
        if self.messages is not None:
            return self.chat_messages(entry)
        return _fill_in_one_pass(
            lambda stand_ins: super(LongContextPromptTemplate, self).generate_item(
                stand_ins, output_field, output_field_replace_token, ice_field_replace_token
            ),
            entry,
            self.cut,
        )

    def chat_messages(self, entry: dict) -> list[dict]:
        """The record's messages, their turns marked where ``cut='turns'``."""
        if self.messages not in entry:
            raise ValueError(
                f'messages={self.messages!r} names no field of the record; its fields are '
                f'{list(entry)}'
            )
        found = checked_messages(entry[self.messages], f'field {self.messages!r}')
        if self.cut != TURNS:
            return [{key: m[key] for key in m if key != TURNS} for m in found]
        return mark_conversation_turns(found)

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
            self.cut,
        )
