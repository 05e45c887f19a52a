"""Intervals for a full leaderboard: 15 models x 55 LV-Eval subsets x ~160 records, 1,000
resamples per cell, the stratified Overall per level and the average; prints the time (best of
3). The issue's budget: under 2 s on 2 cores.

    python bench/bench_intervals.py
"""

from __future__ import annotations

import time

import numpy as np

from opencompass_lveval.lveval.tasks import LEVELS, TASKS
from opencompass_lveval.report.intervals import bootstrap_cells, interval, pooled

MODELS = 15


def board_cells(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    cells = {}
    for task in TASKS:
        for level in LEVELS:
            records = int(rng.integers(99, 201))  # 99 to 200 records per subset, ~160 on average
            cells['lveval', task.name, level] = {
                model: 100.0 * (rng.random(records) < rng.random()) for model in range(MODELS)
            }
    return cells


def all_intervals(cells: dict) -> int:
    samples = bootstrap_cells(cells)
    found = 0
    for model in range(MODELS):
        for by_model in samples.values():
            found += interval(by_model[model]) is not None
        levels = [pooled(samples['lveval', t.name, lv][model] for t in TASKS) for lv in LEVELS]
        found += sum(interval(d) is not None for d in levels)
        found += interval(pooled(levels)) is not None
    return found


def main() -> None:
    cells = board_cells()
    records = sum(len(s) for by_model in cells.values() for s in by_model.values())
    times = []
    for _ in range(3):
        start = time.perf_counter()
        count = all_intervals(cells)
        times.append(time.perf_counter() - start)
    print(
        f'{count} intervals ({MODELS} models x {len(cells)} subsets, {records:,} record scores, '
        f'1,000 resamples): best of 3 {min(times):.2f} s'
    )


if __name__ == '__main__':
    main()
