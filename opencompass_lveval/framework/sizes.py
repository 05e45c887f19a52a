"""Length levels and settings as sizes: one parser for ``16k``, ``1000k``, ``1m``.

LV-Eval levels count words (English) or characters (Chinese), Ada-LEval settings count tokens;
both are named by a positive whole number of thousands (``k``) or millions (``m``), decimal as in
the papers (``16k`` is 16,000). Names stay as written; only their order and size come from here.
Digits are ASCII only: ``1６k`` (a full-width 6, which ``int`` and ``\\d`` accept) is no size, so
``cmrc_mixup_1６k.jsonl`` is no subset file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SIZE = re.compile(r'([1-9][0-9]*)([km])')
_UNITS = {'k': 1_000, 'm': 1_000_000}


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
