"""LongBench v2's prompts: the official templates (``prompts/*.txt`` of THUDM/LongBench at 2e00731,
byte for byte: no trailing newline, a curly apostrophe in "Let’s") and how a record fills them.

Two ways to fill, one per mode:

- ``official``: as pred.py does, one ``str.replace`` per placeholder in turn, ``$DOC$`` first. Text
  put in by an earlier replace is searched by the later ones, so ``$Q$`` or ``$C_B$`` written
  inside a document (or ``$C_A$`` inside a question) is filled too, while ``$DOC$`` inside a
  question stays as written; in the answer call ``$COT$`` anywhere in the record is replaced by
  the first reply.
- ``default``: every placeholder of the template filled in one pass; the record's own text is
  never searched, so it reaches the model as written.

Both strip the context, question and choices (and the first reply in the answer call) of
surrounding white space, as pred.py does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Optional

ZERO_SHOT = (
    'Please read the following text and answer the question below.\n\n<text>\n$DOC$\n</text>\n\n'
    'What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n'
    '(C) $C_C$\n(D) $C_D$\n\nFormat your response as follows: "The correct answer is (insert '
    'answer here)".'
)
COT = (
    'Please read the following text and answer the questions below.\n\n<text>\n$DOC$\n</text>\n\n'
    'What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n'
    '(C) $C_C$\n(D) $C_D$\n\nLet’s think step by step:'
)
COT_ANSWER = (
    'Please read the following text and answer the questions below.\n\nThe text is too long and '
    'omitted here.\n\nWhat is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n'
    '(B) $C_B$\n(C) $C_C$\n(D) $C_D$\n\nLet’s think step by step: $COT$\n\nBased on the above, '
    'what is the single, most likely answer choice? Format your response as follows: "The '
    'correct answer is (insert answer here)".'
)
NO_CONTEXT = (
    'What is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n(B) $C_B$\n(C) $C_C$\n'
    '(D) $C_D$\n\nWhat is the single, most likely answer choice? Format your response as follows: '
    '"The correct answer is (insert answer here)".'
)
RAG = (
    'Please read the following retrieved text chunks and answer the question below.\n\n<text>\n'
    '$DOC$\n</text>\n\nWhat is the correct answer to this question: $Q$\nChoices:\n(A) $C_A$\n'
    '(B) $C_B$\n(C) $C_C$\n(D) $C_D$\n\nFormat your response as follows: "The correct answer is '
    '(insert answer here)".'
)

MODES = ('default', 'official')
# The placeholders in pred.py's order of replacement.
PLACEHOLDERS = ('$DOC$', '$Q$', '$C_A$', '$C_B$', '$C_C$', '$C_D$', '$COT$')
_PLACEHOLDER = re.compile('|'.join(re.escape(p) for p in PLACEHOLDERS))


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f'LongBench v2 mode must be one of {list(MODES)}, not {mode!r}')
    return mode


def fields(record: Mapping, context: str, reasoning: Optional[str] = None) -> dict[str, str]:
    """Placeholder -> text for one record: stripped context, question and choices, and for the
    answer call only (``reasoning`` given) the first reply, stripped."""
    found = {
        '$DOC$': context.strip(),
        '$Q$': record['question'].strip(),
        **{f'$C_{letter}$': record[f'choice_{letter}'].strip() for letter in 'ABCD'},
    }
    if reasoning is not None:
        found['$COT$'] = reasoning.strip()
    return found


def fill(template: str, values: Mapping[str, str], mode: str = 'default') -> str:
    """``template`` with the placeholders of ``values`` replaced (see the module's two ways);
    a placeholder ``values`` lacks stays as written in both."""
    if check_mode(mode) == 'official':
        for placeholder in PLACEHOLDERS:
            if placeholder in values:
                template = template.replace(placeholder, values[placeholder])
        return template
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(), match.group()), template)


def retrieved_context(chunks: Sequence[Mapping], count: int) -> str:
    """The RAG setting's document: the first ``count`` chunks in the record's (rank) order, put
    back in document order by ``c_idx``, each as ``Retrieved chunk {k}: {content}``."""
    if count < 1:
        raise ValueError(f'the RAG setting needs at least one chunk, not {count}')
    kept = sorted(chunks[:count], key=lambda chunk: chunk['c_idx'])
    return '\n\n'.join(
        f'Retrieved chunk {number}: {chunk["content"]}' for number, chunk in enumerate(kept, 1)
    )
