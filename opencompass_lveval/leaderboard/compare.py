"""Paired comparison of two board rows: is model A better than model B, cell by cell?

Where both rows were evaluated on the same records (the same data fingerprint and record count),
both rows' records are resampled together (one counts matrix, ``intervals``) and the interval of
the difference of the means says whether it excludes zero. Averages a benchmark ranks by (LV-Eval's
Overall at a level) pool the cells' paired differences, each dataset resampled within itself.
Cells that are not paired are refused, with the reason: a difference between different records
would be read as a difference between models. A paired cell gets no verdict where the claim would
outrun the evidence: fewer than ``MIN_RECORDS`` records (the percentile bootstrap's coverage falls
well below 95% on small samples), or an interval of zero width (every resample gives the same
difference, as when both models score every record alike).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..intervals import RESAMPLES, SEED, Interval, bootstrap_means, interval, pooled
from .board import Row

HEADER = ['benchmark', 'item', 'size', 'records', 'A', 'B', 'A - B', 'low', 'high', 'verdict']
MIN_RECORDS = 30


@dataclass
class Comparison:
    benchmark: str
    item: str
    size: str
    records: Optional[int]
    a: Optional[float]
    b: Optional[float]
    difference: Optional[float]
    bounds: Optional[Interval]
    verdict: str

    @property
    def cells(self) -> list:
        low, high = self.bounds or (None, None)
        return [
            self.benchmark, self.item, self.size, self.records,
            self.a, self.b, self.difference, low, high,
        ]  # fmt: skip

    @property
    def compared(self) -> bool:
        return self.bounds is not None


def _verdict(bounds: Interval, records: int) -> str:
    """``records``: the cell's, or the fewest of a pooled cell's members (each resampled alone)."""
    if records < MIN_RECORDS:
        return f'no verdict: {records} records, too few (at least {MIN_RECORDS})'
    if bounds.low == bounds.high:
        return 'no verdict: the interval has zero width (every resample gives the same difference)'
    if bounds.low > 0:
        return 'A better (interval excludes 0)'
    if bounds.high < 0:
        return 'B better (interval excludes 0)'
    return 'no clear difference (interval includes 0)'


def refusal(a, b) -> Optional[str]:
    """Why two results of one cell cannot be paired, or None when they can."""
    if a is None or b is None:
        return f'refused: no result in {"A" if a is None else "B"}'
    if not a.scores or not b.scores:
        return f'refused: no per-record scores in {"A" if not a.scores else "B"} (details)'
    prints = (a.provenance.get('data_fingerprint'), b.provenance.get('data_fingerprint'))
    if None in prints:
        return 'refused: a result records no data fingerprint, so its records are unknown'
    if prints[0] != prints[1]:
        return f'refused: different records (data fingerprints {prints[0]} and {prints[1]})'
    if len(a.scores) != len(b.scores):
        return f'refused: {len(a.scores)} and {len(b.scores)} records'
    return None


def compare_rows(
    row_a: Row, row_b: Row, resamples: int = RESAMPLES, seed: int = SEED
) -> list[Comparison]:
    """Every cell either row has, then each benchmark's pooled averages (Overall by level)."""
    from .. import benchmarks
    from ..sizes import parse_size

    found = []
    for benchmark in benchmarks.BENCHMARKS:
        records_a = row_a.records.get(benchmark.name, {})
        records_b = row_b.records.get(benchmark.name, {})
        cells = sorted(set(records_a) | set(records_b), key=lambda c: (c[0], parse_size(c[1])))
        differences = {}
        for cell in cells:
            values = [
                row.results.get(benchmark.name, {}).get(cell, {}).get(benchmark.interval_metric)
                for row in (row_a, row_b)
            ]
            pair = records_a.get(cell), records_b.get(cell)
            found.append(
                _compare_cell(benchmark.name, cell, pair, values, differences, resamples, seed)
            )
        for item, size, members in benchmark.pooled_cells(cells):
            found.append(
                _compare_pooled(
                    benchmark.name, item, size, members, (records_a, records_b), differences
                )
            )
    return found


def _compare_cell(benchmark, cell, pair, values, differences, resamples, seed) -> Comparison:
    """One dataset x size cell; a paired cell's resampled differences go into ``differences``."""
    a, b = pair
    reason = refusal(a, b)
    if reason:
        records = None if a is None else len(a.scores)
        return Comparison(benchmark, *cell, records, *values, None, None, reason)
    means = bootstrap_means(np.stack([a.scores, b.scores]), resamples, seed, (benchmark, *cell))
    differences[cell] = means[0] - means[1]
    bounds = interval(differences[cell])
    difference = float(np.mean(a.scores) - np.mean(b.scores))
    records = len(a.scores)
    return Comparison(
        benchmark, *cell, records, *values, difference, bounds, _verdict(bounds, records)
    )


def _compare_pooled(benchmark, item, size, members, records, differences) -> Comparison:
    """An average over cells (LV-Eval's Overall at a level), each member resampled alone."""
    distribution = pooled(differences.get(m) for m in members)
    if distribution is None:
        unpaired = sum(m not in differences for m in members)
        verdict = f'refused: {unpaired} of {len(members)} members not paired'
        return Comparison(benchmark, item, size, None, None, None, None, None, verdict)
    mean_a, mean_b = (
        float(np.mean([np.mean(side[m].scores) for m in members])) for side in records
    )
    bounds = interval(distribution)
    count = sum(len(records[0][m].scores) for m in members)
    fewest = min(len(records[0][m].scores) for m in members)
    return Comparison(
        benchmark, item, size, count, mean_a, mean_b, mean_a - mean_b, bounds,
        _verdict(bounds, fewest),
    )  # fmt: skip
