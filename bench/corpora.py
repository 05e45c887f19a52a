"""The public-domain books in ../shared/corpora, without their Project Gutenberg header/footer."""
from __future__ import annotations

from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / 'shared' / 'corpora'


def read_book(path: Path) -> str:
    text = path.read_text(encoding='utf-8')
    start = text.find('*** START OF')
    if start != -1:
        text = text[text.find('\n', start) + 1:]
    end = text.find('*** END OF')
    return text[:end] if end != -1 else text
