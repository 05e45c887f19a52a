"""Plain-text helpers shared by the builders: books, lengths, sentence boundaries, replacements."""

from __future__ import annotations

import re
from pathlib import Path

_SENTENCE_END = {
    'en': re.compile(r'(?<=[.!?])["\u201d\u2019)]*(?=\s)'),
    'zh': re.compile(r'(?<=[。！？])[”」』]*'),
}


def book_paragraphs(path: str | Path) -> list[str]:
    """The non-empty paragraphs (blank-line separated) of a book, stripped."""
    return [p.strip() for p in read_book(path).split('\n\n') if p.strip()]


def read_book(path: str | Path) -> str:
    """A Project Gutenberg text without its header and licence footer."""
    text = Path(path).read_text(encoding='utf-8')
    start = text.find('*** START OF')
    if start != -1:
        text = text[text.find('\n', start) + 1 :]
    end = text.find('*** END OF')
    return text[:end] if end != -1 else text


def length(text: str, language: str) -> int:
    """LV-Eval's length: words for English, characters (whitespace excluded) for Chinese."""
    if language == 'en':
        return len(text.split())
    return len(text) - sum(text.count(c) for c in ' \n\t\r\u3000')


def cut(text: str, size: int, language: str) -> str:
    """The first ``size`` words (English) or characters (Chinese) of ``text``, counted as
    ``length`` counts them (Chinese whitespace is kept but not counted); nothing for a size of
    zero or less."""
    if size <= 0:
        return ''
    if language == 'en':
        return ' '.join(text.split()[:size])
    seen = 0
    for offset, char in enumerate(text):
        if not char.isspace():
            seen += 1
            if seen == size:
                return text[: offset + 1]
    return text


def sentence_boundaries(text: str, language: str) -> list[int]:
    """Offsets just after each sentence end: where a sentence can be inserted between two."""
    return [match.end() for match in _SENTENCE_END[language].finditer(text)]


def insert_sentence(text: str, offset: int, sentence: str, language: str) -> str:
    """``sentence`` inserted at ``offset`` (a sentence boundary), spaced as the language wants."""
    return text[:offset] + (' ' + sentence if language == 'en' else sentence) + text[offset:]


def replacer(rules: list[tuple[str, str]], language: str):
    """One-pass keyword/phrase replacement: longest original first, whole words in English.

    Returns a function text -> text; with no rules, the identity.
    """
    if not rules:
        return lambda text: text
    mapping = dict(rules)
    alternatives = '|'.join(re.escape(o) for o in sorted(mapping, key=len, reverse=True))
    pattern = re.compile(rf'\b(?:{alternatives})\b' if language == 'en' else f'(?:{alternatives})')
    return lambda text: pattern.sub(lambda match: mapping[match.group(0)], text)
