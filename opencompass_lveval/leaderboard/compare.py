"""Paired comparison of two board rows: is model A better than model B, cell by cell?

Where both rows were evaluated on the same records (the same data fingerprint, and every detail
naming the same records of that data: ``example_abbr``, whatever ``test_range`` took them, none
twice), records are paired by that name and both rows' records resampled together (one counts
matrix, ``intervals``); the interval of the difference of the means says whether it excludes
zero. Per-record scores are from 0 to 100 (``report.results.check_result`` refuses the file
otherwise); where a result's own score is not the mean of its per-record scores, the cell says
so (``notes``) and compares the per-record scores. Averages a benchmark ranks by (LV-Eval's
Overall at a level) pool the cells' paired differences, each dataset resampled within itself.
Cells that are not paired are refused, with the reason: a difference between different records
would be read as a difference between models. A paired cell gets no verdict where the claim would
outrun the evidence: fewer than ``MIN_RECORDS`` records (the percentile bootstrap's coverage falls
well below 95% on small samples), or an interval of zero width (every resample gives the same
difference, as when both models score every record alike).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..intervals import RESAMPLES, SEED, Interval, bootstrap_means, interval, pooled
from .board import Row

HEADER = ['benchmark', 'item', 'size', 'records', 'A', 'B', 'A - B', 'low', 'high', 'verdict']
MIN_RECORDS = 30
# How far a result's score may be from the mean of its per-record scores: half the last place of
# the two decimals evaluators round to, and float noise.
ROUNDING = 0.005 + 1e-6


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
    notes: list[str] = field(default_factory=list)  # a side's score is not its records' mean

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
    """Why two results of one cell cannot be paired, or None when they can: both on the same
    records of the same data, each named once."""
    if a is None or b is None:
        return f'refused: no result in {"A" if a is None else "B"}'
    if not a.scores or not b.scores:
        return f'refused: no per-record scores in {"A" if not a.scores else "B"} (details)'
    prints = (a.provenance.get('data_fingerprint'), b.provenance.get('data_fingerprint'))
    if None in prints:
        return 'refused: a result records no data fingerprint, so its records are unknown'
    if prints[0] != prints[1]:
        return f'refused: different records (data fingerprints {prints[0]} and {prints[1]})'
    for side, result in (('A', a), ('B', b)):
        if result.record_ids is None:
            return (
                f'refused: the details of {side} do not name their records (example_abbr), so '
                'they cannot be paired record by record'
            )
        name, times = Counter(result.record_ids).most_common(1)[0]
        if times > 1:
            return f'refused: record {name} is in the details of {side} {times} times'
    common = len(set(a.record_ids) & set(b.record_ids))
    if common != len(a.record_ids) or common != len(b.record_ids):
        return (
            f'refused: other records of the same data ({len(a.record_ids)} in A, '
            f'{len(b.record_ids)} in B, {common} in common: another test_range?)'
        )
    return None


def paired_scores(a, b) -> np.ndarray:
    """(2, records): A's per-record scores and B's of the same records, in A's order."""
    by_name = dict(zip(b.record_ids, b.scores))
    return np.array([a.scores, [by_name[name] for name in a.record_ids]], dtype=float)


def score_notes(metric: str, values: list, pair) -> list[str]:
    """A line per side whose result's own ``metric`` is not the mean of its per-record scores."""
    notes = []
    for side, value, result in zip('AB', values, pair):
        mean = float(np.mean(result.scores))
        if value is not None and abs(value - mean) > ROUNDING:
            notes.append(
                f'{side}: {result.path}: {metric} {value:g} is not the mean of its '
                f'{len(result.scores)} per-record scores ({mean:.2f}); compared on the records'
            )
    return notes


def compare_rows(
    row_a: Row, row_b: Row, resamples: int = RESAMPLES, seed: int = SEED
) -> list[Comparison]:
    """Every cell either row has, then each benchmark's pooled averages (Overall by level)."""
    from .. import benchmarks

    found = []
    for benchmark in benchmarks.BENCHMARKS:
        records_a = row_a.records.get(benchmark.name, {})
        records_b = row_b.records.get(benchmark.name, {})
        cells = set(records_a) | set(records_b)
        order = {size: n for n, size in enumerate(benchmark.level_order(c[1] for c in cells))}
        cells = sorted(cells, key=lambda c: (c[0], order[c[1]]))
        differences = {}
        for cell in cells:
            values = [
                row.results.get(benchmark.name, {}).get(cell, {}).get(benchmark.interval_metric)
                for row in (row_a, row_b)
            ]
            pair = records_a.get(cell), records_b.get(cell)
            compared = _compare_cell(
                benchmark.name, cell, pair, values, differences, resamples, seed
            )
            if compared.compared:
                compared.notes = score_notes(benchmark.interval_metric, values, pair)
            if compared.notes:
                sides = ' and '.join(note[0] for note in compared.notes)
                compared.verdict += (
                    f'; {sides}: {benchmark.interval_metric} is not the mean of the records'
                )
            found.append(compared)
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
    scores = paired_scores(a, b)
    means = bootstrap_means(scores, resamples, seed, (benchmark, *cell))
    differences[cell] = means[0] - means[1]
    bounds = interval(differences[cell])
    difference = float(np.mean(scores[0]) - np.mean(scores[1]))
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
