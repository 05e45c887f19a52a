"""The argument checks every subcommand and build kind shares: argparse ``type=`` functions that
refuse a bad value with a message naming the value and the fix, before any work starts.

``lveval`` prints the message as one line, ``error: argument --count: ...``, and exits 2. The
rules:

- counts, limits and scales are whole numbers from 1, in ASCII digits (``--limit 0`` no longer
  means every record, ``--count 0`` no longer writes an empty file, ``--scale 0`` no longer
  divides by zero);
- sizes (levels, settings) are ``sizes.parse_size`` names: ASCII digits then ``k`` or ``m``;
- names that become part of a file name (``--dataset``) are plain file-name parts: letters,
  digits, ``_``, ``-`` and ``.``, not starting with ``.``, so nothing is written outside ``--out``.

The checks themselves raise ValueError and are usable by the library too; ``argument_type``
turns one into an argparse type.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TypeVar

T = TypeVar('T')

_WHOLE = re.compile(r'[0-9]+')
_NAME_PART = re.compile(r'[A-Za-z0-9_-][A-Za-z0-9_.-]*')


def whole_number(text: str) -> int:
    """A whole number from 1, written in ASCII digits (``int`` also takes ``'１'`` and ``'-3'``)."""
    text = text.strip() if isinstance(text, str) else text
    if not (isinstance(text, str) and _WHOLE.fullmatch(text)) or int(text) < 1:
        raise ValueError(f'{text!r} is not a whole number from 1; give one such as 1, 10 or 200')
    return int(text)


def name_part(text: str) -> str:
    """A plain file-name part: letters, digits, ``_``, ``-``, ``.`` (not leading)."""
    if not (isinstance(text, str) and _NAME_PART.fullmatch(text)):
        raise ValueError(
            f'{text!r} is not a plain name: use letters, digits, "_", "-" and "." (not first), '
            'no "/" or "..", e.g. my_qa'
        )
    return text


def size(text: str) -> str:
    """One size (``16k``, ``1m``), as written."""
    from ..framework.sizes import parse_size

    parse_size(text)
    return text


def sizes(text: str) -> list[str]:
    """A comma-separated list of sizes, order kept."""
    from ..framework.sizes import parse_sizes

    return parse_sizes(text)


def argument_type(check: Callable[[str], T], name: str) -> Callable[[str], T]:
    """``check`` as an argparse ``type=``: its ValueError becomes argparse's error."""

    def parse(text: str) -> T:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    parse.__name__ = name  # argparse names the type in its fallback message
    return parse


COUNT = argument_type(whole_number, 'count')
SCALE = argument_type(whole_number, 'scale')
SIZE = argument_type(size, 'size')
SIZES = argument_type(sizes, 'sizes')
NAME_PART = argument_type(name_part, 'name')
