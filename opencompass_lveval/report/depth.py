"""Depth maps: the score by where the answer sits in the context (rows) and length (columns),
the picture needle tests are read by. Pure functions; the benchmarks say which datasets get one
and where each record's answer is (``Benchmark.record_depths``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

DEPTH_BINS = 10
MAX_POSITIONS = 20  # distinct positions a map shows as rows of their own


@dataclass
class DepthMap:
    """One model's score (%) by depth bin (rows) and size (columns), with the records behind each
    cell; ``placed`` of ``records`` had their answer found in the context."""

    stem: str  # file name of its plot (with the model's name): what the map shows
    dataset: str
    rows: list[str]
    columns: list[str]
    values: list[list[Optional[float]]]
    counts: list[list[int]]
    placed: int
    records: int
    axis: str = 'answer depth (% of context)'
    size_axis: str = 'size'  # what the columns are: the benchmark's levels, in its words
    metric: str = 'score'  # what the values are the mean of


def first_depth(context: str, answer: str) -> Optional[float]:
    """Where ``answer`` first occurs in ``context``, as a fraction of the context's length."""
    at = context.find(answer) if answer and context else -1
    return None if at < 0 else at / len(context)


def depth_labels(bins: int = DEPTH_BINS) -> list[str]:
    return [f'{100 * b // bins}-{100 * (b + 1) // bins}%' for b in range(bins)]


def position_label(position: float) -> str:
    """``0.5`` -> ``50%``; ``0.125`` -> ``12.5%``."""
    return f'{round(100 * position, 1):g}%'


Bins = Union[int, Sequence[float], None]


def depth_rows(bins: Bins, depths) -> tuple[list[str], Callable[[np.ndarray], np.ndarray]]:
    """The rows of a map and the row of each placed depth. ``bins`` is a number of equal slices,
    the positions answers are placed at (a row each; a depth goes to the nearest, the earlier on
    a tie), or None: the distinct depths of the data (to 0.1%), tenths where over
    ``MAX_POSITIONS``."""
    positions = bins if bins is not None and not isinstance(bins, int) else None
    if bins is None:
        found = sorted({round(float(d), 3) for d in depths})
        positions = found if len(found) <= MAX_POSITIONS else None
    if positions is None:
        slices = bins if isinstance(bins, int) else DEPTH_BINS
        return depth_labels(slices), lambda d: np.minimum((d * slices).astype(int), slices - 1)
    at = np.asarray(sorted(positions), dtype=float)
    return [position_label(p) for p in at], lambda d: np.abs(d[:, None] - at).argmin(axis=1)


def depth_column(
    scores: Sequence[float], depths: Sequence[Optional[float]], bins: Bins = DEPTH_BINS, rows=None
) -> tuple[list[Optional[float]], list[int]]:
    """Mean score and record count per row of one column (``depth_rows``; ``rows`` as it gives
    them, else from ``bins`` and these depths); records without a depth are left out."""
    depth = np.array([np.nan if d is None else d for d in depths], dtype=float)
    placed = ~np.isnan(depth)
    labels, row_of = rows or depth_rows(bins, depth[placed])
    found = row_of(depth[placed]).astype(int)
    counts = np.bincount(found, minlength=len(labels))
    weights = np.asarray(scores, dtype=float)[placed]
    sums = np.bincount(found, weights=weights, minlength=len(labels))
    means = [float(s / c) if c else None for s, c in zip(sums, counts)]
    return means, counts.tolist()


def depth_map(
    stem: str,
    dataset: str,
    columns: dict[str, tuple[Sequence[float], Sequence[Optional[float]]]],
    bins: Bins = DEPTH_BINS,
    axis: str = DepthMap.axis,
    size_axis: str = DepthMap.size_axis,
    metric: str = DepthMap.metric,
) -> Optional[DepthMap]:
    """The map of one dataset from column -> (per-record scores, per-record depths); None when no
    record was placed. Every column has the same rows (``depth_rows`` over all its depths)."""
    every = [d for s, found in columns.values() if len(s) for d in found if d is not None]
    if not every:
        return None
    rows = depth_rows(bins, every)
    found = {name: depth_column(s, d, rows=rows) for name, (s, d) in columns.items() if len(s)}
    names = list(found)
    return DepthMap(
        stem,
        dataset,
        rows[0],
        names,
        [[found[n][0][b] for n in names] for b in range(len(rows[0]))],
        [[found[n][1][b] for n in names] for b in range(len(rows[0]))],
        len(every),
        sum(len(s) for s, _ in columns.values()),
        axis,
        size_axis,
        metric,
    )


def as_table(found: DepthMap, label: str, model: str):
    """The map as a report table: depth bins by size, with the records behind each cell; titled
    with the model's label, its file named by the model."""
    from ..tables import Table

    header = [found.axis] + [f'{c} ({what})' for c in found.columns for what in (found.metric, 'n')]
    rows = [
        [label] + [x for v, n in zip(values, counts) for x in (v, n)]
        for label, values, counts in zip(found.rows, found.values, found.counts)
    ]
    shown = found.dataset if found.metric == 'score' else f'{found.dataset} {found.metric}'
    title = f'{shown} by {found.axis}, {label} ({found.placed} of {found.records} placed)'
    return Table(title, f'{found.stem}_{found.dataset}_{model}', header, rows)
