"""The MRCR table: both versions, their needle counts, token bins, file names and grader, and
Google DeepMind's reporting cells.

- ``openai``: OpenAI MRCR (the Hugging Face dataset openai/mrcr). 2, 4 and 8 needles; 100 samples
  in each of eight bins by the tokens of prompt and answer (tiktoken ``o200k_base``, the message
  contents counted), [4096, 8192] then (8192, 16384] ... (524288, 1048576]: the first bin is
  closed at both ends, the others open below. Files ``{n}needle/{n}needle_{k}.parquet`` (the
  December 2025 revision) or ``{n}needle.parquet`` (the April 2025 release).
- ``v2``: Google DeepMind MRCR v2 (eval_hub ``mrcr_v2/download.sh``). 2, 4 and 8 needles; CSV files
  ``mrcr_v2p1_{n}needle_{group}_dynamic_fewshot_text_style_fast.csv``, one per bucket
  ``in_({low},{high})`` (tokens of Gemini's tokenizer, low < n <= high) and one cumulative
  ``upto_128K`` (every bucket to 131072). GDM reports 8 needles ``upto_128K`` (the cumulative set)
  and ``at_1M`` (the bucket (524288, 1048576] alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from .metrics import gdm_mrcr_v2_metric, openai_mrcr_grade

NEEDLES = (2, 4, 8)
# (low, high] token buckets, powers of two: 4k-8k ... 4m-8m (MRCR v2's eleven; OpenAI's first 8).
POWER_BINS = tuple((4096 * 2**i, 4096 * 2 ** (i + 1)) for i in range(11))
# download.sh's groups: small (to 128K, the cumulative file first), medium (to 1M), large.
V2_GROUPS = {
    'small': ('upto_128K',) + tuple(f'in_({low},{high})' for low, high in POWER_BINS[:5]),
    'medium': tuple(f'in_({low},{high})' for low, high in POWER_BINS[5:8]),
    'large': tuple(f'in_({low},{high})' for low, high in POWER_BINS[8:]),
}
CUMULATIVE = 'upto_128K'
CUMULATIVE_SPAN = (4096, 131072)
REPORTED_NEEDLES = 8
# GDM's reported cells: the cumulative set to 128K and the 1M bucket alone.
REPORTED_CELLS = {'upto_128K': CUMULATIVE_SPAN, 'at_1M': (524288, 1048576)}


@dataclass(frozen=True)
class Version:
    """One MRCR version and everything particular to it."""

    name: str  # 'openai' | 'v2'
    title: str
    bins: tuple[tuple[int, int], ...]
    first_bin_closed: bool  # the first bin includes its lower edge
    fields: tuple[str, ...]  # a scoring line's fields, in the grader's argument order
    grade: Callable[..., float]
    needles: tuple[int, ...] = NEEDLES

    def bin_of(self, tokens: int) -> Optional[tuple[int, int]]:
        """The bin holding ``tokens``, or None outside every bin."""
        for number, (low, high) in enumerate(self.bins):
            if low < tokens <= high or (number == 0 and self.first_bin_closed and tokens == low):
                return (low, high)
        return None


OPENAI = Version(
    'openai',
    'OpenAI MRCR',
    POWER_BINS[:8],
    True,
    ('response', 'answer', 'random_string_to_prepend'),
    openai_mrcr_grade,
)
V2 = Version('v2', 'MRCR v2', POWER_BINS, False, ('prediction', 'target'), gdm_mrcr_v2_metric)
VERSIONS = {version.name: version for version in (OPENAI, V2)}


def openai_file_needles(name: str) -> Optional[int]:
    """The needle count of an openai/mrcr parquet file name, or None for another file."""
    found = re.fullmatch(r'([248])needle(?:_\d+)?\.parquet', name)
    return int(found[1]) if found else None


def v2_file_name(needles: int, group: str) -> str:
    """download.sh's name of one MRCR v2 file (``group``: ``upto_128K`` or ``in_(low,high)``)."""
    return f'mrcr_v2p1_{needles}needle_{group}_dynamic_fewshot_text_style_fast.csv'


def v2_file_cell(name: str) -> Optional[tuple[int, tuple[int, int]]]:
    """(needles, (low, high)) of an MRCR v2 file name (the cumulative file: its whole span), or
    None for another file."""
    found = re.fullmatch(
        r'mrcr_v2p1_([248])needle_(?:(upto_128K)|in_\((\d+),(\d+)\))'
        r'_dynamic_fewshot_text_style_fast\.csv',
        name,
    )
    if not found:
        return None
    span = CUMULATIVE_SPAN if found[2] else (int(found[3]), int(found[4]))
    return int(found[1]), span
