"""MRCR's tables, as pure functions of scored samples: the mean score per (needles, bin), and
Google DeepMind's two reporting cells.

A scored sample is (needles, bin, score): the bin (low, high) of the sample's tokens for OpenAI
MRCR (``Version.bin_of``), or the bucket of the MRCR v2 file it came from (``upto_128K``'s rows
carry the whole span (4096, 131072)). Means are of the per-sample scores, in [0, 1] as the graders
give them. GDM reports 8 needles: ``upto_128K``, every sample of the buckets up to 131072 tokens
together (the cumulative file, or the five bucket files, one mean over all their samples), and
``at_1M``, the bucket (524288, 1048576] alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from .tasks import REPORTED_CELLS, REPORTED_NEEDLES

Bin = Optional[tuple[int, int]]


@dataclass(frozen=True)
class Cell:
    """The samples of one table cell: how many, and their mean score."""

    count: int
    mean: float


def _cell(scores: list[float]) -> Optional[Cell]:
    return Cell(len(scores), sum(scores) / len(scores)) if scores else None


def bin_table(scored: Iterable[tuple[int, Bin, float]]) -> dict[tuple[int, Bin], Cell]:
    """(needles, bin) -> Cell, in needles then bin order (samples outside every bin last)."""
    found: dict[tuple[int, Bin], list[float]] = {}
    for needles, where, score in scored:
        found.setdefault((needles, where), []).append(score)
    order = sorted(found, key=lambda key: (key[0], key[1] is None, key[1] or (0, 0)))
    return {key: _cell(found[key]) for key in order}


def reporting_cells(scored: Iterable[tuple[int, Bin, float]]) -> dict[str, Optional[Cell]]:
    """GDM's reported cells, ``upto_128K`` and ``at_1M`` (8 needles; None where no sample)."""
    cumulative_low, cumulative_high = REPORTED_CELLS['upto_128K']
    upto, at = [], []
    for needles, where, score in scored:
        if needles != REPORTED_NEEDLES or where is None:
            continue
        if cumulative_low <= where[0] and where[1] <= cumulative_high:
            upto.append(score)
        if where == REPORTED_CELLS['at_1M']:
            at.append(score)
    return {'upto_128K': _cell(upto), 'at_1M': _cell(at)}


def bin_label(where: Bin) -> str:
    return f'{where[0]}-{where[1]}' if where else 'outside the bins'


def table_lines(table: dict[tuple[int, Bin], Cell]) -> list[str]:
    """The table as text: one line per cell, the mean in percent to two decimals."""
    lines = ['needles  bin                    samples  score (%)']
    for (needles, where), cell in table.items():
        lines.append(
            f'{needles:>7}  {bin_label(where):<21}  {cell.count:>7}  {100 * cell.mean:9.2f}'
        )
    return lines
