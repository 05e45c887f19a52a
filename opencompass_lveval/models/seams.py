"""Counting a cut text's tokens from its seam only.

An API client that cuts a prompt in the middle must know how many tokens the server will count
for the cut text. Encoding the whole cut text again costs a second tokenization; for tokenizers
whose output provably splits at certain points, only the seam between such a point in the kept
head and one in the kept tail needs encoding: the ids on either side are the uncut ids. These
families are covered, each by a check of the tokenizer itself when it loads (anything else, and
any cut without such points near it, is encoded whole):

- a pre-tokenizer pattern proven here (``SEAM_SPLIT_PATTERNS``): cl100k_base's (tiktoken, the
  GPT rows), and Qwen2's and Llama-3's (Hugging Face byte-level BPE, ``ByteLevelSeams``). None
  joins an ASCII letter or a CJK ideograph with a following space, newline or punctuation mark
  (``letter_split_point``), and BPE never merges across the pieces it makes;
- a Llama-style SentencePiece tokenizer (BPE over the whole text, spaces as '▁'), in Hugging
  Face's legacy form (a normaliser) or in the Metaspace form transformers 5 loads Llama-2 folders
  in: no merge crosses a point where '▁' follows another character when no vocabulary entry
  holds such a pair, nor the edges of a character spelled in byte-fallback ids when no merge
  takes one (``SentencePieceSeams``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Optional

SEAM_WINDOW = 64  # ids searched on each side of a cut for a split point

# The pre-tokenizer patterns ``letter_split_point`` is proven for: cl100k_base's (as tiktoken
# writes it), then Qwen2's and Llama-3's (as their tokenizer.json write them). In each, the only
# alternatives that take a letter are the contractions (an apostrophe and one or two letters)
# and ``[^\r\n\p{L}\p{N}]?\p{L}+`` (its letters possessive in cl100k's, greedy in the others,
# with nothing after them to backtrack for): both end at the first character that is not a
# letter. So the piece that holds the letter before the point ends at the point whatever
# non-letter follows; the pieces before it are decided by the text before the point (the other
# alternatives stop at a letter, and the one look-ahead, ``(?!\S)``, looks one character on);
# and as no alternative looks behind, the pieces from the point on are those of the text from
# there (cl100k's ``\s++$`` looks at the text's end: a seam ends on a letter, a cut text where
# the uncut one did).
SEAM_SPLIT_PATTERNS = frozenset(
    {
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
        r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
        r"""\s*[\r\n]+|\s+(?!\S)|\s+""",
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
        r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    }
)
_SPLITS_AFTER_LETTER = frozenset(' \n.,;:!?"()[]-，。、；：？！“”（）《》【】')
_NO_TEXT = b'\xff'  # the bytes of an added token here: no UTF-8 text holds them


def letter_split_point(
    piece_bytes: Callable[[int], bytes], ids: list[int], lo: int, hi: int, last: bool = False
) -> Optional[int]:
    """A token index k in (lo, hi) (the last such, or the first) where the text splits for a
    pattern of ``SEAM_SPLIT_PATTERNS`` whatever follows or precedes: an ASCII letter or a CJK
    ideograph before it, a space, newline or punctuation mark after it, both whole within
    ids[lo:hi] (``piece_bytes``: a token's bytes)."""
    pieces = [piece_bytes(i) for i in ids[lo:hi]]
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


def _holds_split_pair(text: str) -> bool:
    return any(_ends_piece(a) and b in _SPLITS_AFTER_LETTER for a, b in zip(text, text[1:]))


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


class Seams:
    """The ids of a framed text with the middle of its prompt cut out, from the uncut ids and
    the seam alone, for a Hugging Face fast tokenizer of a covered family (``seams_of``).

    Decoding ids joins their texts, so the cut text is the uncut text up to the head's last split
    point, the seam, and the uncut text after the tail's first split point; the server's ids of
    it are the uncut ids on either side and those of the seam encoded alone. Added tokens would
    break this (the text between them is pre-tokenized on its own, and a seam could spell one
    out), so a prompt that holds one is counted whole, and so is a seam that spells one; and
    no added token is stripped or matched as a whole word, nor spells a split point itself
    (checked on load), so none can be matched across one."""

    def __init__(self, added: dict[int, str]) -> None:
        self.added = frozenset(added)
        self.added_texts = tuple(added.values())

    def covers(self, ids: list[int]) -> bool:
        """Whether cuts of a prompt whose own ids are ``ids`` may be counted from their seams."""
        return self.added.isdisjoint(ids)

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
        before = self.split_point(full, max(start, head - SEAM_WINDOW), head, last=True)
        after = self.split_point(full, tail_start, min(end, tail_start + SEAM_WINDOW))
        if before is None or after is None:
            return None
        seam = decode(full[before:head] + full[tail_start:after])
        if any(text in seam for text in self.added_texts):
            return None  # the server reads an added token in it
        return before + self.seam_size(seam, full[before]) + len(full) - after

    def split_point(self, ids: list[int], lo: int, hi: int, last: bool = False) -> Optional[int]:
        """A token index k in (lo, hi) (the last such, or the first) where no merge or
        pre-token crosses, decided by ids[lo:hi] alone."""
        raise NotImplementedError

    def seam_size(self, seam: str, first: int) -> int:
        """The server's count of the decoded seam, whose first id is ``first``."""
        raise NotImplementedError


def seams_of(tokenizer: Any) -> Optional[Seams]:
    """The seam counter of a Hugging Face fast tokenizer of a covered family, else None."""
    backend = _plain_bpe(tokenizer)
    if backend is None:
        return None
    return ByteLevelSeams.of(backend) or SentencePieceSeams.of(backend)


def _plain_bpe(tokenizer: Any) -> Any:
    """The backend of a fast tokenizer whose decode is the backend's alone, whose model is plain
    BPE (no dropout, no word prefix or suffix) and whose added tokens match their own text only
    (in the text as it is; no stripping, no whole-word rule); else None."""
    backend = getattr(tokenizer, 'backend_tokenizer', None)
    if backend is None or getattr(tokenizer, 'clean_up_tokenization_spaces', True):
        return None
    model = backend.model
    if (
        type(model).__name__ != 'BPE'
        or model.dropout
        or model.continuing_subword_prefix
        or model.end_of_word_suffix
    ):
        return None
    for token in backend.get_added_tokens_decoder().values():
        if token.lstrip or token.rstrip or token.single_word or token.normalized:
            return None
    return backend


def _spec(component: Any) -> Optional[dict]:
    """A normaliser's, pre-tokenizer's or decoder's settings as tokenizer.json writes them."""
    return None if component is None else json.loads(component.__getstate__())


def _added(backend: Any) -> dict[int, str]:
    return {index: t.content for index, t in backend.get_added_tokens_decoder().items()}


# Byte-level BPE (Qwen2, Llama-3) ------------------------------------------------------------------


class ByteLevelSeams(Seams):
    """Byte-level BPE behind a split pattern of ``SEAM_SPLIT_PATTERNS``: BPE runs on each piece
    of the pattern alone, so the ids split wherever the pieces do (``letter_split_point``).
    Under an NFC normaliser (Qwen2) the ids are those of the normalised text, which decoding
    gives back, so a cut text is normalised already but for its seam, which is encoded alone
    through the normaliser: NFC splits before each split point's second character too (a
    starter that combines with nothing before it)."""

    def __init__(self, backend: Any) -> None:
        from transformers.convert_slow_tokenizer import bytes_to_unicode

        super().__init__(_added(backend))
        self.backend = backend
        self.byte_of = {char: byte for byte, char in bytes_to_unicode().items()}

    @classmethod
    def of(cls, backend: Any) -> Optional[ByteLevelSeams]:
        """The counter for a backend of this family (checked as loaded), else None."""
        normalizer, decoder = _spec(backend.normalizer), _spec(backend.decoder)
        steps = (_spec(backend.pre_tokenizer) or {}).get('pretokenizers') or []
        if (
            normalizer not in (None, {'type': 'NFC'})
            or (decoder or {}).get('type') != 'ByteLevel'
            or len(steps) != 2
            or steps[0].get('type') != 'Split'
            or steps[0].get('pattern') not in [{'Regex': p} for p in SEAM_SPLIT_PATTERNS]
            or (steps[0].get('behavior'), steps[0].get('invert')) != ('Isolated', False)
            or (steps[1].get('type'), steps[1].get('use_regex')) != ('ByteLevel', False)
            or steps[1].get('add_prefix_space')
            or any(_holds_split_pair(text) for text in _added(backend).values())
        ):
            return None
        return cls(backend)

    def piece_bytes(self, index: int) -> bytes:
        token = None if index in self.added else self.backend.id_to_token(index)
        if token is None:
            return _NO_TEXT
        try:
            return bytes(self.byte_of[char] for char in token)
        except KeyError:  # not a byte-level token
            return _NO_TEXT

    def split_point(self, ids: list[int], lo: int, hi: int, last: bool = False) -> Optional[int]:
        return letter_split_point(self.piece_bytes, ids, lo, hi, last)

    def seam_size(self, seam: str, first: int) -> int:
        return len(self.backend.encode(seam, add_special_tokens=False))


# SentencePiece (Llama-2) ----------------------------------------------------------------------

SPACE = '\u2581'  # SentencePiece's '▁'
# The normaliser and decoder of a Llama-style SentencePiece tokenizer as Hugging Face converts it
# (legacy form): '▁' prepended, spaces replaced by '▁'; decoded back with one leading space
# stripped. Transformers 5 loads Llama-2 folders with the same decoder, no normaliser and a
# Metaspace pre-tokenizer that replaces spaces and prepends '▁' at the start of the text
# ('first'), or of every text between added tokens ('always'), without splitting.
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
_METASPACE_SCHEMES = ('first', 'always', 'never')


def _is_sentencepiece_pipeline(normalizer: Any, pre_tokenizer: Any, decoder: Any) -> bool:
    """The legacy form (a normaliser, no pre-tokenizer) or the Metaspace form (a Metaspace
    pre-tokenizer that does not split, no normaliser), with the Llama decoder."""
    if decoder != _LLAMA_DECODER:
        return False
    if pre_tokenizer is None:
        return normalizer == _LLAMA_NORMALIZER
    scheme = pre_tokenizer.get('prepend_scheme')
    metaspace = {
        'type': 'Metaspace',
        'replacement': SPACE,
        'prepend_scheme': scheme,
        'split': False,
    }
    return normalizer is None and pre_tokenizer == metaspace and scheme in _METASPACE_SCHEMES


class SentencePieceSeams(Seams):
    """A Llama-style SentencePiece tokenizer runs BPE over all the text between added tokens, in
    which spaces are '▁' (the legacy normaliser and the Metaspace pre-tokenizer alike: they
    differ only at the start of such a text, which a cut inside a prompt never reaches). A merge
    joins two adjacent tokens into a vocabulary entry, so where no entry holds '▁' after another
    character, no merge ever crosses a point where '▁' follows another character; and a
    character outside the vocabulary (spelled in byte-fallback ids) is in no merge when no merge
    takes a byte piece, so no merge crosses its edges. The tokens on each side of such a point
    are those of its side alone, whatever the other side holds. Decoding ids joins their pieces
    ('▁' as a space, byte ids as their character; one leading space stripped), and spaces as '▁'
    give the same pieces back."""

    def __init__(
        self, backend: Any, opens: bytes, closes: bytes, spelled: bytes, added: dict[int, str]
    ) -> None:
        super().__init__(added)
        self.model = backend.model
        self.opens = opens  # per id: 1 where its piece begins with '▁' (no added token)
        self.closes = closes  # per id: 1 where its piece ends in another character
        self.spelled = spelled  # per id: 1 for a byte-fallback piece ('<0x0A>')

    @classmethod
    def of(cls, backend: Any) -> Optional[SentencePieceSeams]:
        """The counter for a backend of this family (checked as loaded), else None."""
        if backend.model.ignore_merges or not _is_sentencepiece_pipeline(
            _spec(backend.normalizer), _spec(backend.pre_tokenizer), _spec(backend.decoder)
        ):
            return None
        model = json.loads(backend.to_str())['model']
        vocab: dict[str, int] = model.get('vocab') or {}
        merged = (m.split(' ') if isinstance(m, str) else m for m in model.get('merges') or [])
        added = _added(backend)
        if (
            any(_space_after_other(piece) for piece in vocab)
            or any(_BYTE_PIECE.fullmatch(part) for pair in merged for part in pair)
            or any(_spells_split_point(text, vocab) for text in added.values())
        ):
            return None
        size = 1 + max([*vocab.values(), *added])
        opens, closes, spelled = bytearray(size), bytearray(size), bytearray(size)
        for piece, index in vocab.items():
            if index not in added and piece:
                opens[index] = piece[0] == SPACE
                closes[index] = piece[-1] != SPACE
                spelled[index] = bool(_BYTE_PIECE.fullmatch(piece))
        return cls(backend, bytes(opens), bytes(closes), bytes(spelled), added)

    def split_point(self, ids: list[int], lo: int, hi: int, last: bool = False) -> Optional[int]:
        points = range(hi - 1, lo, -1) if last else range(lo + 1, hi)
        return next((k for k in points if self._splits(ids, k)), None)

    def seam_size(self, seam: str, first: int) -> int:
        seam = seam.replace(' ', SPACE)
        if self.opens[first]:
            seam = SPACE + seam  # the leading '▁' that decoding strips
        return len(self.model.tokenize(seam))

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


def _spells_split_point(text: str, vocab: dict[str, int]) -> bool:
    """Whether an added token's text holds a space or '▁', or a character spelled in byte ids:
    a match of it could cross a split point."""
    return any(char in ' ' + SPACE or char not in vocab for char in text)
