"""Counting a cut text's tokens from its seam only.

An API client that cuts a prompt in the middle must know how many tokens the server will count
for the cut text. Encoding the whole cut text again costs a second tokenization; for tokenizers
whose output provably splits at certain points, only the seam between such a point in the kept
head and one in the kept tail needs encoding: the ids on either side are the uncut ids. Two
families are covered, each by a check of the tokenizer itself (anything else is encoded whole):

- tiktoken's cl100k_base (the GPT rows): its pre-tokenizer pattern never joins an ASCII letter or
  a CJK ideograph with a following space, newline or punctuation mark (``tiktoken_split_point``);
- a served Llama-style SentencePiece tokenizer (BPE over the whole text, no pre-tokenizer, spaces
  normalised to '▁'): no merge crosses a point where '▁' follows another character when no
  vocabulary entry holds such a pair, nor the edges of a character spelled in byte-fallback ids
  when no merge takes one (``SentencePieceSeams``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Optional

SEAM_WINDOW = 64  # ids searched on each side of a cut for a split point

# The pre-tokenizer patterns ``tiktoken_split_point`` was checked against: cl100k_base's.
SEAM_SPLIT_PATTERNS = frozenset(
    {
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
        r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    }
)
_SPLITS_AFTER_LETTER = frozenset(' \n.,;:!?"()[]-，。、；：？！“”（）《》【】')


def tiktoken_split_point(
    encoding: Any, ids: list[int], lo: int, hi: int, last: bool = False
) -> Optional[int]:
    """A token index k in (lo, hi) (the last such, or the first) where the text splits for
    cl100k_base's pre-tokenizer whatever follows or precedes: an ASCII letter or a CJK ideograph
    before it, a space, newline or punctuation mark after it. The pattern never puts such a pair
    in one piece, and decides the pieces before the point from the text up to the character
    after it (its whitespace rules look only over whitespace runs, which a letter ends), so any
    text that has these two characters around the point splits there, and the ids on each side
    are those of its own side. Both characters must lie within ids[lo:hi]."""
    pieces = [encoding.decode_single_token_bytes(i) for i in ids[lo:hi]]
    data = b''.join(pieces)
    offsets, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        offsets.append(at)
    points = range(len(offsets) - 1, -1, -1) if last else range(len(offsets))
    for index in points:
        offset = offsets[index]
        before, after = _char_before(data, offset), _char_at(data, offset)
        if before and after and _ends_piece(before) and after in _SPLITS_AFTER_LETTER:
            return lo + index + 1
    return None


def _ends_piece(char: str) -> bool:
    return (char.isascii() and char.isalpha()) or '\u4e00' <= char <= '\u9fff'


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_before(data: bytes, offset: int) -> Optional[str]:
    """The whole character ending at ``offset`` of UTF-8 ``data``, or None (a broken one, or
    one that starts before ``data``)."""
    if offset >= len(data) or _is_continuation(data[offset]):
        return None
    start = offset - 1
    while start > 0 and _is_continuation(data[start]):
        start -= 1
    try:
        return data[start:offset].decode('utf-8')
    except UnicodeDecodeError:
        return None


def _char_at(data: bytes, offset: int) -> Optional[str]:
    """The whole character starting at ``offset`` of UTF-8 ``data``, or None."""
    end = offset + 1
    while end < len(data) and _is_continuation(data[end]):
        end += 1
    try:
        return data[offset:end].decode('utf-8')
    except UnicodeDecodeError:
        return None


SPACE = '\u2581'  # SentencePiece's '▁'
# The normaliser and decoder of a Llama-style SentencePiece tokenizer as Hugging Face converts it
# (legacy form): '▁' prepended, spaces replaced by '▁'; decoded back with one leading space
# stripped. ``SentencePieceSeams`` is exact for exactly these.
_LLAMA_NORMALIZER = {
    'type': 'Sequence',
    'normalizers': [
        {'type': 'Prepend', 'prepend': SPACE},
        {'type': 'Replace', 'pattern': {'String': ' '}, 'content': SPACE},
    ],
}
_LLAMA_DECODER = {
    'type': 'Sequence',
    'decoders': [
        {'type': 'Replace', 'pattern': {'String': SPACE}, 'content': ' '},
        {'type': 'ByteFallback'},
        {'type': 'Fuse'},
        {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0},
    ],
}


class SentencePieceSeams:
    """The ids of a framed text with the middle of its prompt cut out, from the uncut ids and the
    seam alone, for a Llama-style SentencePiece tokenizer.

    Such a tokenizer runs BPE over the whole normalised text. A merge joins two adjacent tokens
    into a vocabulary entry, so where no entry holds '▁' after another character, no merge ever
    crosses a point where '▁' follows another character; and a character outside the vocabulary
    (spelled in byte-fallback ids) is in no merge when no merge takes a byte piece, so no merge
    crosses its edges. The tokens on each side of such a point are those of its side alone,
    whatever the other side holds. Decoding ids joins their pieces ('▁' as a space, byte ids as
    their character; one leading space stripped), and normalising gives the same pieces back,
    so the cut text's ids are the uncut ids up to the head's last such point, the seam up to
    the tail's first such point tokenized alone, and the uncut ids after it."""

    def __init__(self, model: Any, opens: bytes, closes: bytes, spelled: bytes) -> None:
        self.model = model
        self.opens = opens  # per id: 1 where its piece begins with '▁' (no added token)
        self.closes = closes  # per id: 1 where its piece ends in another character
        self.spelled = spelled  # per id: 1 for a byte-fallback piece ('<0x0A>')

    @classmethod
    def of(cls, tokenizer: Any) -> Optional[SentencePieceSeams]:
        """The counter for a Hugging Face fast tokenizer of this family, else None."""
        backend = getattr(tokenizer, 'backend_tokenizer', None)
        if backend is None or backend.pre_tokenizer is not None:
            return None
        spec = json.loads(backend.to_str())
        model = spec.get('model') or {}
        if (
            model.get('type') != 'BPE'
            or model.get('dropout')
            or model.get('ignore_merges')
            or model.get('continuing_subword_prefix')
            or model.get('end_of_word_suffix')
            or spec.get('normalizer') != _LLAMA_NORMALIZER
            or spec.get('decoder') != _LLAMA_DECODER
        ):
            return None
        vocab: dict[str, int] = model.get('vocab') or {}
        merged = (m.split(' ') if isinstance(m, str) else m for m in model.get('merges') or [])
        if any(_space_after_other(piece) for piece in vocab) or any(
            _BYTE_PIECE.fullmatch(part) for pair in merged for part in pair
        ):
            return None
        size = 1 + max([*vocab.values(), *(t['id'] for t in spec.get('added_tokens', []))])
        opens, closes, spelled = bytearray(size), bytearray(size), bytearray(size)
        added = {t['id'] for t in spec.get('added_tokens', [])}
        for piece, index in vocab.items():
            if index not in added and piece:
                opens[index] = piece[0] == SPACE
                closes[index] = piece[-1] != SPACE
                spelled[index] = bool(_BYTE_PIECE.fullmatch(piece))
        return cls(backend.model, bytes(opens), bytes(closes), bytes(spelled))

    def count(
        self,
        full: list[int],
        start: int,
        head: int,
        tail_start: int,
        end: int,
        decode: Callable[[list[int]], str],
    ) -> Optional[int]:
        """The ids of the text whose ids are ``full`` with the prompt's ids ``full[start:end]``
        cut to ``[:head]`` and ``[tail_start:]`` (indices into the prompt's ids) and decoded
        together, or None where no split point lies near both sides of the cut."""
        head, tail_start = start + head, start + tail_start  # indices into ``full``
        before = next(
            (
                k
                for k in range(head - 1, max(start, head - SEAM_WINDOW), -1)
                if self._splits(full, k)
            ),
            None,
        )
        after = next(
            (
                k
                for k in range(tail_start + 1, min(end, tail_start + SEAM_WINDOW))
                if self._splits(full, k)
            ),
            None,
        )
        if before is None or after is None:
            return None
        seam = decode(full[before:head] + full[tail_start:after]).replace(' ', SPACE)
        if self.opens[full[before]]:
            seam = SPACE + seam  # the leading '▁' that decoding strips
        return before + len(self.model.tokenize(seam)) + len(full) - after

    def _splits(self, ids: list[int], k: int) -> bool:
        """Whether ids[k - 1] and ids[k] meet where no merge crosses: '▁' after another
        character, or the edge of a character spelled in byte ids (not inside one)."""
        left, right = ids[k - 1], ids[k]
        if max(left, right) >= len(self.opens):
            return False
        if self.spelled[left] != self.spelled[right]:
            return bool(self.spelled[left] or self.closes[left]) and bool(
                self.spelled[right] or self.opens[right] or self.closes[right]
            )
        return bool(self.opens[right] and self.closes[left])


_BYTE_PIECE = re.compile(r'<0x[0-9A-F]{2}>')


def _space_after_other(piece: str) -> bool:
    return any(a != SPACE and b == SPACE for a, b in zip(piece, piece[1:]))
