"""Length levels and settings as sizes: one parser for ``16k``, ``1000k``, ``1m``.

LV-Eval levels count words (English) or characters (Chinese), Ada-LEval settings count tokens;
both are named by a positive whole number of thousands (``k``) or millions (``m``), decimal as in
the papers (``16k`` is 16,000). Names stay as written; only their order and size come from here. A declared benchmark's levels may
be any names (``75`` pairs): ``level_key`` orders names where no benchmark's own order is at hand.
Digits are ASCII only: ``1６k`` (a full-width 6, which ``int`` and ``\\d`` accept) is no size, so
``cmrc_mixup_1６k.jsonl`` is no subset file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Optional

_SIZE = re.compile(r'([1-9][0-9]*)([km])')
_UNITS = {'k': 1_000, 'm': 1_000_000}
_WHOLE = re.compile(r'[1-9][0-9]*')


def parse_size(name: str) -> int:
    """``'16k'`` -> 16000, ``'1m'`` -> 1000000; a ValueError that shows the form otherwise."""
    match = _SIZE.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f'{name!r} is not a size: write a whole number of thousands or millions, '
            'like 16k, 512k, 1000k or 1m'
        )
    return int(match[1]) * _UNITS[match[2]]


def is_size(name: str) -> bool:
    return isinstance(name, str) and _SIZE.fullmatch(name) is not None


def by_size(names: Iterable[str]) -> list[str]:
    """The distinct names, smallest first (``16k`` before ``128k`` before ``1m``)."""
    return sorted(set(names), key=lambda name: (parse_size(name), name))


def parse_sizes(text: str) -> list[str]:
    """A comma-separated list such as ``16k,512k,1m``, each name checked, order kept."""
    names = [part.strip() for part in text.split(',') if part.strip()]
    for name in names:
        parse_size(name)
    if not names:
        raise ValueError('give at least one size, e.g. 16k,32k')
    return names


def measure(name: str) -> Optional[int]:
    """What a level name says of its size, where it says any: ``16k`` 16000, ``75`` 75."""
    if is_size(name):
        return parse_size(name)
    return int(name) if isinstance(name, str) and _WHOLE.fullmatch(name) else None


def is_whole(name: str) -> bool:
    """A level named by a plain whole number (``75`` pairs)."""
    return isinstance(name, str) and _WHOLE.fullmatch(name) is not None


def level_key(name: str) -> tuple:
    """A sort key for level names of any benchmark where its own order is not at hand: sizes
    (``16k``) by size, then whole numbers by value, then other names alphabetically."""
    found = measure(name)
    return (0 if is_size(name) else 1 if found is not None else 2, found or 0, name)
