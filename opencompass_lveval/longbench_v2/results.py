"""The line pred.py writes for one answered record, and what an empty reply does to it.

pred.py writes the record's 12 kept fields (``tasks.RECORD_FIELDS``; the RAG setting keeps
``retrieved_context`` too) with ``context`` cut to its first 1,000 characters (for RAG: of the
joined chunks), then ``response_cot`` (chain of thought: the first reply, stripped),
``response`` (the answer reply, stripped), ``pred`` (``extract_answer``) and ``judge``
(``pred == answer``), as ``json.dumps(line, ensure_ascii=False)``.

In ``official`` mode a reply that is exactly ``''`` (what pred.py's ``query_llm`` returns after
five failed tries, or an empty completion) drops the record: no line, so it counts neither right
nor wrong and the table's denominators shrink. A reply of white space only is kept (``response``
empty, ``pred`` None). In ``default`` mode the record is kept and counts wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Optional

from . import prompts
from .extraction import extract_answer
from .requests import document
from .tasks import RECORD_FIELDS, Setting

CONTEXT_KEPT = 1000  # characters of the context a result line keeps


def result_line(
    record: Mapping, setting: Setting, replies: Sequence[str], mode: str = 'default', rag: int = 0
) -> Optional[dict]:
    """The result line for ``record`` given its replies in call order (one, or two for chain of
    thought; one where the first was empty), or None where official mode drops it."""
    prompts.check_mode(mode)
    if len(replies) not in (1, setting.calls) or (len(replies) < setting.calls and replies[0]):
        raise ValueError(
            f'the {setting.name} setting takes {setting.calls} replies per record (one when the '
            f'first is empty), not {len(replies)}'
        )
    if mode == 'official' and any(reply == '' for reply in replies):
        return None
    line = {name: record[name] for name in RECORD_FIELDS}
    if setting.uses_retrieval:
        line['retrieved_context'] = record['retrieved_context']
    if setting.calls == 2:
        line['response_cot'] = replies[0].strip()
    answer = replies[-1].strip() if len(replies) == setting.calls else ''
    line['response'] = answer
    line['pred'] = extract_answer(answer)
    line['judge'] = line['pred'] == record['answer']
    line['context'] = document(record, setting, rag)[:CONTEXT_KEPT]
    return line


def dumps(line: Mapping) -> str:
    """A result line as pred.py writes it (no newline)."""
    return json.dumps(line, ensure_ascii=False)
