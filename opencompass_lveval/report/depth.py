"""Depth maps: the score by where the answer sits in the context (rows) and length (columns),
the picture needle tests are read by. Pure functions; the benchmarks say which datasets get one
and where each record's answer is (``Benchmark.record_depths``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

DEPTH_BINS = 10


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


def first_depth(context: str, answer: str) -> Optional[float]:
    """Where ``answer`` first occurs in ``context``, as a fraction of the context's length."""
    at = context.find(answer) if answer and context else -1
    return None if at < 0 else at / len(context)


def depth_labels(bins: int = DEPTH_BINS) -> list[str]:
    return [f'{100 * b // bins}-{100 * (b + 1) // bins}%' for b in range(bins)]


def depth_column(
    scores: Sequence[float], depths: Sequence[Optional[float]], bins: int = DEPTH_BINS
) -> tuple[list[Optional[float]], list[int]]:
    """Mean score and record count per depth bin (``bins`` equal slices of the context) of one
    column; records without a depth are left out."""
    depth = np.array([np.nan if d is None else d for d in depths], dtype=float)
    placed = ~np.isnan(depth)
    found = np.minimum((depth[placed] * bins).astype(int), bins - 1)
    counts = np.bincount(found, minlength=bins)
    sums = np.bincount(found, weights=np.asarray(scores, dtype=float)[placed], minlength=bins)
    means = [float(s / c) if c else None for s, c in zip(sums, counts)]
    return means, counts.tolist()


def depth_map(
    stem: str,
    dataset: str,
    columns: dict[str, tuple[Sequence[float], Sequence[Optional[float]]]],
    bins: int = DEPTH_BINS,
    axis: str = DepthMap.axis,
) -> Optional[DepthMap]:
    """The map of one dataset from column -> (per-record scores, per-record depths); None when no
    record was placed."""
    found = {name: depth_column(s, d, bins) for name, (s, d) in columns.items() if len(s)}
    placed = sum(sum(counts) for _, counts in found.values())
    if not placed:
        return None
    names = list(found)
    return DepthMap(
        stem,
        dataset,
        depth_labels(bins),
        names,
        [[found[n][0][b] for n in names] for b in range(bins)],
        [[found[n][1][b] for n in names] for b in range(bins)],
        placed,
        sum(len(s) for s, _ in columns.values()),
        axis,
    )


def as_table(found: DepthMap, label: str, model: str):
    """The map as a report table: depth bins by size, with the records behind each cell; titled
    with the model's label, its file named by the model."""
    from .tables import Table

    header = [found.axis] + [f'{c} ({what})' for c in found.columns for what in ('score', 'n')]
    rows = [
        [label] + [x for v, n in zip(values, counts) for x in (v, n)]
        for label, values, counts in zip(found.rows, found.values, found.counts)
    ]
    title = f'{found.dataset} by {found.axis}, {label} ({found.placed} of {found.records} placed)'
    return Table(title, f'{found.stem}_{found.dataset}_{model}', header, rows)
