"""The objects of a large JSON file one at a time: a top-level array of objects (``[{...}, ...]``,
LongBench v2's 465 MB ``data.json``) or objects one after another (JSON lines).

``json.load`` holds the file's bytes, its decoded text and every parsed object at once (three
copies at the peak). Here the file is read in slices, each object is parsed by the standard
library's C decoder as soon as its text is complete and handed over, and the text is dropped;
what stays is one slice of text plus what the caller keeps of the objects.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path

_SLICE = 1 << 24  # characters decoded per read
_SPACE = re.compile(r'[ \t\n\r]*')
_DECODER = json.JSONDecoder()


class JSONStreamError(ValueError):
    """The file is not a JSON array of objects or a sequence of objects; says where."""


class _Text:
    """A file's decoded text, read forward in slices; ``text[pos:]`` is what is left to parse."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder('utf-8-sig')()
        self.text, self.pos, self.dropped, self.eof = '', 0, 0, False

    @property
    def offset(self) -> int:
        """Characters of the file before ``pos``."""
        return self.dropped + self.pos

    def more(self, at_least: int = _SLICE) -> None:
        """Read at least ``at_least`` more characters (or to the end), dropping the parsed text."""
        pieces = [self.text[self.pos :]]
        wanted = at_least
        while wanted > 0 and not self.eof:
            raw = self.stream.read(wanted)
            self.eof = not raw
            piece = self.decoder.decode(raw, final=self.eof)
            pieces.append(piece)
            wanted -= len(piece) or 1
        self.dropped += self.pos
        self.text, self.pos = ''.join(pieces), 0

    def next_char(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos : self.pos + 1]
            self.more()

    def value(self) -> object:
        """Parse the JSON value starting at ``pos``, reading more until it is whole."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise JSONStreamError(
                        f'not valid JSON at character {self.dropped + exc.pos}: {exc.msg}'
                    ) from None
                self.more(max(_SLICE, len(self.text) - self.pos))
                continue
            self.pos = end
            return value


def json_objects_of(path: str | Path) -> Iterator[dict]:
    """Every object of ``path`` in order; a ``JSONStreamError`` (its message saying at which
    object and character) where the file is not an array of objects or a run of objects."""
    with open(path, 'rb') as stream:
        text = _Text(stream)
        first = text.next_char()
        in_array = first == '['
        if in_array:
            text.pos += 1
        count = 0
        while True:
            char = text.next_char()
            if char == '' or (in_array and char == ']'):
                break
            if in_array and count and char != ',':
                raise JSONStreamError(f'expected "," or "]" at character {text.offset}')
            if in_array and count:
                text.pos += 1
                text.next_char()
            start = text.offset
            value = text.value()
            if not isinstance(value, dict):
                raise JSONStreamError(
                    f'item {count + 1} (character {start}) is a {type(value).__name__}, not an '
                    'object'
                )
            count += 1
            yield value
        if in_array:
            if char != ']':
                raise JSONStreamError('the array is not closed by "]" (the file ends first)')
            text.pos += 1
            if text.next_char() != '':
                raise JSONStreamError(f'text after the array\'s "]" at character {text.offset}')
