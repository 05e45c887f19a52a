"""The part of a prompt that a middle cut may remove text from, carried with the prompt itself.

A dataset config names the field a cut may shorten (``LongContextPromptTemplate(cut='context')``);
filling a prompt, the template records where that field's value landed: a prompt item (a dict of
a round) gains ``CUTTABLE: (start, end)``, character offsets into its ``prompt`` text, and a plain
string prompt becomes a ``MarkedText``, a ``str`` with the same span as an attribute. The role
parser of the wrappers (``models/template.py``) carries the span into the parsed messages, and the
input builder (``models/inputs.py``) protects everything outside it: the instructions before the
span and the question after it survive a cut, or the cut is an error. A prompt without a span has
nothing protected. Nothing here knows a benchmark.

One span per message: where a message would hold several (a field used twice, or two marked
prompts joined into one message), the longest is kept (the first on ties) and everything else,
the other marked parts included, is protected.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

CUTTABLE = 'cuttable'  # the key of a prompt item's span

Span = tuple[int, int]


class MarkedText(str):
    """A prompt string with the span a middle cut may remove text from (``cuttable``)."""

    cuttable: Optional[Span]

    def __new__(cls, text: str, cuttable: Optional[Span]) -> MarkedText:
        marked = super().__new__(cls, text)
        marked.cuttable = cuttable
        return marked

    def __reduce__(self):
        return MarkedText, (str(self), self.cuttable)


def one_span(spans: Iterable[Span]) -> Optional[Span]:
    """The span a message keeps of several: the longest, the first on ties; None for none."""
    best = None
    for span in spans:
        if best is None or span[1] - span[0] > best[1] - best[0]:
            best = span
    return best


def checked(span: Any, text: str) -> Optional[Span]:
    """``span`` as a pair of ints inside ``text``; None for no span; an error for a span that
    does not fit the text it came with (the text changed after it was marked)."""
    if span is None:
        return None
    start, end = span
    if not 0 <= start <= end <= len(text):
        raise ValueError(
            f'the cuttable span {tuple(span)} does not fit its prompt of {len(text)} characters'
        )
    return int(start), int(end)


def text_span(prompt: Any) -> Optional[Span]:
    """The span of a string prompt: a ``MarkedText``'s, None for a plain string."""
    return getattr(prompt, CUTTABLE, None) if isinstance(prompt, str) else None


def joined_span(items: list[tuple[str, Optional[Span]]], separator: str) -> Optional[Span]:
    """The span of texts joined with ``separator``, each with its own span or None."""
    spans, offset = [], 0
    for text, span in items:
        if span is not None:
            spans.append((offset + span[0], offset + span[1]))
        offset += len(text) + len(separator)
    return one_span(spans)
